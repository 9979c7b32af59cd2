package geister

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/zstd"

	"github.com/tbfs/tbfs/source"
)

// ErrNoTable is matched by errors about a material for which no source has
// a table file.
var ErrNoTable = errors.New("geister: no table for this material")

// ErrCorrupt is matched by errors about table data that cannot be right: a
// raw file of the wrong size, a seek table that does not describe its file,
// a frame that does not decode to the size the seek table promises or to
// its checksum, a table whose sha256 is not its manifest's (SumsFile), a
// value beyond the horizon.
var ErrCorrupt = errors.New("geister: corrupt table")

// tableReader reads entries of one table file.
type tableReader interface {
	// read fills p with the entries starting at index off; p never reaches
	// past the table's end.
	read(ctx context.Context, p []byte, off uint64) error
	close() error
}

// rawTable is a headerless table file, one byte per entry.
type rawTable struct {
	obj  source.Object
	name string
	// sums, when set, is checked chunk by chunk as the table is read;
	// checked has a bit per chunk already found intact.
	sums    *frameManifest
	checked []atomic.Uint64
}

// openRaw checks that a raw file has one byte per entry of its layout.
func openRaw(obj source.Object, name string, entries uint64) (*rawTable, error) {
	if size := obj.Size(); size < 0 || uint64(size) != entries {
		return nil, fmt.Errorf("%w: %s has %d bytes, its layout has %d entries", ErrCorrupt, name, size, entries)
	}
	return &rawTable{obj: obj, name: name}, nil
}

func (t *rawTable) read(ctx context.Context, p []byte, off uint64) error {
	if t.sums != nil && len(p) > 0 {
		if err := t.checkRawChunks(ctx, off, len(p)); err != nil {
			return err
		}
	}
	n, err := t.obj.ReadAt(ctx, p, int64(off), source.HintData)
	if n == len(p) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("geister: read %s at %d: %w", t.name, off, err)
}

func (t *rawTable) close() error { return t.obj.Close() }

// Seekable zstd (FORMAT.md §5): independent zstd frames followed by a
// skippable frame holding, per frame, its compressed and decompressed size
// (and optionally a checksum), then a 9-byte footer.
const (
	seekSkippableMagic = 0x184D2A5E
	seekFooterMagic    = 0x8F92EAB1
	seekFooterSize     = 9
	seekHeaderSize     = 8
	// maxFrameSize bounds the decompressed size of one frame; the reference
	// writes 8 KiB frames and a seek table that promises more is refused
	// rather than trusted with memory.
	maxFrameSize = 16 << 20
)

// seekTable is a validated seek table.
type seekTable struct {
	cOff []uint64 // compressed offset of each frame, plus the end
	dOff []uint64 // decompressed offset of each frame, plus the total
	sums []uint32 // per-frame checksums (low 32 bits of XXH64), or nil
	// uniform is the decompressed size shared by every frame but the last
	// (which is not larger), or 0 when sizes vary.
	uniform uint64
}

func (st *seekTable) frames() int { return len(st.cOff) - 1 }

// seekTailSize reads the footer (the last 9 bytes of the file) and returns
// the length of the whole seek-table frame it announces.
func seekTailSize(footer []byte) (int64, error) {
	if len(footer) != seekFooterSize {
		return 0, fmt.Errorf("%w: seek table footer of %d bytes", ErrCorrupt, len(footer))
	}
	if m := binary.LittleEndian.Uint32(footer[5:]); m != seekFooterMagic {
		return 0, fmt.Errorf("%w: seek table footer magic %#08x, want %#08x (not a seekable zstd file)", ErrCorrupt, m, uint32(seekFooterMagic))
	}
	desc := footer[4]
	if desc&0x7C != 0 {
		return 0, fmt.Errorf("%w: seek table descriptor %#02x has reserved bits set", ErrCorrupt, desc)
	}
	n := int64(binary.LittleEndian.Uint32(footer[:4]))
	return seekHeaderSize + n*entrySize(desc) + seekFooterSize, nil
}

func entrySize(desc byte) int64 {
	if desc&0x80 != 0 {
		return 12
	}
	return 8
}

