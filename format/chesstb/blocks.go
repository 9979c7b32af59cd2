package chesstb

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/tbfs/tbfs/format/blockcache"
	"io"
	"sync"
	"sync/atomic"

	"github.com/pierrec/lz4/v4"
	"github.com/tbfs/tbfs/format/chesstb/internal/lzma"
	"github.com/tbfs/tbfs/source"
)

// tableFile is one open table file: its header, and the way to its blocks.
type tableFile struct {
	id    uint64
	kind  Kind
	name  string // object name within its source
	obj   source.Object
	cfg   *indexConfig
	hdr   *header
	cache *blockcache.Cache
	// sums is the table's integrity manifest, nil when it has none.
	sums *manifest
	// gate holds the table's answers until its checksum is confirmed;
	// nil when there is nothing to wait for (a manifest checks each
	// block instead, or checks are off).
	gate *checksumGate
	// forget, set by the Tablebase, drops this file from its table slot
	// (and its decoded blocks from the cache) once a read finds the
	// object replaced, so the next probe opens the new version.
	forget func()
	// decoded is the second tier of decoded blocks, nil for none; keys
	// names this table's blocks there.
	decoded DecodedStore
	keys    decodedKeys
	// pool holds the buffers of decoded WDL blocks, shared by the
	// Tablebase's files.
	pool *blockPool
	// decodes counts what this kind's LZMA blocks decode (nil: nothing).
	decodes *decodeCounter
}

// checkChanged forgets the file when err says its object was replaced
// since it was opened: every later read of it would fail the same way.
func (t *tableFile) checkChanged(err error) {
	if err != nil && t.forget != nil && errors.Is(err, source.ErrChanged) {
		t.forget()
	}
}

// fileErr wraps err with the file name and block number (-1: none).
func (t *tableFile) fileErr(block int64, err error) error {
	return &FileError{File: t.name, Block: block, Err: err}
}

// readCompressed fetches the compressed bytes of block b of frame c and,
// when the table has an integrity manifest, checks them against it.
func (t *tableFile) readCompressed(ctx context.Context, c int, b uint64) ([]byte, error) {
	return t.readCompressedInto(ctx, c, b, nil)
}

// readCompressedInto is readCompressed into buf when it is large enough.
func (t *tableFile) readCompressedInto(ctx context.Context, c int, b uint64, buf []byte) ([]byte, error) {
	buf, err := t.readCompressedRaw(ctx, c, b, buf)
	if err == nil && t.sums != nil {
		err = t.sums.checkBlock(c, b, buf)
	}
	return buf, err
}

// readCompressedRaw fetches the compressed bytes of block b of frame c, into
// buf when it is large enough.
func (t *tableFile) readCompressedRaw(ctx context.Context, c int, b uint64, buf []byte) ([]byte, error) {
	f := &t.hdr.frames[c]
	lo, hi := f.offsets.get(b), f.offsets.get(b+1)
	if hi < lo || hi > f.dataSize {
		return nil, corruptf("block offsets %d..%d outside %d data bytes", lo, hi, f.dataSize)
	}
	if n := int(hi - lo); cap(buf) >= n {
		buf = buf[:n]
	} else {
		buf = make([]byte, n)
	}
	n, err := t.obj.ReadAt(ctx, buf, f.dataOff+int64(lo), source.HintData)
	t.checkChanged(err)
	if n < len(buf) {
		if err == nil || errors.Is(err, io.EOF) {
			err = corruptf("short read of %d-byte block", len(buf))
		}
		return nil, err
	}
	return buf, nil
}

// skipBlock reports whether block b holds no compressed bytes: the generator
// leaves such blocks empty when every cell is a draw or illegal.
func (f *frame) skipBlock(b uint64) bool {
	return f.offsets.get(b) == f.offsets.get(b+1)
}

// block returns decoded block b of frame c, through the shared cache, in a
// buffer of the Tablebase's pool: decode fills out, the block's exact
// length, from the compressed bytes. The block comes acquired; the caller
// releases it once it no longer reads it.
func (t *tableFile) block(ctx context.Context, c int, b uint64, decode func(comp, out []byte) error) (*pooledBlock, error) {
	key := blockcache.Key{File: t.id, Frame: uint8(c), Block: b}
	if v, ok := t.cache.Peek(key); ok {
		return v.(*pooledBlock), nil
	}
	v, err := t.cache.GetValue(ctx, key, func() (any, int64, error) {
		scratch := compScratch.Get().(*[]byte)
		defer compScratch.Put(scratch)
		comp, err := t.readCompressedInto(ctx, c, b, *scratch)
		if err != nil {
			return nil, 0, err
		}
		*scratch = comp[:0]
		out := t.pool.get(int(t.hdr.frames[c].blockBytes(b)))
		if err := decode(comp, out); err != nil {
			t.pool.put(out)
			return nil, 0, err
		}
		return newPooledBlock(t.pool, out), int64(len(out)), nil
	})
	if err != nil {
		var fe *FileError
		if !errors.As(err, &fe) {
			err = t.fileErr(int64(b), err)
		}
		return nil, err
	}
	return v.(*pooledBlock), nil
}

