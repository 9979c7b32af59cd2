package changepoint

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
)

// Partial looks positions up in one block whose payload is decompressed front
// to back and only as far as lookups have needed. It keeps what each lookup
// learned for the next: the state counts of the state vector up to every
// 256th position walked past, and the SINGLE and DOUBLE records walked so
// far, with which of them are draw-ended (that fixes every walked
// record's byte offset). A lookup of a position whose counts and record lie in
// what earlier lookups covered costs no more than Block.Lookup; one further
// in walks only the new part.
//
// Partial checks the header, the bounds of every stream it touches and
// every record it returns, but not the records it only walks past (it takes
// their widths, from their draw-end flags) nor the parts of the block no
// lookup reached: Decode checks a whole payload.
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

// recordWalk is the walked front of a SINGLE or DOUBLE stream.
type recordWalk struct {
	n     uint64   // records walked
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
// opens each hint word first (grow): with that call out of it, add inlines.
func (w *recordWalk) add(short bool, width uint64) {
	j := w.n
	if short {
		w.short[j>>6] |= 1 << (j & 63)
	}
	w.n++
	w.bytes += width
}

// grow opens the hint word of the next 64 records, once the words before
// it are complete. Kept out of line so that the walk's loop stays small.
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
	st, idx, err := pa.recordOf(pos)
	if err != nil {
		return Record{}, 0, err
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

// HeaderBytes is the length of a payload's header, all SetIndex reads.
const HeaderBytes = headerBytes

// Indexed reports whether the Partial's walk index covers every SINGLE and
// DOUBLE record (SetIndex or WalkAll has made it), as LookupIndexed needs.
func (pa *Partial) Indexed() bool {
	return pa.ready && pa.walks[Single].n == pa.nRecs[Single] && pa.walks[Double].n == pa.nRecs[Double]
}

// LookupIndexed is Lookup for an Indexed Partial over payload, a buffer of
// the whole payload's length of which only the ranges ensure has filled
// may be read: it calls ensure(lo, hi) for each range of bytes before it
// reads them (the state vector up to pos, the record, a MULTI record's
// directory entry), so a reader can decompress a payload in pieces and
// only the pieces a lookup reads. A record stays valid while payload's
// bytes do.
func (pa *Partial) LookupIndexed(payload []byte, ensure func(lo, hi int) error, pos int) (Record, error) {
	if len(payload) != pa.total {
		return Record{}, fmt.Errorf("changepoint: %d bytes of a %d-byte payload", len(payload), pa.total)
	}
	if !pa.Indexed() {
		return Record{}, errors.New("changepoint: indexed lookup without a complete walk index")
	}
	if pos < 0 || pos >= pa.p.Positions {
		return Record{}, fmt.Errorf("changepoint: position %d outside a block of %d", pos, pa.p.Positions)
	}
	n := headerBytes + pos>>2 + 1
	if uint64(n) > pa.constOff {
		return Record{}, corrupt("state of position %d past the %d-byte state vector", pos, pa.constOff-headerBytes)
	}
	// With the stride's snapshot at hand, only the stride's states are
	// read.
	from := headerBytes
	if sid := pos / stride; sid < len(pa.snaps) {
		from += sid * stride / 4
	}
	if err := ensure(from, n); err != nil {
		return Record{}, err
	}
	pa.cnt.states = payload[headerBytes:n]
	st, idx, err := pa.recordOf(pos)
	if err != nil {
		return Record{}, err
	}
	eb := uint64(pa.p.EntryBytes)
	// span ensures bytes [lo, hi) and returns the payload through hi, so
	// nothing past them can be read.
	span := func(lo, hi uint64) ([]byte, error) {
		if err := ensure(int(lo), int(hi)); err != nil {
			return nil, err
		}
		return payload[:hi], nil
	}
	switch st {
	case Const:
		off := pa.constOff + idx*eb
		head, err := span(off, off+eb)
		if err != nil {
			return Record{}, err
		}
		rec := Record{State: st, b: pa.view, entry: head[off:]}
		if err := pa.view.checkRank(rec.entry, "constant", int(idx)); err != nil {
			return Record{}, err
		}
		return rec, nil
	case Single, Double:
		w := &pa.walks[st]
		fixed := uint64(st)
		narrow, wide := fixed+uint64(st)*eb, fixed+uint64(st+1)*eb
		short := w.shortBefore(idx)
		off := pa.streamLo[st] + short*narrow + (idx-short)*wide
		width := wide
		if w.short[idx>>6]>>(idx&63)&1 != 0 {
			width = narrow
		}
		hi := pa.streamHi[st]
		head, err := span(off, min(off+width, hi))
		if err != nil {
			return Record{}, err
		}
		rec, _, err := pa.record(head, st, idx, off, hi)
		return rec, err
	}
	dir := pa.dirOff + 4*idx
	head, err := span(dir, dir+8)
	if err != nil {
		return Record{}, err
	}
	le := binary.LittleEndian
	lo, hi := uint64(le.Uint32(head[dir:])), uint64(le.Uint32(head[dir+4:]))
	if hi < lo || pa.multiOff+hi > uint64(pa.total) {
		return Record{}, corrupt("multi record %d spans bytes %d..%d of a %d-byte stream", idx, lo, hi, uint64(pa.total)-pa.multiOff)
	}
	if head, err = span(pa.multiOff+lo, pa.multiOff+hi); err != nil {
		return Record{}, err
	}
	rec := Record{State: st, b: pa.view, entry: head[pa.multiOff+lo:]}
	if err := pa.view.checkMulti(rec.entry, int(idx)); err != nil {
		return Record{}, err
	}
	rec.DrawEnd = rec.entry[0]&0x80 != 0
	return rec, nil
}

// recordOf returns the state of position pos and the index of its record
// among the records of that state, from pa.cnt.states, which holds the
// state vector at least through pos; it snapshots the counts of every
// whole stride before pos on the way.
func (pa *Partial) recordOf(pos int) (State, uint64, error) {
	// Snapshot every whole stride before pos; those states are all held.
	sid := pos / stride
	for len(pa.snaps) <= sid {
		i := len(pa.snaps) - 1
		c := pa.snaps[i]
		// One pass over the stride's eight words counts all three
		// non-constant states.
		var single, double, multi int
		words := pa.cnt.states[i*stride/4:][:stride/4]
		for k := 0; k < len(words); k += 8 {
			w := binary.LittleEndian.Uint64(words[k:])
			const even = 0x5555555555555555
			lo, hi := w&even, (w>>1)&even
			single += bits.OnesCount64(lo &^ hi)
			double += bits.OnesCount64(hi &^ lo)
			multi += bits.OnesCount64(lo & hi)
		}
		c[Single] += uint32(single)
		c[Double] += uint32(double)
		c[Multi] += uint32(multi)
		c[Const] += uint32(stride - single - double - multi)
		pa.snaps = append(pa.snaps, c)
	}
	st := pa.cnt.stateAt(pos)
	idx := uint64(pa.snaps[sid][st]) + uint64(pa.cnt.countBefore(st, sid*stride, pos))
	if idx >= pa.nRecs[st] {
		return st, 0, corrupt("state vector holds more than the %d %s records", pa.nRecs[st], st)
	}
	return st, idx, nil
}

// walkTo returns SINGLE or DOUBLE record idx. The records between the last
// walked one and it are walked past reading only the byte that carries
// their draw-end flag, which fixes their width: nothing else of a record
// moves the records after it. The record returned is checked whole
// (changepoints and ranks), whether walked now or by an earlier lookup, so
// a damaged record is an error when it is read; one that is only walked
// past cannot change another's value, as its width is all the walk takes
// from it.
func (pa *Partial) walkTo(head []byte, st State, idx uint64) (Record, int, error) {
	eb := uint64(pa.p.EntryBytes)
	fixed := uint64(st) // the change bytes: 1 for SINGLE, 2 for DOUBLE
	narrow, wide := fixed+uint64(st)*eb, fixed+uint64(st+1)*eb
	w := &pa.walks[st]
	lo, hi := pa.streamLo[st], pa.streamHi[st]
	if idx < w.n {
		short := w.shortBefore(idx)
		off := lo + short*narrow + (idx-short)*wide
		// A walk index set by SetIndex covers records head may not
		// reach yet.
		width := wide
		if w.short[idx>>6]>>(idx&63)&1 != 0 {
			width = narrow
		}
		if end := min(off+width, hi); uint64(len(head)) < end {
			return Record{}, int(end), nil
		}
		return pa.record(head, st, idx, off, hi)
	}
	off := lo + w.bytes
	avail := min(uint64(len(head)), hi)
	flag := fixed - 1 // the byte whose top bit marks a short record
	for w.n < idx {
		if uint64(len(w.short)) <= w.n>>6 {
			w.grow()
		}
		// Walk up to the end of this hint word, a whole record of the
		// widest width in head at a time, the word kept in a register.
		n, wi := w.n, w.n>>6
		end := min(idx, n|63+1)
		word := w.short[wi]
		for n < end && off+wide <= avail {
			// all ones for a short record: the flag byte's sign,
			// which keeps a multiply off the chain from one
			// record's offset to the next.
			short := uint64(int64(int8(head[off+flag])) >> 7)
			word |= (short & 1) << (n & 63)
			off += wide - short&eb
			n++
		}
		w.short[wi] = word
		w.bytes += off - (lo + w.bytes)
		w.n = n
		if n == end {
			continue
		}
		// The next record may not be whole in head.
		if uint64(len(head)) < min(off+wide, hi) {
			// Ask for no more than the records up to idx can span: as if
			// all but the last were short. Asking for the widest would
			// decompress up to half as much again as the walk needs; a
			// few more rounds cost little, as the walk resumes.
			return Record{}, int(min(off+(idx-n)*narrow+wide, hi)), nil
		}
		// The stream ends within the widest width: only a short record
		// fits, and it is the stream's last.
		if off+narrow > hi || head[off+flag]&0x80 == 0 {
			return Record{}, 0, corrupt("%s stream ends inside record %d", st, n)
		}
		w.short[wi] |= 1 << (n & 63)
		w.bytes += narrow
		w.n++
		off += narrow
	}
	// The record itself: w.n == idx.
	if end := min(off+wide, hi); uint64(len(head)) < end {
		return Record{}, int(end), nil
	}
	rec, need, err := pa.record(head, st, idx, off, hi)
	if err != nil {
		return rec, need, err
	}
	if uint64(len(w.short)) <= w.n>>6 {
		w.grow()
	}
	w.add(rec.DrawEnd, uint64(len(rec.entry)))
	return rec, 0, nil
}

// record checks and returns SINGLE or DOUBLE record idx, at offset off of
// head in a stream ending at hi; head holds the widest record there.
func (pa *Partial) record(head []byte, st State, idx, off, hi uint64) (Record, int, error) {
	s := head[off:min(hi, uint64(len(head)))]
	var width int
	var drawEnd bool
	var err error
	if st == Single {
		width, drawEnd, err = pa.view.checkSingle(s, int(idx))
	} else {
		width, drawEnd, err = pa.view.checkDouble(s, int(idx))
	}
	if err != nil {
		return Record{}, 0, err
	}
	return Record{State: st, b: pa.view, DrawEnd: drawEnd, entry: s[:width]}, 0, nil
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

// indexMagic starts a serialised walk index; a change of its layout
// changes it.
const indexMagic = "cpwalk2\x00"

// WalkAll walks both streams of the whole payload, so that Index describes
// every SINGLE and DOUBLE record and later lookups walk nothing.
func (pa *Partial) WalkAll(payload []byte) error {
	if len(payload) != pa.total {
		return fmt.Errorf("changepoint: %d bytes of a %d-byte payload", len(payload), pa.total)
	}
	if !pa.ready {
		if err := pa.readHeader(payload); err != nil {
			return err
		}
	}
	for _, st := range []State{Single, Double} {
		if n := pa.nRecs[st]; n > 0 {
			if _, _, err := pa.walkTo(payload, st, n-1); err != nil {
				return err
			}
		}
	}
	// And the state counts of every stride, so a lookup after SetIndex
	// needs only its own stride of the state vector.
	pa.cnt.states = payload[headerBytes:pa.constOff]
	_, _, err := pa.recordOf(pa.p.Positions - 1)
	return err
}

// Index serialises the draw-end flags of the SINGLE and DOUBLE records
// walked so far, for SetIndex on another Partial of the same payload once
// WalkAll has walked them all: they are what a walk computes and the only
// part of the index that costs a walk (the state counts are a popcount
// away).
func (pa *Partial) Index() []byte {
	out := []byte(indexMagic)
	for _, st := range []State{Single, Double} {
		w := &pa.walks[st]
		out = binary.LittleEndian.AppendUint64(out, w.n)
		for _, word := range w.short[:(w.n+63)/64] {
			out = binary.LittleEndian.AppendUint64(out, word)
		}
	}
	out = binary.LittleEndian.AppendUint64(out, uint64(len(pa.snaps)))
	for _, c := range pa.snaps {
		for _, n := range c {
			out = binary.LittleEndian.AppendUint32(out, n)
		}
	}
	return out
}

// SetIndex gives a Partial that has walked nothing yet the complete walk
// index of its payload, as Index made it after WalkAll; head is at least
// the payload's header. An index that does not fit the header exactly
// (record counts, stream lengths, no flag past the last record) is
// refused, and the Partial is left as it was, to walk: any one damaged bit
// is refused so. The index carries no checksum of its own; whoever keeps it
// checks it as the payload.
func (pa *Partial) SetIndex(head, index []byte) error {
	if !pa.ready {
		if len(head) < headerBytes {
			return fmt.Errorf("changepoint: %d bytes hold no header", len(head))
		}
		if err := pa.readHeader(head); err != nil {
			return err
		}
	}
	if pa.walks[Single].n != 0 || pa.walks[Double].n != 0 {
		return errors.New("changepoint: walk index set on a Partial that has walked")
	}
	rest, ok := bytes.CutPrefix(index, []byte(indexMagic))
	if !ok {
		return corrupt("walk index has no magic")
	}
	eb := uint64(pa.p.EntryBytes)
	var walks [2]recordWalk
	for i, st := range []State{Single, Double} {
		if len(rest) < 8 {
			return corrupt("walk index truncated")
		}
		n := binary.LittleEndian.Uint64(rest)
		rest = rest[8:]
		words := (n + 63) / 64
		if n != pa.nRecs[st] || uint64(len(rest))/8 < words {
			return corrupt("walk index of %d %s records, the block holds %d", n, st, pa.nRecs[st])
		}
		w := &walks[i]
		w.n = n
		w.short = make([]uint64, words)
		w.cum = make([]uint32, words)
		var c uint32
		for k := range w.short {
			word := binary.LittleEndian.Uint64(rest[8*k:])
			if k == len(w.short)-1 && n&63 != 0 {
				if word>>(n&63) != 0 {
					return corrupt("walk index flags records past its count")
				}
			}
			w.short[k], w.cum[k] = word, c
			c += uint32(bits.OnesCount64(word))
		}
		rest = rest[8*words:]
		fixed := uint64(st)
		narrow, wide := fixed+uint64(st)*eb, fixed+uint64(st+1)*eb
		w.bytes = uint64(c)*narrow + (n-uint64(c))*wide
		if w.bytes != pa.streamHi[st]-pa.streamLo[st] {
			return corrupt("walk index spans %d bytes of a %d-byte %s stream", w.bytes, pa.streamHi[st]-pa.streamLo[st], st)
		}
	}
	snaps, err := pa.parseSnaps(rest)
	if err != nil {
		return err
	}
	pa.walks[Single], pa.walks[Double] = walks[0], walks[1]
	pa.snaps = snaps
	return nil
}

// parseSnaps reads the state counts of every stride, the end of a walk
// index: each snapshot's counts must add up to the positions before it
// and none may fall or pass the header's record counts, so any one
// damaged bit is refused.
func (pa *Partial) parseSnaps(rest []byte) ([]stateCounts, error) {
	if len(rest) < 8 {
		return nil, corrupt("walk index truncated")
	}
	n := binary.LittleEndian.Uint64(rest)
	rest = rest[8:]
	if want := uint64((pa.p.Positions-1)/stride + 1); n != want || uint64(len(rest)) != 16*n {
		return nil, corrupt("walk index of %d state snapshots in %d bytes, the block has %d strides", n, len(rest), want)
	}
	snaps := make([]stateCounts, n)
	for i := range snaps {
		var sum uint64
		for st := range snaps[i] {
			c := binary.LittleEndian.Uint32(rest[16*i+4*st:])
			if i > 0 && c < snaps[i-1][st] || uint64(c) > pa.nRecs[st] {
				return nil, corrupt("walk index: state snapshot %d out of order", i)
			}
			snaps[i][st] = c
			sum += uint64(c)
		}
		if sum != uint64(i)*stride {
			return nil, corrupt("walk index: state snapshot %d counts %d positions, not %d", i, sum, i*stride)
		}
	}
	return snaps, nil
}
