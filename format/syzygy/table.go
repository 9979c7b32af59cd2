package syzygy

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"sync/atomic"

	"github.com/tbfs/tbfs/format/blockcache"
	"github.com/tbfs/tbfs/source"
)

// magic numbers at the start of each kind of file (little-endian).
var magic = [...]uint32{KindWDL: 0x5d23e871, KindDTZ: 0xa50c66d7}

// DTZ sub-table flags.
const (
	dtzSecondSide = 1  // the stored side to move is the table's second side
	dtzMapped     = 2  // values go through a map
	dtzWinPlies   = 4  // wins are stored in plies, not moves
	dtzLossPlies  = 8  // losses are stored in plies, not moves
	dtzWideMap    = 16 // the map has 16-bit entries
)

// tableFile is one open table file.
type tableFile struct {
	id   uint64
	name string
	kind Kind
	obj  source.Object // the table's object, as its source opened it
	rd   source.Object // where reads go: obj, or obj checked by sums
	lay  layout
	// parts[file][side]: the sub-tables, one per leading-pawn file (one
	// for pawnless tables) and side to move (one for DTZ tables).
	parts    [4][2]*encInfo
	numFiles int
	dtzFlags [4]uint8
	dtzMaps  [4][4][]uint16 // [file][map], see wdlToMap
	cache    *blockcache.Cache
	forget   func()
	// forgotten is set once the table is dropped for a replaced object
	// (its object then closed), so Tablebase.recent no longer serves it.
	forgotten atomic.Bool
	gate      *checksumGate                   // nil: answers need no checksum first
	last      [8]atomic.Pointer[decodedBlock] // per sub-table (2*file+side)
	where     layoutOffsets
	// sums is the manifest every read is checked against, nil when the
	// table has none it can use (sumsIgnored says why).
	sums        *manifest
	sumsName    string // the object name sums was read from
	sumsIgnored error
}

// layoutOffsets records where the parts of the header lie in the file.
type layoutOffsets struct {
	flags           [4]int // each DTZ sub-table's flag byte
	maps            int    // the DTZ maps (or where they would be)
	index, indexEnd uint64 // the sparse indexes and size tables
}

// eagerIndexBytes is the most index and size-table bytes a table reads
// whole when it is opened; larger ones are read in pages (lazyIndex).
var eagerIndexBytes uint64 = 8 << 20 // a variable so tests can make it tiny

// firstHeaderRead is the size of a table's first read.
var firstHeaderRead = 64 << 10 // a variable so tests can make it tiny

// headerReader grows a buffered prefix of the object as parsing needs it.
type headerReader struct {
	ctx  context.Context
	obj  source.Object
	buf  []byte
	size int64
}

// need makes at least n bytes of the prefix available, or fails when the
// object is shorter.
func (h *headerReader) need(n int) error {
	if n <= len(h.buf) {
		return nil
	}
	if int64(n) > h.size {
		return corruptf("header runs past the end of the file (%d > %d bytes)", n, h.size)
	}
	// The first read asks for enough to hold most headers whole (the
	// symbol tables of a large table run to tens of kilobytes), so one
	// request usually does.
	want := min(max(n, 2*len(h.buf), firstHeaderRead), int(h.size))
	buf := make([]byte, want)
	got, err := h.obj.ReadAt(h.ctx, buf, 0, source.HintHeader)
	if err != nil && !(errors.Is(err, io.EOF) && got == want) {
		return err
	}
	h.buf = buf
	return nil
}