// compScratch holds buffers for compressed blocks that are decoded at once
// (LZ4), so a decode allocates none.
var compScratch = sync.Pool{New: func() any { return new([]byte) }}

// Stored WDL codes: the five classes, the two boundary markers and ILLEGAL.
const (
	storedLose         = 0
	storedBlessedLoss  = 1
	storedDraw         = 2
	storedCursedWin    = 3
	storedWin          = 4
	storedBoundaryLoss = 5
	storedBoundaryWin  = 6
	storedIllegal      = 7
)

// blockMemo remembers the last few WDL blocks one probe read. A rebuild
// reads dozens of children, mostly from the same few blocks; the memo spares
// each read after the first the shared cache's lock, map and LRU update. The
// memo holds a reference to each block it remembers, so the block's buffer
// stays the block's even if the cache drops it meanwhile; reset gives them
// up. The zero value is empty; a nil memo remembers nothing.
type blockMemo struct {
	keys   [8]blockcache.Key
	blocks [8]*pooledBlock
	next   int
}

func (m *blockMemo) get(key blockcache.Key) ([]byte, bool) {
	if m == nil {
		return nil, false
	}
	for i := range m.keys {
		if m.keys[i] == key && m.blocks[i] != nil {
			return m.blocks[i].data, true
		}
	}
	return nil, false
}

// put remembers pb, taking over the caller's reference to it.
func (m *blockMemo) put(key blockcache.Key, pb *pooledBlock) {
	if old := m.blocks[m.next]; old != nil {
		old.release()
	}
	m.keys[m.next], m.blocks[m.next] = key, pb
	m.next = (m.next + 1) % len(m.keys)
}

// reset forgets every block, releasing them.
func (m *blockMemo) reset() {
	for i, pb := range m.blocks {
		if pb != nil {
			pb.release()
		}
		m.blocks[i] = nil
	}
	m.next = 0
}

// readWDL returns the stored 4-bit code of cell idx in frame c, through
// memo (which may be nil).
func (t *tableFile) readWDL(ctx context.Context, c int, idx uint64, memo *blockMemo) (uint8, error) {
	f := &t.hdr.frames[c]
	if f.singular {
		return f.single, nil
	}
	byteIdx := idx / 2
	var b, off uint64
	if f.blockPow2 {
		b, off = byteIdx>>f.blockShift, byteIdx&(f.blockSize-1)
	} else {
		b, off = byteIdx/f.blockSize, byteIdx%f.blockSize
	}
	if b >= f.blockCnt {
		return 0, t.fileErr(-1, corruptf("cell %d beyond the last block", idx))
	}
	key := blockcache.Key{File: t.id, Frame: uint8(c), Block: b}
	// The memo holds only blocks that were decoded, so a hit needs no
	// check for an empty block.
	data, ok := memo.get(key)
	if !ok {
		if f.skipBlock(b) {
			return storedIllegal, nil
		}
		pb, err := t.block(ctx, c, b, func(comp, out []byte) error {
			return decodeLZ4Into(comp, f.dict, out)
		})
		if err != nil {
			return 0, err
		}
		if memo == nil {
			defer pb.release()
		} else {
			memo.put(key, pb)
		}
		data = pb.data
	}
	if off >= uint64(len(data)) {
		return 0, t.fileErr(int64(b), corruptf("cell past the decoded block"))
	}
	return (data[off] >> (4 * (idx & 1))) & 0xF, nil
}

