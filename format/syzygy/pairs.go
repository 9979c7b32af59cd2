package syzygy

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync/atomic"
)

// A sub-table's values are compressed in two stages. Runs of values were
// replaced, pair by pair, by new symbols (so each symbol expands through a
// binary tree to one or more values), and the symbol stream was coded with
// a canonical Huffman code, cut into blocks of a fixed byte size. A sparse
// index maps every 2^idxBits-th position to a block and an offset in it;
// a table of block lengths (in values) walks from there to the right block.

// noChild marks a symbol that is a leaf (a value, not a pair).
const noChild = 0xfff

// pairsData is the decoder of one sub-table.
type pairsData struct {
	constant bool   // every position has the same value
	constVal uint16 // that value

	blockSize uint // log2 of a block's byte size
	idxBits   uint // log2 of the sparse index's stride
	minLen    int  // shortest code length
	base      []uint64
	offset    []uint16 // first symbol of each code length
	// Symbols: leaf value or children, and how many values each expands
	// to.
	left, right []uint16
	span        []uint32 // values the symbol expands to
	maxValue    uint16

	numIndex   uint64
	realBlocks uint32
	numBlocks  uint32
	index      []byte     // 6 bytes per sparse entry: block (le32), offset (le16)
	sizes      []uint16   // values in each block, less one
	lazy       *lazyIndex // instead of index and sizes, for large tables
	dataOff    int64      // file offset of block 0

	// sizes in bytes of the index, the size table and the data.
	indexBytes, sizesBytes, dataBytes uint64
}

// shortError says a header needs more bytes than were given.
type shortError struct{ need int }

func (e *shortError) Error() string { return fmt.Sprintf("header needs %d bytes", e.need) }

// parsePairs reads a sub-table's pairs header at hdr[0:] and returns the
// decoder and the header's length. tbSize is the sub-table's position
// count; wdl says whether a constant table's value is stored.
func parsePairs(hdr []byte, tbSize uint64, wdl bool) (*pairsData, int, error) {
	if len(hdr) < 2 {
		return nil, 0, &shortError{2}
	}
	flags := hdr[0]
	if flags&0x80 != 0 {
		d := &pairsData{constant: true}
		if wdl {
			d.constVal = uint16(hdr[1])
		}
		d.maxValue = d.constVal
		return d, 2, nil
	}
	if len(hdr) < 12 {
		return nil, 0, &shortError{12}
	}
	d := &pairsData{blockSize: uint(hdr[1]), idxBits: uint(hdr[2])}
	d.realBlocks = binary.LittleEndian.Uint32(hdr[4:])
	d.numBlocks = d.realBlocks + uint32(hdr[3])
	if d.numBlocks < d.realBlocks {
		return nil, 0, corruptf("block count overflows")
	}
	maxLen, minLen := int(hdr[8]), int(hdr[9])
	if minLen < 1 || maxLen < minLen || maxLen > 32 {
		return nil, 0, corruptf("code lengths %d..%d", minLen, maxLen)
	}
	if d.idxBits < 1 || d.idxBits > 40 || d.blockSize > 24 {
		return nil, 0, corruptf("index stride 2^%d, block size 2^%d", d.idxBits, d.blockSize)
	}
	h := maxLen - minLen + 1
	if len(hdr) < 12+2*h {
		return nil, 0, &shortError{12 + 2*h}
	}
	d.minLen = minLen
	d.offset = make([]uint16, h)
	for i := range d.offset {
		d.offset[i] = binary.LittleEndian.Uint16(hdr[10+2*i:])
	}
	numSyms := int(binary.LittleEndian.Uint16(hdr[10+2*h:]))
	if numSyms == 0 || numSyms > noChild {
		return nil, 0, corruptf("%d symbols", numSyms)
	}
	end := 12 + 2*h + 3*numSyms + numSyms&1
	if len(hdr) < end {
		return nil, 0, &shortError{end}
	}
	pat := hdr[12+2*h:]
	d.left = make([]uint16, numSyms)
	d.right = make([]uint16, numSyms)
	for s := range numSyms {
		w := pat[3*s:]
		d.left[s] = uint16(w[1]&0xf)<<8 | uint16(w[0])
		d.right[s] = uint16(w[2])<<4 | uint16(w[1]>>4)
	}
	if err := d.spans(); err != nil {
		return nil, 0, err
	}
	d.base = make([]uint64, h)
	for i := h - 2; i >= 0; i-- {
		d.base[i] = (d.base[i+1] + uint64(d.offset[i]) - uint64(d.offset[i+1])) / 2
	}
	for i := range d.base {
		d.base[i] <<= 64 - uint(minLen+i)
	}
	d.numIndex = (tbSize + 1<<d.idxBits - 1) >> d.idxBits
	d.indexBytes = 6 * d.numIndex
	d.sizesBytes = 2 * uint64(d.numBlocks)
	d.dataBytes = uint64(d.realBlocks) << d.blockSize
	return d, end, nil
}

