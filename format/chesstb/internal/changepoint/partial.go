package changepoint

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// Partial looks positions up in one block whose payload is decompressed front
// to back and only as far as lookups have needed. It keeps what each lookup
// learned for the next: the state counts of the state vector up to every
// 256th position walked past, and the SINGLE and DOUBLE records walked and
// checked so far, with which of them are draw-ended (that fixes every walked
// record's byte offset). A lookup of a position whose counts and record lie in
// what earlier lookups covered costs no more than Block.Lookup; one further
// in walks only the new part.
//
// Partial checks the header, the bounds of every stream it touches, every
// record it returns and every SINGLE and DOUBLE record it walks past, but not
// the parts of the block no lookup reached: Decode checks a whole payload.
// On a valid block every record it returns is the one Decode's Lookup
// returns. A Partial is not safe for concurrent use.
type Partial struct {
	p     Params
	total int
	view  *Block // what returned records see: the parameters only
	cnt   Block  // the state vector decompressed so far, for counting

	ready                      bool // header read
	nConst, nRec               uint64
	nRecs                      [4]uint64
	constOff, dirOff, multiOff uint64
	streamLo, streamHi         [4]uint64 // SINGLE and DOUBLE streams
	snaps                      []stateCounts
	walks                      [4]recordWalk // SINGLE and DOUBLE
}

// stateCounts holds how many positions of each state precede a snapshot.
type stateCounts [4]uint32

// recordWalk is the checked front of a SINGLE or DOUBLE stream.
type recordWalk struct {
	n     uint64   // records walked and checked
	bytes uint64   // the bytes they span
	short []uint64 // bit j: record j is draw-ended, so short
	cum   []uint32 // cum[w]: short records among records [0, 64w)
}

// shortBefore counts the draw-ended records among the first j walked.
func (w *recordWalk) shortBefore(j uint64) uint64 {
	word := j >> 6
	return uint64(w.cum[word]) + uint64(bits.OnesCount64(w.short[word]&(1<<(j&63)-1)))
}

// add records walked record j (== w.n) of the given width. The caller
// opens each hint word first (grow, when j is a multiple of 64): with that
// call out of it, add inlines into the walk.
func (w *recordWalk) add(short bool, width uint64) {
	j := w.n
	if short {
		w.short[j>>6] |= 1 << (j & 63)
	}
	w.n++
	w.bytes += width
}

// grow opens the hint word of the next 64 records. Kept out of line so that
// the walk's loop stays small.
//
//go:noinline
func (w *recordWalk) grow() {
	c := uint32(0)
	if k := len(w.short); k > 0 {
		c = w.cum[k-1] + uint32(bits.OnesCount64(w.short[k-1]))
	}
	w.short = append(w.short, 0)
	w.cum = append(w.cum, c)
}

// NewPartial prepares lookups in a block of p whose payload is total bytes.
func NewPartial(p Params, total int) (*Partial, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	if total < headerBytes {
		return nil, corrupt("payload of %d bytes is shorter than its %d-byte header", total, headerBytes)
	}
	view := &Block{p: p, bm: BitmapBytes(p.Layers)}
	return &Partial{p: p, total: total, view: view, cnt: Block{p: p, bm: view.bm}}, nil
}

// Bytes is the memory the Partial holds now (the payload it reads not
// included), for a cache's byte budget; it grows as lookups walk further.
func (pa *Partial) Bytes() int {
	n := 512 + cap(pa.snaps)*16
	for i := range pa.walks {
		n += cap(pa.walks[i].short)*8 + cap(pa.walks[i].cum)*4
	}
	return n
}