// openFile parses the header and reads the block indexes of a table.
func openFile(ctx context.Context, obj source.Object, name string, kind Kind, mat material) (*tableFile, error) {
	t := &tableFile{id: blockcache.NewFileID(), name: name, kind: kind, obj: obj, rd: obj}
	t.lay = layoutOf(&mat)
	h := &headerReader{ctx: ctx, obj: obj, size: obj.Size()}
	if err := h.need(5); err != nil {
		return nil, err
	}
	if binary.LittleEndian.Uint32(h.buf) != magic[kind] {
		return nil, corruptf("bad magic number %#x", binary.LittleEndian.Uint32(h.buf))
	}
	flags := h.buf[4]
	if (flags&2 != 0) != t.lay.hasPawns {
		return nil, corruptf("pawn flag does not match the material")
	}
	split := kind == KindWDL && flags&1 != 0
	t.numFiles = 1
	if t.lay.hasPawns {
		t.numFiles = 4
	}
	morePawns := 0
	if t.lay.hasPawns && t.lay.lead[1] > 0 {
		morePawns = 1
	}
	off := 5
	for f := range t.numFiles {
		n := t.lay.num + 1 + morePawns
		if err := h.need(off + n); err != nil {
			return nil, err
		}
		for side := range 2 {
			if side == 1 && !split {
				break
			}
			e, err := newEncInfo(&t.lay, &mat, h.buf[off:off+n], uint(4*side), f)
			if err != nil {
				return nil, err
			}
			t.parts[f][side] = e
		}
		off += n
	}
	off += off & 1
	for f := range t.numFiles {
		for side := range 2 {
			e := t.parts[f][side]
			if e == nil {
				continue
			}
			if err := h.need(off + 2); err != nil {
				return nil, err
			}
			var d *pairsData
			for {
				var n int
				var err error
				d, n, err = parsePairs(h.buf[off:], e.size, kind == KindWDL)
				if short, ok := err.(*shortError); ok {
					if err := h.need(off + short.need); err != nil {
						return nil, err
					}
					continue
				}
				if err != nil {
					return nil, err
				}
				if kind == KindDTZ {
					t.dtzFlags[f] = h.buf[off]
					t.where.flags[f] = off
				}
				off += n
				break
			}
			e.pairs = d
		}
	}
	t.where.maps = off
	if kind == KindDTZ {
		for f := range t.numFiles {
			fl := t.dtzFlags[f]
			if fl&dtzMapped == 0 {
				continue
			}
			if fl&dtzWideMap == 0 {
				for i := range 4 {
					if err := h.need(off + 1); err != nil {
						return nil, err
					}
					n := int(h.buf[off])
					if err := h.need(off + 1 + n); err != nil {
						return nil, err
					}
					m := make([]uint16, n)
					for j := range m {
						m[j] = uint16(h.buf[off+1+j])
					}
					t.dtzMaps[f][i] = m
					off += 1 + n
				}
			} else {
				off += off & 1
				for i := range 4 {
					if err := h.need(off + 2); err != nil {
						return nil, err
					}
					n := int(binary.LittleEndian.Uint16(h.buf[off:]))
					if err := h.need(off + 2 + 2*n); err != nil {
						return nil, err
					}
					m := make([]uint16, n)
					for j := range m {
						m[j] = binary.LittleEndian.Uint16(h.buf[off+2+2*j:])
					}
					t.dtzMaps[f][i] = m
					off += 2 + 2*n
				}
			}
		}
		off += off & 1
	}
	// The indexes, then the size tables, then the blocks (each sub-table's
	// blocks 64-byte aligned).
	idxStart := uint64(off)
	pos := idxStart
	each := func(fn func(d *pairsData)) {
		for f := range t.numFiles {
			for side := range 2 {
				if e := t.parts[f][side]; e != nil {
					fn(e.pairs)
				}
			}
		}
	}
	pns := []int{}
	for f := range t.numFiles {
		for side := range 2 {
			if t.parts[f][side] != nil {
				pns = append(pns, 2*f+side)
			}
		}
	}
	var idxOff, sizeOff []uint64
	each(func(d *pairsData) { idxOff = append(idxOff, pos); pos += d.indexBytes })
	each(func(d *pairsData) { sizeOff = append(sizeOff, pos); pos += d.sizesBytes })
	idxEnd := pos
	t.where.index, t.where.indexEnd = idxStart, idxEnd
	each(func(d *pairsData) {
		pos = (pos + 63) &^ 63
		d.dataOff = int64(pos)
		pos += d.dataBytes
	})
	if pos > uint64(h.size) {
		return nil, corruptf("table needs %d bytes, file has %d", pos, h.size)
	}
	if idxEnd-idxStart > eagerIndexBytes {
		// Too large to read whole at open (the size tables of the largest
		// tables run to gigabytes): read it in pages as probes need them.
		i := 0
		each(func(d *pairsData) {
			d.lazy = &lazyIndex{t: t, pn: pns[i], indexOff: idxOff[i], sizesOff: sizeOff[i]}
			i++
		})
		return t, nil
	}
	raw := make([]byte, idxEnd-idxStart)
	if len(raw) > 0 {
		n, err := obj.ReadAt(ctx, raw, int64(idxStart), source.HintIndex)
		if err != nil && !(errors.Is(err, io.EOF) && n == len(raw)) {
			return nil, err
		}
	}
	i := 0
	each(func(d *pairsData) {
		a := idxOff[i] - idxStart
		d.index = raw[a : a+d.indexBytes]
		b := sizeOff[i] - idxStart
		d.sizes = make([]uint16, d.numBlocks)
		for j := range d.sizes {
			d.sizes[j] = binary.LittleEndian.Uint16(raw[b+2*uint64(j):])
		}
		i++
	})
	return t, nil
}