// spans computes how many values each symbol expands to, refusing trees
// that loop or point at symbols that do not exist.
func (d *pairsData) spans() error {
	n := len(d.left)
	d.span = make([]uint32, n)
	state := make([]uint8, n) // 0 new, 1 on the stack, 2 done
	var stack []uint16
	for root := range n {
		if state[root] == 2 {
			continue
		}
		stack = append(stack[:0], uint16(root))
		for len(stack) > 0 {
			s := stack[len(stack)-1]
			if d.right[s] == noChild {
				d.span[s] = 1
				d.maxValue = max(d.maxValue, d.left[s])
				state[s] = 2
				stack = stack[:len(stack)-1]
				continue
			}
			l, r := d.left[s], d.right[s]
			if int(l) >= n || int(r) >= n {
				return corruptf("symbol %d refers to a missing symbol", s)
			}
			if state[s] == 0 {
				state[s] = 1
				for _, c := range [2]uint16{l, r} {
					switch state[c] {
					case 0:
						stack = append(stack, c)
					case 1:
						return corruptf("symbol tree loops at %d", c)
					}
				}
				continue
			}
			if state[l] != 2 || state[r] != 2 {
				return corruptf("symbol tree loops at %d", s)
			}
			sp := uint64(d.span[l]) + uint64(d.span[r])
			if sp > 1<<20 {
				return corruptf("symbol %d expands too far", s)
			}
			d.span[s] = uint32(sp)
			state[s] = 2
			stack = stack[:len(stack)-1]
		}
	}
	return nil
}

// locate finds the block holding position idx and idx's place in it.
func (d *pairsData) locate(ctx context.Context, idx uint64) (block uint32, lit int, err error) {
	main := idx >> d.idxBits
	if main >= d.numIndex {
		return 0, 0, corruptf("position %d past the index", idx)
	}
	block, start, err := d.entry(ctx, main)
	if err != nil {
		return 0, 0, err
	}
	l := int64(idx&(1<<d.idxBits-1)) - int64(1)<<(d.idxBits-1) + int64(start)
	if block >= d.numBlocks {
		return 0, 0, corruptf("index entry %d names block %d of %d", main, block, d.numBlocks)
	}
	for l < 0 {
		if block == 0 {
			return 0, 0, corruptf("index walks before the first block")
		}
		block--
		n, err := d.size(ctx, block)
		if err != nil {
			return 0, 0, err
		}
		l += int64(n) + 1
	}
	for {
		n, err := d.size(ctx, block)
		if err != nil {
			return 0, 0, err
		}
		if l <= int64(n) {
			break
		}
		l -= int64(n) + 1
		block++
		if block >= d.numBlocks {
			return 0, 0, corruptf("index walks past the last block")
		}
	}
	if block >= d.realBlocks {
		return 0, 0, corruptf("block %d past the data (%d blocks)", block, d.realBlocks)
	}
	return block, int(l), nil
}