// readHeader parses and checks the header, and lays the streams out as
// Decode does.
func (pa *Partial) readHeader(head []byte) error {
	le := binary.LittleEndian
	np := le.Uint32(head[0:])
	ns := uint64(le.Uint32(head[4:]))
	nd := uint64(le.Uint32(head[8:]))
	nm := uint64(le.Uint32(head[12:]))
	ssBytes := uint64(le.Uint32(head[16:]))
	dsBytes := uint64(le.Uint32(head[20:]))
	if uint64(np) != uint64(pa.p.Positions) {
		return corrupt("payload holds %d positions, the table says %d", np, pa.p.Positions)
	}
	if ns+nd+nm > uint64(np) {
		return corrupt("%d+%d+%d non-constant records exceed %d positions", ns, nd, nm, np)
	}
	eb := uint64(pa.p.EntryBytes)
	pa.nConst = uint64(np) - ns - nd - nm
	pa.nRecs = [4]uint64{pa.nConst, ns, nd, nm}
	// All offsets stay within 2^38, so the sums cannot overflow.
	pa.constOff = uint64(headerBytes) + (uint64(pa.p.Positions)*2+7)/8
	singleOff := pa.constOff + pa.nConst*eb
	doubleOff := singleOff + ssBytes
	pa.streamLo[Single], pa.streamHi[Single] = singleOff, doubleOff
	pa.streamLo[Double], pa.streamHi[Double] = doubleOff, doubleOff+dsBytes
	pa.dirOff = doubleOff + dsBytes
	pa.dirOff += (4 - pa.dirOff&3) & 3
	pa.multiOff = pa.dirOff + (nm+1)*4
	if pa.multiOff > uint64(pa.total) {
		return corrupt("streams of %d bytes run past the %d-byte payload", pa.multiOff, pa.total)
	}
	pa.snaps = append(pa.snaps[:0], stateCounts{})
	pa.ready = true
	return nil
}

// Lookup finds the record of position pos from head, the first bytes of the
// block's payload; every call must pass a prefix of the same payload, at
// least as long as the bytes the last call asked for. When head is too
// short it returns need, a length past len(head) to decompress before
// asking again; otherwise need is 0 and rec is the record. A record stays
// valid while head's bytes do.
func (pa *Partial) Lookup(head []byte, pos int) (rec Record, need int, err error) {
	if len(head) > pa.total {
		return Record{}, 0, fmt.Errorf("changepoint: %d bytes of a %d-byte payload", len(head), pa.total)
	}
	if pos < 0 || pos >= pa.p.Positions {
		return Record{}, 0, fmt.Errorf("changepoint: position %d outside a block of %d", pos, pa.p.Positions)
	}
	if !pa.ready {
		if len(head) < headerBytes {
			return Record{}, headerBytes, nil
		}
		if err := pa.readHeader(head); err != nil {
			return Record{}, 0, err
		}
	}
	if n := headerBytes + pos>>2 + 1; len(head) < n {
		return Record{}, n, nil
	}
	pa.cnt.states = head[headerBytes:min(uint64(len(head)), pa.constOff)]
	// Snapshot every whole stride before pos; those states are all in head.
	sid := pos / stride
	for len(pa.snaps) <= sid {
		i := len(pa.snaps) - 1
		c := pa.snaps[i]
		lo := i * stride
		rest := uint32(stride)
		for st := Single; st <= Multi; st++ {
			k := uint32(pa.cnt.countBefore(st, lo, lo+stride))
			c[st] += k
			rest -= k
		}
		c[Const] += rest
		pa.snaps = append(pa.snaps, c)
	}
	st := pa.cnt.stateAt(pos)
	idx := uint64(pa.snaps[sid][st]) + uint64(pa.cnt.countBefore(st, sid*stride, pos))
	if idx >= pa.nRecs[st] {
		return Record{}, 0, corrupt("state vector holds more than the %d %s records", pa.nRecs[st], st)
	}
	rec = Record{State: st, b: pa.view}
	eb := uint64(pa.p.EntryBytes)
	switch st {
	case Const:
		off := pa.constOff + idx*eb
		if uint64(len(head)) < off+eb {
			return Record{}, int(off + eb), nil
		}
		rec.entry = head[off : off+eb]
		if err := pa.view.checkRank(rec.entry, "constant", int(idx)); err != nil {
			return Record{}, 0, err
		}
		return rec, 0, nil
	case Single, Double:
		return pa.walkTo(head, st, idx)
	}
	dir := pa.dirOff + 4*idx
	if uint64(len(head)) < dir+8 {
		return Record{}, int(dir + 8), nil
	}
	le := binary.LittleEndian
	lo, hi := uint64(le.Uint32(head[dir:])), uint64(le.Uint32(head[dir+4:]))
	if hi < lo || pa.multiOff+hi > uint64(pa.total) {
		return Record{}, 0, corrupt("multi record %d spans bytes %d..%d of a %d-byte stream", idx, lo, hi, uint64(pa.total)-pa.multiOff)
	}
	if uint64(len(head)) < pa.multiOff+hi {
		return Record{}, int(pa.multiOff + hi), nil
	}
	rec.entry = head[pa.multiOff+lo : pa.multiOff+hi]
	if err := pa.view.checkMulti(rec.entry, int(idx)); err != nil {
		return Record{}, 0, err
	}
	rec.DrawEnd = rec.entry[0]&0x80 != 0
	return rec, 0, nil
}

