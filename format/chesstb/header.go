package chesstb

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"

	"github.com/tbfs/tbfs/source"
)

// Kind is one of the five chesstb table kinds.
type Kind uint8

// The table kinds, one file extension and folder each.
const (
	KindWDL Kind = iota
	KindDTZ
	KindDTC
	KindDTM
	KindDTM50
	numKinds
)

var kindInfo = [numKinds]struct {
	name, dir, ext string
	magic          uint32
}{
	KindWDL:   {"WDL", "wdl", ".lzw", 0x9bd1e3a6},
	KindDTZ:   {"DTZ", "dtz", ".lzdtz", 0x2ec8b161},
	KindDTC:   {"DTC", "dtc", ".lzdtc", 0x2ec8b17e},
	KindDTM:   {"DTM", "dtm", ".lzdtm", 0xab57c134},
	KindDTM50: {"DTM50", "dtm50", ".lzdtm50", 0xab57c151},
}

// String returns the kind's name ("WDL", "DTZ", ...).
func (k Kind) String() string {
	if k < numKinds {
		return kindInfo[k].name
	}
	return "unknown"
}

// layered reports whether the kind uses the changepoint pack (DTC, DTM50).
func (k Kind) layered() bool { return k == KindDTC || k == KindDTM50 }

// Frame flag bits: the first byte of each stored colour's header.
const (
	flagSingular = 0x80 // one value for the whole domain
	flagDropped  = 0x40 // colour left out; rebuilt by one-ply minimax
	flagLossOnly = 0x20 // only loss cells priced; wins rebuilt
	flagRelaxed  = 0x10 // WDL cells hold a bound, max'ed with captures
)

// frame is one side-to-move half of a table file.
type frame struct {
	flags    uint8
	singular bool
	dropped  bool
	// mirrored is set on Black's frame of a symmetric material: it is
	// White's frame read through the colour flip.
	mirrored bool
	lossOnly bool
	relaxed  bool
	single   uint8 // the value of a singular frame

	perm   uint32
	layout layout

	entryBytes int    // 1 or 2 (distance kinds)
	blockSize  uint64 // bytes per block (WDL, DTZ, DTM)
	// blockShift is log2(blockSize) when blockPow2 (a WDL frame whose
	// block size is a power of two, as the generator writes them), so a
	// cell's block and offset come without a division.
	blockShift uint8
	blockPow2  bool
	tailSize   uint64 // bytes in the last block, 0 if full
	// Layered kinds count blocks in positions.
	blockPositions uint64
	tailPositions  uint64
	blockCnt       uint64
	dataSize       uint64
	ranks          []uint16 // rank -> stored value
	dict           []byte   // WDL LZ4 dictionary

	offsetsAt int64   // file offset of the offset section, for diagnostics
	offsets   monoVec // blockCnt+1 cumulative compressed offsets
	usizes    min0Vec // layered: uncompressed payload size per block
	dataOff   int64   // absolute file offset of the compressed data
}

// stored reports whether the frame has cells to read.
func (f *frame) stored() bool { return !f.singular && !f.dropped && !f.mirrored }

// header is the parsed fixed part of a table file.
type header struct {
	kind   Kind
	colors int // 1: symmetric material, Black = White mirrored; 2: both stored
	frames [2]frame
	// raw is the header as read, through the block offsets: what an
	// integrity manifest's header hash covers.
	raw []byte
}

// A header is read in steps that double what is held, from
// headerFirstRead (the parsed header keeps the buffer, so a small header
// stays small), but never past the next headerReadUnit boundary beyond what
// the parser asked for: a header that ends early in a unit does not pull in
// the unit after it (one more request over a remote source), and one that
// needs a long block-offset section gets it in one read. The unit is the
// source cache's block and what the remote transports fetch on open, so the
// steps within the first unit cost no request.
const (
	headerFirstRead = 4096
	headerReadUnit  = 64 << 10
)