// entry returns sparse index entry main: a block and a place in it.
func (d *pairsData) entry(ctx context.Context, main uint64) (uint32, uint16, error) {
	if d.lazy == nil {
		e := d.index[6*main : 6*main+6]
		return binary.LittleEndian.Uint32(e), binary.LittleEndian.Uint16(e[4:]), nil
	}
	e, err := d.lazy.bytes(ctx, d.lazy.indexOff, d.indexBytes, 6*main, 6, 0)
	if err != nil {
		return 0, 0, err
	}
	return binary.LittleEndian.Uint32(e), binary.LittleEndian.Uint16(e[4:]), nil
}

// size returns the number of values in block b, less one.
func (d *pairsData) size(ctx context.Context, b uint32) (uint16, error) {
	if d.lazy == nil {
		return d.sizes[b], nil
	}
	e, err := d.lazy.bytes(ctx, d.lazy.sizesOff, d.sizesBytes, 2*uint64(b), 2, 1)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint16(e), nil
}

// decodedBlock is one block's symbol stream: the symbols in order and, for
// each, how many values the block holds up to and including it.
type decodedBlock struct {
	syms []uint16
	ends []uint32

	// The sub-table remembers the block it read last (tableFile.last), so
	// a run of probes into one block skips the shared cache's lock; the
	// cache clears that memo when it evicts the block, which keeps every
	// decoded block inside the cache's budget.
	block   uint32
	memo    *atomic.Pointer[decodedBlock]
	evicted atomic.Bool
}

// MarkEvicted is called by the block cache when it drops b.
func (b *decodedBlock) MarkEvicted() {
	b.evicted.Store(true)
	if b.memo != nil {
		b.memo.CompareAndSwap(b, nil)
	}
}

// bytes is what the block costs in the cache.
func (b *decodedBlock) bytes() int64 { return int64(cap(b.syms))*2 + int64(cap(b.ends))*4 + 48 }

// decodeBlock decodes the compressed bytes of block b.
func (d *pairsData) decodeBlock(ctx context.Context, buf []byte, block uint32) (*decodedBlock, error) {
	n, err := d.size(ctx, block)
	if err != nil {
		return nil, err
	}
	want := uint64(n) + 1
	out := &decodedBlock{block: block}
	var code uint64 // the next bits, most significant first
	have := 0       // valid bits in code
	pos := 0        // next byte of buf to load
	used := 0       // bits consumed
	limit := 8 * len(buf)
	h := len(d.base)
	var total uint64
	for total < want {
		for have <= 56 {
			var b byte
			if pos < len(buf) {
				b = buf[pos]
			}
			pos++
			code |= uint64(b) << (56 - have)
			have += 8
		}
		i := 0
		for i < h-1 && code < d.base[i] {
			i++
		}
		l := d.minLen + i
		sym := uint64(d.offset[i]) + (code-d.base[i])>>(64-uint(l))
		if sym >= uint64(len(d.span)) {
			return nil, corruptf("block %d: code decodes to symbol %d of %d", block, sym, len(d.span))
		}
		used += l
		if used > limit {
			return nil, corruptf("block %d: codes run past the block", block)
		}
		code <<= uint(l)
		have -= l
		total += uint64(d.span[sym])
		out.syms = append(out.syms, uint16(sym))
		out.ends = append(out.ends, uint32(total))
	}
	// The last symbol may reach past the block's values (the compressor
	// pads a block with whatever pair came next); those are never read.
	return out, nil
}

// value returns the value at place lit of a decoded block.
func (d *pairsData) value(b *decodedBlock, lit int) uint16 {
	// The first symbol whose end lies past lit holds it.
	lo, hi := 0, len(b.ends)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if b.ends[mid] > uint32(lit) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	if lo == len(b.ends) {
		return 0 // not reached: locate keeps lit inside the block
	}
	sym := b.syms[lo]
	i := lo
	off := uint32(lit) - (b.ends[i] - d.span[sym])
	for d.right[sym] != noChild {
		l := d.left[sym]
		if off < d.span[l] {
			sym = l
		} else {
			off -= d.span[l]
			sym = d.right[sym]
		}
	}
	return d.left[sym]
}