// parseSeekTable validates the seek-table frame tail (skippable header,
// entries, footer) found at the end of a file of fileSize bytes, and
// returns it. Every frame must be non-empty, decompress to at most
// maxFrameSize bytes, and the compressed sizes must add up to exactly the
// bytes before the seek table.
func parseSeekTable(tail []byte, fileSize int64) (*seekTable, error) {
	if len(tail) < seekHeaderSize+seekFooterSize {
		return nil, fmt.Errorf("%w: seek table of %d bytes is too short", ErrCorrupt, len(tail))
	}
	want, err := seekTailSize(tail[len(tail)-seekFooterSize:])
	if err != nil {
		return nil, err
	}
	if want != int64(len(tail)) {
		return nil, fmt.Errorf("%w: seek table footer announces %d bytes, have %d", ErrCorrupt, want, len(tail))
	}
	if int64(len(tail)) > fileSize {
		return nil, fmt.Errorf("%w: seek table of %d bytes in a file of %d", ErrCorrupt, len(tail), fileSize)
	}
	if m := binary.LittleEndian.Uint32(tail); m != seekSkippableMagic {
		return nil, fmt.Errorf("%w: seek table frame magic %#08x, want %#08x", ErrCorrupt, m, uint32(seekSkippableMagic))
	}
	if p := int64(binary.LittleEndian.Uint32(tail[4:])); p != int64(len(tail))-seekHeaderSize {
		return nil, fmt.Errorf("%w: seek table frame payload %d bytes, footer implies %d", ErrCorrupt, p, len(tail)-seekHeaderSize)
	}
	desc := tail[len(tail)-5]
	es := int(entrySize(desc))
	n := (len(tail) - seekHeaderSize - seekFooterSize) / es
	if n == 0 {
		return nil, fmt.Errorf("%w: seek table lists no frames", ErrCorrupt)
	}
	st := &seekTable{cOff: make([]uint64, n+1), dOff: make([]uint64, n+1)}
	if es == 12 {
		st.sums = make([]uint32, n)
	}
	entries := tail[seekHeaderSize : len(tail)-seekFooterSize]
	dataSize := uint64(fileSize - int64(len(tail)))
	uniform := true
	for i := 0; i < n; i++ {
		e := entries[i*es:]
		c := uint64(binary.LittleEndian.Uint32(e))
		d := uint64(binary.LittleEndian.Uint32(e[4:]))
		if c == 0 || d == 0 || d > maxFrameSize {
			return nil, fmt.Errorf("%w: seek table frame %d: %d compressed, %d decompressed bytes", ErrCorrupt, i, c, d)
		}
		if st.sums != nil {
			st.sums[i] = binary.LittleEndian.Uint32(e[8:])
		}
		st.cOff[i+1] = st.cOff[i] + c
		st.dOff[i+1] = st.dOff[i] + d
		if st.cOff[i+1] > dataSize {
			return nil, fmt.Errorf("%w: seek table frames reach past the %d bytes of frame data", ErrCorrupt, dataSize)
		}
		first := st.dOff[1]
		if i > 0 && (d > first || d < first && i < n-1) {
			uniform = false
		}
	}
	if st.cOff[n] != dataSize {
		return nil, fmt.Errorf("%w: seek table frames cover %d bytes, the file has %d before its seek table", ErrCorrupt, st.cOff[n], dataSize)
	}
	if uniform {
		st.uniform = st.dOff[1]
	}
	return st, nil
}