// readRank returns the stored (rank-decoded) value of cell idx in frame c
// of a DTZ or DTM table, and whether the cell lies in a skipped block.
func (t *tableFile) readRank(ctx context.Context, c int, idx uint64) (uint16, bool, error) {
	f := &t.hdr.frames[c]
	if f.singular {
		return uint16(f.single), false, nil
	}
	eb := uint64(f.entryBytes)
	per := f.blockSize / eb
	b := idx / per
	if b >= f.blockCnt {
		return 0, false, t.fileErr(-1, corruptf("cell %d beyond the last block", idx))
	}
	if f.skipBlock(b) {
		return 0, true, nil
	}
	off := (idx % per) * eb
	data, err := t.rankBlock(ctx, c, b, int(off), int(off+eb))
	if err != nil {
		return 0, false, err
	}
	if off+eb > uint64(len(data)) {
		return 0, false, t.fileErr(int64(b), corruptf("cell past the decoded block"))
	}
	rank := uint16(data[off])
	if eb == 2 {
		rank = binary.LittleEndian.Uint16(data[off:])
	}
	if int(rank) >= len(f.ranks) {
		return 0, false, t.fileErr(int64(b), corruptf("rank %d outside the %d-entry rank table", rank, len(f.ranks)))
	}
	return f.ranks[rank], false, nil
}

// decodeLZ4 decodes one WDL block, primed with the table's dictionary.
func decodeLZ4(comp, dict []byte, size uint64) ([]byte, error) {
	out := make([]byte, size)
	if err := decodeLZ4Into(comp, dict, out); err != nil {
		return nil, err
	}
	return out, nil
}

// decodeLZ4Into decodes one WDL block into out, which it must fill exactly.
func decodeLZ4Into(comp, dict, out []byte) error {
	var n int
	var err error
	if len(dict) > 0 {
		n, err = lz4.UncompressBlockWithDict(comp, out, dict)
	} else {
		n, err = lz4.UncompressBlock(comp, out)
	}
	if err != nil {
		return corruptf("LZ4: %v", err)
	}
	if n != len(out) {
		return corruptf("LZ4 block decoded to %d bytes, want %d", n, len(out))
	}
	return nil
}

// lzmaPropsSize is the length of the LZMA properties each block carries at
// its tail (one lc/lp/pb byte and a 32-bit dictionary size).
const lzmaPropsSize = lzma.PropsSize

// lzmaBlock is a block decoded as far as probes have needed: the first
// probe decodes up to its cell, a later probe of a cell further in resumes
// from the saved coder state. Bytes below done never change. The first
// buffer holds what the first probe needs (at least lzmaFirstBytes), so a
// block the probes read only the start of holds, and costs the cache budget,
// only that much; a probe that needs more gets the whole block's buffer at
// once, so a block is copied at most once, a first buffer's worth, instead
// of on every growth (that copying and the clearing of each larger buffer
// were an eighth of a cold pass). onGrow tells the cache.
type lzmaBlock struct {
	size int
	done atomic.Int64
	view atomic.Pointer[[]byte] // holds at least the first done bytes
	mu   sync.Mutex
	buf  []byte        // the buffer view points at, under mu
	dec  *lzma.Decoder // nil once the block is complete
	// tier, when set instead of dec, reads the block's bytes out of the
	// decoded store, in chunks of tierChunk bytes, into buf, which has
	// the block's length from the start; have[i] is set once chunk i is
	// in buf (and done is the whole chunks before the first that is
	// not). tierHeld is the memory tier holds; relz decodes the whole
	// block from its LZMA should tier fail.
	tier      io.ReaderAt
	tierChunk int
	have      []atomic.Bool
	tierHeld  int64
	relz      func() ([]byte, error)
	err       error // a decode failure, repeated to every later reader
	// onGrow, when set, is called with the bytes the block's
	// memory grew by (negative: shrank).
	onGrow func(delta int64)
	// evicted is set once the shared cache has dropped the block: from
	// then on its growth would no longer count against the budget, so a
	// probe's own memory of it must not decode it any further.
	evicted atomic.Bool
	// count, when set, is told the bytes each decode adds.
	count *decodeCounter
}

// tierLZMABlock is a block of size bytes read from the decoded store by r,
// in chunks of chunk bytes, r holding held bytes; relz decodes the whole
// block from its LZMA instead should r fail.
func tierLZMABlock(r io.ReaderAt, chunk int, held int64, size int, relz func() ([]byte, error)) *lzmaBlock {
	// The buffer is the whole block's at once (and charged to the budget
	// so): memory fresh from the system needs no clearing, so its pages
	// no read reaches are never touched and cost no time.
	lb := &lzmaBlock{size: size, buf: make([]byte, size), tier: r, tierChunk: chunk,
		have: make([]atomic.Bool, (size+chunk-1)/chunk), tierHeld: held, relz: relz}
	lb.view.Store(&lb.buf)
	return lb
}