// alignUp rounds n up to a multiple of unit.
func alignUp(n, unit int) int { return (n + unit - 1) / unit * unit }

// headerReader reads a file's header through its source, fetching more
// bytes as the parser asks for them.
type headerReader struct {
	ctx  context.Context
	obj  source.Object
	size int64
	buf  []byte
	pos  int
	hint source.Hint
	err  error
}

func (r *headerReader) need(n int) bool {
	if r.err != nil {
		return false
	}
	if n < 0 || int64(r.pos)+int64(n) > r.size {
		r.err = corruptf("header runs past the end of the %d-byte file", r.size)
		return false
	}
	want := r.pos + n
	if want <= len(r.buf) {
		return true
	}
	grow := max(want, min(2*len(r.buf), alignUp(want, headerReadUnit)), headerFirstRead)
	if int64(grow) > r.size {
		grow = int(r.size)
	}
	start := len(r.buf)
	nb := make([]byte, grow)
	copy(nb, r.buf)
	got, err := r.obj.ReadAt(r.ctx, nb[start:], int64(start), r.hint)
	if got < grow-start {
		if err == nil || errors.Is(err, io.EOF) {
			err = corruptf("short read of header")
		}
		r.err = err
		return false
	}
	r.buf = nb
	return true
}

func (r *headerReader) bytes(n int) []byte {
	if !r.need(n) {
		return nil
	}
	b := r.buf[r.pos : r.pos+n]
	r.pos += n
	return b
}

func (r *headerReader) u8() uint8 {
	if b := r.bytes(1); b != nil {
		return b[0]
	}
	return 0
}

func (r *headerReader) u16() uint16 {
	if b := r.bytes(2); b != nil {
		return binary.LittleEndian.Uint16(b)
	}
	return 0
}