// layoutOf returns what the sub-tables of a file of material m (table
// orientation) have in common.
func layoutOf(m *material) layout {
	lay := layout{num: m.total(), symmetric: *m == m.swapped()}
	wp, bp := m.pawns(0), m.pawns(1)
	lay.hasPawns = wp+bp > 0
	if !lay.hasPawns {
		unique := 0
		for c := range 2 {
			for pt := 1; pt <= 6; pt++ {
				if m[c][pt] == 1 {
					unique++
				}
			}
		}
		lay.kk = unique == 2
		return lay
	}
	lay.lead = [2]int{wp, bp}
	if bp > 0 && (wp == 0 || wp > bp) {
		lay.lead = [2]int{bp, wp}
	}
	return lay
}

// lazyIndex reads a sub-table's sparse index and size table in pages,
// kept in the block cache beside the decoded blocks.
type lazyIndex struct {
	t                  *tableFile
	pn                 int
	indexOff, sizesOff uint64 // file offsets of the two regions
}

// lazyPage is the page size of each region: a multiple of the 6-byte index
// entry and of the 2-byte size, so no entry straddles two pages.
var lazyPage = [2]uint64{6 << 10, 4 << 10}

// bytes returns n bytes at rel within the region of regionBytes bytes at
// file offset base; region 0 is the index, 1 the size table.
func (z *lazyIndex) bytes(ctx context.Context, base, regionBytes, rel, n uint64, region int) ([]byte, error) {
	size := lazyPage[region]
	page := rel / size
	key := blockcache.Key{File: z.t.id, Frame: uint8(16 + 2*z.pn + region), Block: page}
	b, err := z.t.cache.Get(ctx, key, func() ([]byte, error) {
		lo := page * size
		buf := make([]byte, min(size, regionBytes-lo))
		got, err := z.t.rd.ReadAt(ctx, buf, int64(base+lo), source.HintIndex)
		if err != nil && !(errors.Is(err, io.EOF) && got == len(buf)) {
			z.t.checkChanged(err)
			return nil, &FileError{File: z.t.name, Err: err}
		}
		return buf, nil
	})
	if err != nil {
		return nil, err
	}
	off := rel - page*size
	if off+n > uint64(len(b)) {
		return nil, &FileError{File: z.t.name, Err: corruptf("index read past its region")}
	}
	return b[off : off+n], nil
}