// markEvicted records that the cache no longer holds the block.
func (lb *lzmaBlock) MarkEvicted() { lb.evicted.Store(true) }

// newLZMABlock prepares block of size bytes decoded by z.
func newLZMABlock(z *lzma.Decoder, size int) *lzmaBlock {
	lb := &lzmaBlock{size: size, dec: z}
	lb.view.Store(&lb.buf)
	return lb
}

// newLZMABlock is newLZMABlock for a block of t, counted in t's decode
// statistics.
func (t *tableFile) newLZMABlock(z *lzma.Decoder, size int) *lzmaBlock {
	lb := newLZMABlock(z, size)
	lb.count = t.decodes
	t.decodes.begin(size)
	return lb
}

// memSize is the bytes the block holds: its buffer, and until it is
// complete the coder state and the compressed bytes the coder reads.
func (lb *lzmaBlock) memSize() int64 {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	n := int64(cap(lb.buf))
	if lb.dec != nil {
		n += lb.dec.StateBytes()
	}
	if lb.tier != nil {
		n += lb.tierHeld
	}
	return n
}

// lzmaFirstBytes is the least a block's first buffer holds.
const lzmaFirstBytes = 64 << 10

// upTo returns the block with at least its first n bytes decoded; the
// slice may be longer than what is decoded, and shorter than the block.
func (lb *lzmaBlock) upTo(n int) ([]byte, error) {
	n = min(n, lb.size)
	if int(lb.done.Load()) >= n {
		return *lb.view.Load(), nil
	}
	lb.mu.Lock()
	defer lb.mu.Unlock()
	if lb.err != nil {
		return nil, lb.err
	}
	pos := int(lb.done.Load())
	if pos >= n {
		return lb.buf, nil
	}
	if lb.tier != nil {
		if err := lb.tierSpanLocked(0, n); err != nil {
			return nil, err
		}
		return lb.buf, nil
	}
	if want := min(lb.size, n+lzma.MaxMatch); len(lb.buf) < want {
		grown := lb.size
		if len(lb.buf) == 0 {
			grown = min(lb.size, max(want, lzmaFirstBytes))
		}
		nb := make([]byte, grown)
		copy(nb, lb.buf[:pos])
		delta := int64(grown - len(lb.buf))
		lb.buf = nb
		lb.view.Store(&nb)
		if lb.onGrow != nil {
			lb.onGrow(delta)
		}
	}
	from := pos
	pos, err := lb.dec.Decode(lb.buf, n)
	lb.count.add(pos - from)
	if err == nil && pos < n {
		err = fmt.Errorf("decoding stopped at byte %d short of %d", pos, n)
	}
	if err != nil {
		lb.err = corruptf("LZMA: %v", err)
		return nil, lb.err
	}
	lb.done.Store(int64(pos))
	if pos == lb.size {
		// The coder and the compressed bytes are no longer needed.
		if lb.onGrow != nil {
			lb.onGrow(-lb.dec.StateBytes())
		}
		lb.dec = nil
	}
	return lb.buf, nil
}

// span returns the block with at least its bytes [lo, hi) decoded: for a
// block from the decoded store only the chunks that hold them, for one
// decoded from its LZMA everything before hi.
func (lb *lzmaBlock) span(lo, hi int) ([]byte, error) {
	if lb.have == nil {
		return lb.upTo(hi)
	}
	hi = min(hi, lb.size)
	if lo < 0 || lo > hi {
		return nil, corruptf("bytes %d..%d of a %d-byte block", lo, hi, lb.size)
	}
	if int(lb.done.Load()) >= hi {
		return lb.buf, nil
	}
	whole := true
	for i := lo / lb.tierChunk; i*lb.tierChunk < hi; i++ {
		if !lb.have[i].Load() {
			whole = false
			break
		}
	}
	if whole {
		return lb.buf, nil
	}
	lb.mu.Lock()
	defer lb.mu.Unlock()
	if err := lb.tierSpanLocked(lo, hi); err != nil {
		return nil, err
	}
	return lb.buf, nil
}