// walkTo returns SINGLE or DOUBLE record idx, walking and checking the
// records between the last walked one and it.
func (pa *Partial) walkTo(head []byte, st State, idx uint64) (Record, int, error) {
	eb := uint64(pa.p.EntryBytes)
	fixed := uint64(st) // the change bytes: 1 for SINGLE, 2 for DOUBLE
	narrow, wide := fixed+uint64(st)*eb, fixed+uint64(st+1)*eb
	w := &pa.walks[st]
	lo, hi := pa.streamLo[st], pa.streamHi[st]
	rec := Record{State: st, b: pa.view}
	if idx < w.n {
		short := w.shortBefore(idx)
		off := lo + short*narrow + (idx-short)*wide
		rec.DrawEnd = w.short[idx>>6]>>(idx&63)&1 != 0
		width := wide
		if rec.DrawEnd {
			width = narrow
		}
		rec.entry = head[off : off+width]
		return rec, 0, nil
	}
	off := lo + w.bytes
	avail := min(uint64(len(head)), hi)
	layers, ranks := pa.p.Layers, pa.p.Ranks
	for j := w.n; ; j++ {
		// The common case, inline: a whole record of the widest width in
		// head that passes every check. Anything else takes the slow path
		// below, which asks for more bytes or names what is wrong.
		if off+wide <= avail {
			r := head[off : off+wide]
			var short, ok bool
			if st == Single {
				h := int(r[0] & 0x7f)
				short, ok = r[0]&0x80 != 0, h >= 1 && h < layers
			} else {
				h1, h2 := int(r[0]), int(r[1]&0x7f)
				short, ok = r[1]&0x80 != 0, h1 >= 1 && h1 < h2 && h2 < layers
			}
			width := wide
			if short {
				width = narrow
			}
			for k := fixed; k < width && ok; k += eb {
				rank := int(r[k])
				if eb == 2 {
					rank |= int(r[k+1]) << 8
				}
				ok = rank < ranks
			}
			if ok {
				if w.n&63 == 0 {
					w.grow()
				}
				w.add(short, width)
				if j == idx {
					rec.DrawEnd = short
					rec.entry = r[:width]
					return rec, 0, nil
				}
				off += width
				continue
			}
		}
		if end := min(off+wide, hi); uint64(len(head)) < end {
			// Ask for no more than the records up to idx can span: as if
			// all but the last were short. Asking for the widest would
			// decompress up to half as much again as the walk needs; a
			// few more rounds cost little, as the walk resumes.
			return Record{}, int(min(off+(idx-j)*narrow+wide, hi)), nil
		}
		s := head[off:min(hi, uint64(len(head)))]
		var width int
		var drawEnd bool
		var err error
		if st == Single {
			width, drawEnd, err = pa.view.checkSingle(s, int(j))
		} else {
			width, drawEnd, err = pa.view.checkDouble(s, int(j))
		}
		if err != nil {
			return Record{}, 0, err
		}
		if w.n&63 == 0 {
			w.grow()
		}
		w.add(drawEnd, uint64(width))
		if j == idx {
			rec.DrawEnd = drawEnd
			rec.entry = head[off : off+uint64(width)]
			return rec, 0, nil
		}
		off += uint64(width)
	}
}

// LookupPrefix finds the record of position pos from head, the first bytes
// of a block's decompressed payload of total bytes, so a reader can stop
// decompressing once it has the bytes one position needs: the header, the
// state vector up to pos, and the stream up to its record (for a MULTI
// record, the directory too). When head is too short it returns need, a
// length past len(head) to decompress before asking again; otherwise need is
// 0 and rec is the record. It is one lookup of a fresh Partial, and checks
// what Partial checks.
func LookupPrefix(head []byte, total int, p Params, pos int) (rec Record, need int, err error) {
	pa, err := NewPartial(p, total)
	if err != nil {
		return Record{}, 0, err
	}
	return pa.Lookup(head, pos)
}

// check rejects parameters no pack uses.
func (p Params) check() error {
	if p.Layers < 2 || p.Layers > MaxLayers {
		return fmt.Errorf("changepoint: unsupported stack height %d", p.Layers)
	}
	if p.EntryBytes != 1 && p.EntryBytes != 2 {
		return fmt.Errorf("changepoint: unsupported rank width %d", p.EntryBytes)
	}
	if p.Positions <= 0 {
		return fmt.Errorf("changepoint: block of %d positions", p.Positions)
	}
	return nil
}