func (r *headerReader) u32() uint32 {
	if b := r.bytes(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (r *headerReader) u64() uint64 {
	if b := r.bytes(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

// fail records a parse error unless an earlier one is pending.
func (r *headerReader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// maxBlockBytes bounds a decoded block, so a corrupt header cannot make a
// probe allocate without limit.
const maxBlockBytes = 64 << 20

// minBlock is the least block size (bytes, or positions for the packs) a
// header may give: the generator writes 64 KiB WDL blocks and 1 Mi-cell
// distance and pack blocks, and a tiny block size in a damaged header
// would make the offset walk on open, and the offset table, huge.
const minBlock = 4096

// parseHeader reads the header of a kind-k file for the canonical material
// cfg, through to the block offsets, and locates each frame's data.
func parseHeader(ctx context.Context, obj source.Object, k Kind, cfg *indexConfig) (*header, error) {
	size := obj.Size()
	if size&63 != 8 {
		return nil, corruptf("file size %d is not 8 past a multiple of 64", size)
	}
	r := &headerReader{ctx: ctx, obj: obj, size: size, hint: source.HintHeader}
	h := &header{kind: k}
	if magic := r.u32(); r.err == nil && magic != kindInfo[k].magic {
		return nil, corruptf("bad magic %#08x for a %s table", magic, k)
	}
	kt := r.u32()
	if r.err != nil {
		return nil, r.err
	}
	if key := kt >> 2; key != cfg.mat.headerKey() {
		return nil, corruptf("material key %d does not match %s (%d)", key, cfg.mat.name(), cfg.mat.headerKey())
	}
	h.colors = int(kt & 3)
	if h.colors != 1 && h.colors != 2 {
		return nil, corruptf("bad colour count %d", h.colors)
	}
	if h.colors == 1 && !cfg.mat.symmetric() {
		return nil, corruptf("one stored colour for the asymmetric material %s", cfg.mat.name())
	}
	for c := range h.colors {
		f := &h.frames[c]
		f.flags = r.u8()
		if r.err == nil {
			if err := checkFlags(f.flags, c); err != nil {
				return nil, err
			}
		}
		f.lossOnly = f.flags&flagLossOnly != 0
		f.relaxed = f.flags&flagRelaxed != 0
		switch {
		case f.flags&flagSingular != 0:
			f.singular = true
			f.single = r.u8()
			if k.layered() && f.single != 0 && r.err == nil {
				return nil, corruptf("singular %s frame with non-draw value %d", k, f.single)
			}
			if k == KindWDL && f.single > 7 {
				return nil, corruptf("singular WDL code %d", f.single)
			}
		case f.flags&flagDropped != 0:
			f.dropped = true
		default:
			parseFrameHeader(r, f, k, cfg)
		}
		if r.err != nil {
			return nil, r.err
		}
	}
	if h.colors == 1 && h.frames[0].dropped {
		return nil, corruptf("white frame: the only stored frame of a symmetric material is dropped")
	}
	if h.frames[0].dropped && h.frames[1].dropped {
		return nil, corruptf("both frames dropped")
	}
	if h.colors == 1 {
		b := &h.frames[1]
		*b = frame{flags: h.frames[0].flags, mirrored: true,
			lossOnly: h.frames[0].lossOnly, relaxed: h.frames[0].relaxed}
	}
	if k == KindWDL {
		for c := range h.colors {
			f := &h.frames[c]
			if !f.stored() {
				continue
			}
			n := int(r.u16())
			if n > maxDictBytes {
				return nil, corruptf("%s frame: LZ4 dictionary of %d bytes, the generator writes at most %d", colorName(c), n, maxDictBytes)
			}
			if d := r.bytes(n); d != nil {
				f.dict = append([]byte(nil), d...)
			}
		}
	}
	r.hint = source.HintIndex
	for c := range h.colors {
		f := &h.frames[c]
		if !f.stored() {
			continue
		}
		f.offsetsAt = int64(r.pos)
		log2bu, sw, ow, uw := r.u8(), r.u8(), r.u8(), r.u8()
		if r.err != nil {
			return nil, r.err
		}
		mv, err := newMonoVec(f.blockCnt+1, log2bu, sw, ow)
		if err != nil {
			return nil, err
		}
		mv.setData(r.bytes(mv.onDiskBytes()))
		f.offsets = mv
		if k.layered() {
			uv, err := newMin0Vec(f.blockCnt, uw)
			if err != nil {
				return nil, err
			}
			uv.setData(r.bytes(uv.onDiskBytes()))
			f.usizes = uv
		}
		if r.err != nil {
			return nil, r.err
		}
	}
	h.raw = r.buf[:r.pos:r.pos]
	// The generator pads the header and each frame's data to 64 bytes and
	// ends the file with the 8-byte checksum, so the layout fixes the size.
	off := (int64(r.pos) + 63) &^ 63
	for c := range h.colors {
		f := &h.frames[c]
		if !f.stored() {
			continue
		}
		f.dataOff = off
		if f.dataSize > uint64(size) || off+int64(f.dataSize) > size-8 {
			return nil, corruptf("%s frame: data of %d bytes at %d runs past the end", colorName(c), f.dataSize, off)
		}
		off = (off + int64(f.dataSize) + 63) &^ 63
		if err := checkOffsets(f, k); err != nil {
			return nil, fmt.Errorf("%s frame: %w", colorName(c), err)
		}
	}
	if off+8 != size {
		return nil, corruptf("the header and data end at byte %d, so the file should have %d bytes, not %d", off, off+8, size)
	}
	return h, nil
}

// maxDictBytes is the largest LZ4 dictionary the generator builds.
const maxDictBytes = 32 << 10

func colorName(c int) string { return [2]string{"white", "black"}[c] }

// checkFlags accepts a frame flag byte only in the forms the generator and
// its post-processors write: no unknown bits, singular and dropped
// exclusive.
func checkFlags(fl uint8, c int) error {
	const known = flagSingular | flagDropped | flagLossOnly | flagRelaxed
	switch {
	case fl&^known != 0:
		return corruptf("%s frame: flag byte %#02x has unknown bits", colorName(c), fl)
	case fl&flagSingular != 0 && fl&flagDropped != 0:
		return corruptf("%s frame: flag byte %#02x is both singular and dropped", colorName(c), fl)
	}
	return nil
}

// checkOffsets walks a stored frame's block offsets once: they start at 0,
// never decrease, end exactly at the data size, and each block's
// compressed length is one its decoded size can have (the packs' decoded
// sizes within bounds too).
func checkOffsets(f *frame, k Kind) error {
	if f.dataSize == 0 {
		// Every block empty: the generator writes such a frame singular.
		return corruptf("a stored frame with no data")
	}
	if first := f.offsets.get(0); first != 0 {
		return corruptf("block offsets start at %d, not 0", first)
	}
	if last := f.offsets.get(f.blockCnt); last != f.dataSize {
		return corruptf("block offsets end at %d, not at the %d data bytes", last, f.dataSize)
	}
	minComp := uint64(lzmaPropsSize + 1)
	if k == KindWDL {
		minComp = 1
	}
	prev := uint64(0)
	for b := range f.blockCnt {
		next := f.offsets.get(b + 1)
		if next < prev {
			return corruptf("block %d: offsets decrease from %d to %d", b, prev, next)
		}
		comp := next - prev
		prev = next
		var decoded uint64
		if k.layered() {
			decoded = f.usizes.get(b)
			if comp == 0 {
				continue
			}
			if decoded < 24 || decoded > maxBlockBytes {
				return corruptf("block %d: decoded size %d", b, decoded)
			}
		} else {
			if comp == 0 {
				continue
			}
			decoded = f.blockBytes(b)
		}
		// Neither coder expands its input by more than a small fraction.
		if comp < minComp || comp > decoded+decoded/2+1024 {
			return corruptf("block %d: %d compressed bytes for %d decoded", b, comp, decoded)
		}
	}
	return nil
}

// parseFrameHeader reads the per-colour header of a stored frame.
func parseFrameHeader(r *headerReader, f *frame, k Kind, cfg *indexConfig) {
	f.perm = r.u32()
	if r.err != nil {
		return
	}
	l, err := cfg.layoutFor(f.perm)
	if err != nil {
		r.fail(corruptf("%v", err))
		return
	}
	f.layout = l
	switch {
	case k == KindWDL:
		f.entryBytes = 1
		f.tailSize = uint64(r.u16())
		f.blockSize = uint64(r.u32())
		f.blockCnt = r.u64()
		f.dataSize = r.u64()
		if r.err != nil {
			return
		}
		checkBlocks(r, f, (cfg.positions+1)/2, f.blockSize)
		if f.blockSize != 0 && f.blockSize&(f.blockSize-1) == 0 {
			f.blockShift, f.blockPow2 = uint8(bits.TrailingZeros64(f.blockSize)), true
		}
	case k.layered():
		f.entryBytes = int(r.u8())
		f.blockPositions = uint64(r.u32())
		f.blockCnt = r.u64()
		f.tailPositions = uint64(r.u32())
		f.dataSize = r.u64()
		f.ranks = readRanks(r)
		if r.err != nil {
			return
		}
		if f.entryBytes != 1 && f.entryBytes != 2 {
			r.fail(corruptf("entry width %d", f.entryBytes))
			return
		}
		if err := checkRanks(f.ranks, f.entryBytes, k); err != nil {
			r.fail(err)
			return
		}
		if f.blockPositions < minBlock || f.blockPositions > maxBlockBytes {
			r.fail(corruptf("block of %d positions", f.blockPositions))
			return
		}
		if want := (cfg.positions + f.blockPositions - 1) / f.blockPositions; f.blockCnt != want {
			r.fail(corruptf("%d blocks where %d positions need %d", f.blockCnt, cfg.positions, want))
		}
		if want := cfg.positions % f.blockPositions; f.tailPositions != want {
			r.fail(corruptf("last block of %d positions where %d positions in blocks of %d leave %d", f.tailPositions, cfg.positions, f.blockPositions, want))
		}
	default:
		f.entryBytes = int(r.u8())
		f.tailSize = uint64(r.u32())
		f.blockSize = uint64(r.u32())
		f.blockCnt = r.u64()
		f.dataSize = r.u64()
		f.ranks = readRanks(r)
		if r.err != nil {
			return
		}
		if f.entryBytes != 1 && f.entryBytes != 2 {
			r.fail(corruptf("entry width %d", f.entryBytes))
			return
		}
		if f.blockSize%uint64(f.entryBytes) != 0 {
			r.fail(corruptf("block size %d not a multiple of the entry width", f.blockSize))
			return
		}
		if err := checkRanks(f.ranks, f.entryBytes, k); err != nil {
			r.fail(err)
			return
		}
		checkBlocks(r, f, cfg.positions*uint64(f.entryBytes), f.blockSize)
	}
}

// checkBlocks verifies that blockCnt blocks of blockSize bytes (the last one
// tailSize bytes when that is not zero) cover exactly total bytes.
func checkBlocks(r *headerReader, f *frame, total, blockSize uint64) {
	if blockSize < minBlock || blockSize > maxBlockBytes || f.tailSize > blockSize {
		r.fail(corruptf("block size %d, tail %d", blockSize, f.tailSize))
		return
	}
	want := (total + blockSize - 1) / blockSize
	tail := total % blockSize
	if f.blockCnt != want || f.tailSize != tail {
		r.fail(corruptf("%d blocks with a %d-byte tail do not cover %d bytes", f.blockCnt, f.tailSize, total))
	}
}

// storedNone is the storage value the generator gives cells whose distance
// does not matter (draws, illegal positions): it may take a rank in DTZ,
// DTM and DTC tables, but no decisive cell may read it.
const storedNone = 0x7FF

// maxDTMStored is the largest stored (halved) mate distance: the generator
// counts mates up to 2046 plies.
const maxDTMStored = 2046 >> 1

// checkRanks checks a frame's rank table (rank -> storage value) as the
// generator builds it: at least two ranks (one or none makes the frame
// singular), no value twice, no more ranks than the entry width can name,
// and every value inside the metric's storage range.
func checkRanks(ranks []uint16, entryBytes int, k Kind) error {
	// A pack's layers may all use one value, with draws between them.
	if least := 2 - btoi(k.layered()); len(ranks) < least {
		return corruptf("%d-entry value map for a stored frame", len(ranks))
	}
	if entryBytes == 1 && len(ranks) > 256 {
		return corruptf("%d-entry value map for 1-byte cells", len(ranks))
	}
	var seen [storedNone + 1]bool
	for i, v := range ranks {
		limit := uint16(storedNone)
		switch k {
		case KindDTM50:
			limit = maxDTMStored // draws and illegal cells take no rank here
		case KindDTM:
			if v == storedNone {
				break
			}
			limit = maxDTMStored
		}
		if v > limit {
			return corruptf("value map entry %d is %d, past the %s range (%d)", i, v, k, limit)
		}
		if seen[v] {
			return corruptf("value map holds %d twice (entry %d)", v, i)
		}
		seen[v] = true
	}
	return nil
}

func readRanks(r *headerReader) []uint16 {
	n := int(r.u16())
	b := r.bytes(2 * n)
	if b == nil {
		return nil
	}
	out := make([]uint16, n)
	for i := range out {
		out[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return out
}

// blockBytes is the decoded length of block b of a byte-blocked frame.
func (f *frame) blockBytes(b uint64) uint64 {
	if b == f.blockCnt-1 && f.tailSize != 0 {
		return f.tailSize
	}
	return f.blockSize
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