// tierSpanLocked reads the chunks holding bytes [lo, hi) of a block from
// the decoded store that are not in buf yet, straight into buf; readers
// read only chunks marked in have, so the rest of buf is the writer's.
// Under mu.
func (lb *lzmaBlock) tierSpanLocked(lo, hi int) error {
	if lb.err != nil {
		return lb.err
	}
	if lb.tier == nil {
		return nil // complete
	}
	c := lb.tierChunk
	for i := lo / c; i*c < hi; i++ {
		if lb.have[i].Load() {
			continue
		}
		clo, chi := i*c, min(lb.size, (i+1)*c)
		if _, err := lb.tier.ReadAt(lb.buf[clo:chi], int64(clo)); err != nil {
			return lb.tierFailedLocked()
		}
		lb.have[i].Store(true)
	}
	done := int(lb.done.Load())
	for done < lb.size && lb.have[done/c].Load() {
		done = min(lb.size, done+c)
	}
	lb.done.Store(int64(done))
	if done == lb.size {
		lb.dropTierLocked()
	}
	return nil
}

// dropTierLocked gives up the store's reader of a block that is complete.
// Under mu.
func (lb *lzmaBlock) dropTierLocked() {
	if c, ok := lb.tier.(io.Closer); ok {
		c.Close()
	}
	lb.tier = nil
	if lb.onGrow != nil {
		lb.onGrow(-lb.tierHeld)
	}
}

// tierFailedLocked completes a block whose chunks in the decoded store
// passed its checksum and still do not decode (only a faulty writer makes
// such): it decodes the block from its LZMA and fills in the chunks not in
// buf yet. Under mu.
func (lb *lzmaBlock) tierFailedLocked() error {
	data, err := lb.relz()
	if err == nil && len(data) != lb.size {
		err = corruptf("LZMA block decoded to %d bytes, want %d", len(data), lb.size)
	}
	if err != nil {
		lb.err = err
		return err
	}
	c := lb.tierChunk
	for i := range lb.have {
		if !lb.have[i].Load() {
			copy(lb.buf[i*c:], data[i*c:min(lb.size, (i+1)*c)])
			lb.have[i].Store(true)
		}
	}
	lb.done.Store(int64(lb.size))
	lb.dropTierLocked()
	return nil
}

// lzmaDecoder reads compressed block b of frame c and prepares its
// decoder; the format keeps the LZMA properties after the stream.
func (t *tableFile) lzmaDecoder(ctx context.Context, c int, b uint64, size int) (*lzma.Decoder, error) {
	comp, err := t.readCompressed(ctx, c, b)
	if err != nil {
		return nil, err
	}
	if len(comp) < lzmaPropsSize {
		return nil, corruptf("LZMA block of %d bytes has no properties", len(comp))
	}
	z, err := lzma.NewDecoder(comp[:len(comp)-lzmaPropsSize], comp[len(comp)-lzmaPropsSize:], size)
	if err != nil {
		return nil, corruptf("LZMA: %v", err)
	}
	return z, nil
}

// rankBlock returns block b of distance frame c with at least its bytes
// [lo, hi) decoded, through the shared cache.
func (t *tableFile) rankBlock(ctx context.Context, c int, b uint64, lo, hi int) ([]byte, error) {
	key := blockcache.Key{File: t.id, Frame: uint8(c), Block: b}
	if v, ok := t.cache.Peek(key); ok {
		if data, err := v.(*lzmaBlock).span(lo, hi); err == nil {
			return data, nil
		}
	}
	v, err := t.cache.GetValue(ctx, key, func() (any, int64, error) {
		lb, err := t.openLZMABlock(ctx, c, b, int(t.hdr.frames[c].blockBytes(b)))
		if err != nil {
			return nil, 0, err
		}
		if _, err := lb.span(lo, hi); err != nil {
			return nil, 0, err
		}
		lb.onGrow = func(delta int64) { t.cache.Resize(key, lb, delta) }
		return lb, lb.memSize(), nil
	})
	if err == nil {
		var data []byte
		if data, err = v.(*lzmaBlock).span(lo, hi); err == nil {
			return data, nil
		}
	}
	var fe *FileError
	if !errors.As(err, &fe) {
		err = t.fileErr(int64(b), err)
	}
	return nil, err
}

// decodeLZMA decodes one whole distance block: a raw LZMA stream followed
// by its properties, decoding to exactly size bytes.
func decodeLZMA(comp []byte, size uint64) ([]byte, error) {
	if len(comp) < lzmaPropsSize {
		return nil, corruptf("LZMA block of %d bytes has no properties", len(comp))
	}
	out, err := lzma.DecodeAll(comp[:len(comp)-lzmaPropsSize], comp[len(comp)-lzmaPropsSize:], int(size))
	if err != nil {
		return nil, corruptf("LZMA: %v", err)
	}
	return out, nil
}

// String names the file for debugging.
func (t *tableFile) String() string { return fmt.Sprintf("%s (%s)", t.name, t.kind) }