// frameOf returns the frame holding decompressed byte off.
func (st *seekTable) frameOf(off uint64) int {
	if st.uniform != 0 {
		return int(off / st.uniform)
	}
	lo, hi := 0, st.frames()-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if st.dOff[mid] <= off {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// zstdTable is a seekable-zstd table read one frame at a time through a
// shared frame cache.
type zstdTable struct {
	obj   source.Object
	name  string
	st    *seekTable
	cache *FrameCache
	// slots holds each frame's cache entry, if any.
	slots []atomic.Pointer[cacheEntry]
	// sums, when set, has the hash of each decoded frame.
	sums *frameManifest
}

// openZstd reads and validates a seekable-zstd file's seek table, which
// must describe exactly entries decompressed bytes.
func openZstd(ctx context.Context, obj source.Object, name string, entries uint64, cache *FrameCache) (*zstdTable, error) {
	size := obj.Size()
	if size < seekHeaderSize+seekFooterSize {
		return nil, fmt.Errorf("%w: %s has %d bytes, too short for a seekable zstd file", ErrCorrupt, name, size)
	}
	footer := make([]byte, seekFooterSize)
	if err := readFull(ctx, obj, footer, size-seekFooterSize); err != nil {
		return nil, fmt.Errorf("geister: read seek table footer of %s: %w", name, err)
	}
	tailLen, err := seekTailSize(footer)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if tailLen > size {
		return nil, fmt.Errorf("%w: %s: seek table of %d bytes in a file of %d", ErrCorrupt, name, tailLen, size)
	}
	tail := make([]byte, tailLen)
	if err := readFull(ctx, obj, tail, size-tailLen); err != nil {
		return nil, fmt.Errorf("geister: read seek table of %s: %w", name, err)
	}
	st, err := parseSeekTable(tail, size)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if total := st.dOff[st.frames()]; total != entries {
		return nil, fmt.Errorf("%w: %s decompresses to %d bytes, its layout has %d entries", ErrCorrupt, name, total, entries)
	}
	return &zstdTable{obj: obj, name: name, st: st, cache: cache, slots: make([]atomic.Pointer[cacheEntry], st.frames())}, nil
}

func readFull(ctx context.Context, obj source.Object, p []byte, off int64) error {
	n, err := obj.ReadAt(ctx, p, off, source.HintIndex)
	if n == len(p) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}

func (t *zstdTable) read(ctx context.Context, p []byte, off uint64) error {
	for len(p) > 0 {
		f := t.st.frameOf(off)
		data, err := t.frame(ctx, f)
		if err != nil {
			return err
		}
		n := copy(p, data[off-t.st.dOff[f]:])
		p = p[n:]
		off += uint64(n)
	}
	return nil
}

// frame returns frame f decoded, from the cache or by reading and decoding
// exactly that frame.
func (t *zstdTable) frame(ctx context.Context, f int) ([]byte, error) {
	return t.cache.get(ctx, &t.slots[f], func() ([]byte, error) {
		return t.load(ctx, f)
	})
}

var compressedPool = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

func (t *zstdTable) load(ctx context.Context, f int) ([]byte, error) {
	cs := t.st.cOff[f+1] - t.st.cOff[f]
	ds := t.st.dOff[f+1] - t.st.dOff[f]
	bp := compressedPool.Get().(*[]byte)
	defer compressedPool.Put(bp)
	if uint64(cap(*bp)) < cs {
		*bp = make([]byte, cs)
	}
	buf := (*bp)[:cs]
	n, err := t.obj.ReadAt(ctx, buf, int64(t.st.cOff[f]), source.HintData)
	if n != len(buf) {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("geister: read frame %d of %s: %w", f, t.name, err)
	}
	dec, err := decoder()
	if err != nil {
		return nil, err
	}
	// Room beyond the frame lets the decoder use its faster copy loops.
	out, err := dec.DecodeAll(buf, make([]byte, 0, ds+64))
	if err != nil {
		return nil, fmt.Errorf("%w: %s frame %d: %v", ErrCorrupt, t.name, f, err)
	}
	if uint64(len(out)) != ds {
		return nil, fmt.Errorf("%w: %s frame %d decodes to %d bytes, the seek table says %d", ErrCorrupt, t.name, f, len(out), ds)
	}
	if t.sums != nil {
		if err := t.sums.checkChunk(t.name, f, out); err != nil {
			return nil, err
		}
	}
	if t.st.sums != nil {
		if got := uint32(xxhash.Sum64(out)); got != t.st.sums[f] {
			return nil, fmt.Errorf("%w: %s frame %d checksum %#08x, the seek table says %#08x", ErrCorrupt, t.name, f, got, t.st.sums[f])
		}
	}
	return out, nil
}

func (t *zstdTable) close() error {
	t.cache.drop(t.slots)
	return t.obj.Close()
}

// decoder is one zstd decoder shared by every table; DecodeAll may be
// called from many goroutines at once.
var decoder = sync.OnceValues(func() (*zstd.Decoder, error) {
	d, err := zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(runtime.GOMAXPROCS(0)),
		zstd.WithDecoderMaxMemory(2*maxFrameSize))
	if err != nil {
		return nil, fmt.Errorf("geister: zstd decoder: %w", err)
	}
	return d, nil
})
