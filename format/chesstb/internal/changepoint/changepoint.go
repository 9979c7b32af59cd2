// Package changepoint decodes one block of a chesstb changepoint pack, the
// container shared by the DTM50 (.lzdtm50) and DTC (.lzdtc) tables.
//
// A pack stores, per position, a value that is a step function over a short
// stack of layers (101 for DTM50: the unbounded DTM and the clocks 0..99; 30
// for DTC: the embedded DTZ row and 29 push budgets). Most positions never
// change along the stack, so each position is classified into one of four
// record shapes, written two bits per position in a state vector:
//
//	CONST  one rank for every layer
//	SINGLE one change:  [h, r0, r1]
//	DOUBLE two changes: [h1, h2, r0, r1, r2]
//	MULTI  k segments:  [k, changepoint bitmap, r0..r(k-1)]
//
// Every non-CONST record may end in DRAW, flagged by the top bit of its last
// h byte (or of the k byte); the trailing rank is then omitted. The package is
// pure: it sees the decompressed payload of one block and nothing else, checks
// every record when the block is decoded, and afterwards answers a lookup in
// time independent of the block size through a prefix index over the state
// vector.
//
// ParseHeader and Decompress read a whole pack file without the prober (the
// package's sweep over the reference files and its fuzz targets use them);
// format/chesstb reads pack headers through its own parser, shared with the
// other table kinds, and hands Decode the decompressed blocks.
package changepoint

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
)

// State is the record shape of one position.
type State uint8

// The four record shapes, numbered as the 2-bit state vector stores them.
const (
	Const State = iota
	Single
	Double
	Multi
)

// String names the state.
func (s State) String() string {
	switch s {
	case Const:
		return "const"
	case Single:
		return "single"
	case Double:
		return "double"
	case Multi:
		return "multi"
	}
	return fmt.Sprintf("state(%d)", uint8(s))
}

// Stack heights of the two packs the format defines.
const (
	// DTM50Layers is the DTM50 stack: layer 0 the unbounded DTM, layer
	// hmc+1 the distance at half-move clock hmc.
	DTM50Layers = 101
	// DTCLayers is the DTC stack: index 0 the embedded DTZ row, index j the
	// push budget 29-j.
	DTCLayers = 30
)

// MaxLayers is the tallest stack a record can describe: the change count
// shares its byte with the draw-end hint, leaving seven bits.
const MaxLayers = 127

// ErrCorrupt is matched (errors.Is) by every error a malformed payload gives.
var ErrCorrupt = errors.New("corrupt changepoint block")

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// Params describes the table a block belongs to; the payload itself does not
// carry them.
type Params struct {
	// Layers is the stack height (DTM50Layers or DTCLayers).
	Layers int
	// EntryBytes is the width of one rank, 1 or 2.
	EntryBytes int
	// Positions is the number of positions the block must hold.
	Positions int
	// Ranks is the size of the table's rank table; every stored rank of a
	// decisive record must be below it.
	Ranks int
}

// BitmapBytes is the width of a MULTI record's changepoint bitmap for a stack
// of the given height: whole 32-bit words.
func BitmapBytes(layers int) int { return (layers + 31) / 32 * 4 }

// stride is the number of positions between two snapshots of the prefix
// index; a lookup walks at most this many 2-bit states.
const stride = 256

// snapshot holds the counts of every state before the first position of a
// stride, and how many of the SINGLE and DOUBLE records before it are the
// short (draw-ended) kind, which fixes their byte offsets.
type snapshot struct {
	nConst, nSingle, nDouble, nMulti uint32
	nSingleShort, nDoubleShort       uint32
}

// Block is one decoded, validated block. It is immutable and safe for
// concurrent use.
type Block struct {
	p                   Params
	bm                  int // bitmap bytes
	states              []byte
	constStream         []byte
	singleStream        []byte
	doubleStream        []byte
	multiDir            []byte // (nMulti+1) little-endian uint32
	multiStream         []byte
	singleHints         []uint64 // bit j: SINGLE record j is draw-ended
	doubleHints         []uint64
	prefix              []snapshot
	nSingle, nDouble    int
	nMulti, nConst      int
	payloadBytes, extra int
}

const headerBytes = 24

// Decode parses and validates the decompressed payload of one block. Every
// record is checked (shape, changepoints, lengths, ranks), so a lookup on the
// returned block cannot fail or read out of bounds.
func Decode(payload []byte, p Params) (*Block, error) {
	if p.Layers < 2 || p.Layers > MaxLayers {
		return nil, fmt.Errorf("changepoint: unsupported stack height %d", p.Layers)
	}
	if p.EntryBytes != 1 && p.EntryBytes != 2 {
		return nil, fmt.Errorf("changepoint: unsupported rank width %d", p.EntryBytes)
	}
	if p.Positions <= 0 {
		return nil, fmt.Errorf("changepoint: block of %d positions", p.Positions)
	}
	if len(payload) < headerBytes {
		return nil, corrupt("payload of %d bytes is shorter than its %d-byte header", len(payload), headerBytes)
	}
	le := binary.LittleEndian
	np := le.Uint32(payload[0:])
	ns := le.Uint32(payload[4:])
	nd := le.Uint32(payload[8:])
	nm := le.Uint32(payload[12:])
	ssBytes := le.Uint32(payload[16:])
	dsBytes := le.Uint32(payload[20:])
	if uint64(np) != uint64(p.Positions) {
		return nil, corrupt("payload holds %d positions, the table says %d", np, p.Positions)
	}
	if uint64(ns)+uint64(nd)+uint64(nm) > uint64(np) {
		return nil, corrupt("%d+%d+%d non-constant records exceed %d positions", ns, nd, nm, np)
	}
	b := &Block{p: p, bm: BitmapBytes(p.Layers), nSingle: int(ns), nDouble: int(nd), nMulti: int(nm)}
	b.nConst = p.Positions - b.nSingle - b.nDouble - b.nMulti
	eb := p.EntryBytes

	off := headerBytes
	take := func(n uint64, what string) ([]byte, error) {
		if n > uint64(len(payload)-off) {
			return nil, corrupt("%s of %d bytes at offset %d runs past the %d-byte payload", what, n, off, len(payload))
		}
		s := payload[off : off+int(n)]
		off += int(n)
		return s, nil
	}
	var err error
	if b.states, err = take(uint64(p.Positions*2+7)/8, "state vector"); err != nil {
		return nil, err
	}
	if b.constStream, err = take(uint64(b.nConst)*uint64(eb), "constant stream"); err != nil {
		return nil, err
	}
	if b.singleStream, err = take(uint64(ssBytes), "single stream"); err != nil {
		return nil, err
	}
	if b.doubleStream, err = take(uint64(dsBytes), "double stream"); err != nil {
		return nil, err
	}
	off += (4 - off&3) & 3
	if off > len(payload) {
		return nil, corrupt("payload ends before the multi directory")
	}
	if b.multiDir, err = take(uint64(nm+1)*4, "multi directory"); err != nil {
		return nil, err
	}
	b.multiStream = payload[off:]

	if err := b.checkStates(); err != nil {
		return nil, err
	}
	if err := b.checkConst(); err != nil {
		return nil, err
	}
	if b.singleHints, err = b.walkSingles(); err != nil {
		return nil, err
	}
	if b.doubleHints, err = b.walkDoubles(); err != nil {
		return nil, err
	}
	if err := b.checkMultis(); err != nil {
		return nil, err
	}
	b.buildPrefix()
	b.payloadBytes = len(payload)
	b.extra = len(b.prefix)*24 + (len(b.singleHints)+len(b.doubleHints))*8
	return b, nil
}

// Bytes is the memory the block holds, for a cache's byte budget.
func (b *Block) Bytes() int { return b.payloadBytes + b.extra + 256 }

// Positions is the number of positions in the block.
func (b *Block) Positions() int { return b.p.Positions }

// Counts returns how many positions of the block have each state.
func (b *Block) Counts() (cnst, single, double, multi int) {
	return b.nConst, b.nSingle, b.nDouble, b.nMulti
}

func (b *Block) stateAt(pos int) State {
	return State(b.states[pos>>2] >> (uint(pos&3) * 2) & 3)
}

// checkStates verifies that the state vector's counts match the header and
// that the padding bits after the last position are zero.
func (b *Block) checkStates() error {
	var cnt [4]int
	for st := Single; st <= Multi; st++ {
		cnt[st] = b.countBefore(st, 0, b.p.Positions)
	}
	if cnt[Single] != b.nSingle || cnt[Double] != b.nDouble || cnt[Multi] != b.nMulti {
		return corrupt("state vector counts %d/%d/%d single/double/multi, header says %d/%d/%d",
			cnt[Single], cnt[Double], cnt[Multi], b.nSingle, b.nDouble, b.nMulti)
	}
	return nil
}

func (b *Block) rank(s []byte) uint16 {
	if b.p.EntryBytes == 1 {
		return uint16(s[0])
	}
	return binary.LittleEndian.Uint16(s)
}

func (b *Block) checkRank(s []byte, what string, idx int) error {
	if r := b.rank(s); int(r) >= b.p.Ranks {
		return corrupt("%s record %d stores rank %d, the table has %d", what, idx, r, b.p.Ranks)
	}
	return nil
}

// checkConst checks the constant stream's ranks too, although the cells of
// drawn and illegal positions are never read (the WDL class answers them):
// the encoder fills those with the last decisive rank, so a valid table never
// stores an out-of-range rank there either.
func (b *Block) checkConst() error {
	eb := b.p.EntryBytes
	if eb == 1 {
		var maxRank byte
		for _, r := range b.constStream {
			maxRank = max(maxRank, r)
		}
		if b.nConst > 0 && int(maxRank) >= b.p.Ranks {
			return corrupt("constant stream stores rank %d, the table has %d", maxRank, b.p.Ranks)
		}
		return nil
	}
	for j := 0; j < b.nConst; j++ {
		if err := b.checkRank(b.constStream[j*eb:], "constant", j); err != nil {
			return err
		}
	}
	return nil
}

func (b *Block) walkSingles() ([]uint64, error) {
	hints := make([]uint64, (b.nSingle+63)/64)
	s := b.singleStream
	for j := 0; j < b.nSingle; j++ {
		w, drawEnd, err := b.checkSingle(s, j)
		if err != nil {
			return nil, err
		}
		if drawEnd {
			hints[j>>6] |= 1 << (j & 63)
		}
		s = s[w:]
	}
	if len(s) != 0 {
		return nil, corrupt("single stream has %d bytes after its last record", len(s))
	}
	return hints, nil
}

func (b *Block) walkDoubles() ([]uint64, error) {
	hints := make([]uint64, (b.nDouble+63)/64)
	s := b.doubleStream
	for j := 0; j < b.nDouble; j++ {
		w, drawEnd, err := b.checkDouble(s, j)
		if err != nil {
			return nil, err
		}
		if drawEnd {
			hints[j>>6] |= 1 << (j & 63)
		}
		s = s[w:]
	}
	if len(s) != 0 {
		return nil, corrupt("double stream has %d bytes after its last record", len(s))
	}
	return hints, nil
}

// checkSingle checks SINGLE record j at the start of s and returns its width.
func (b *Block) checkSingle(s []byte, j int) (w int, drawEnd bool, err error) {
	eb := b.p.EntryBytes
	if len(s) < 1+eb {
		return 0, false, corrupt("single record %d truncated", j)
	}
	h := int(s[0] & 0x7f)
	drawEnd = s[0]&0x80 != 0
	if h < 1 || h >= b.p.Layers {
		return 0, false, corrupt("single record %d changes at layer %d, outside 1..%d", j, h, b.p.Layers-1)
	}
	w = 1 + 2*eb
	if drawEnd {
		w = 1 + eb
	}
	if len(s) < w {
		return 0, false, corrupt("single record %d truncated", j)
	}
	for r := 1; r < w; r += eb {
		if err := b.checkRank(s[r:], "single", j); err != nil {
			return 0, false, err
		}
	}
	return w, drawEnd, nil
}

// checkDouble checks DOUBLE record j at the start of s and returns its width.
func (b *Block) checkDouble(s []byte, j int) (w int, drawEnd bool, err error) {
	eb := b.p.EntryBytes
	if len(s) < 2+2*eb {
		return 0, false, corrupt("double record %d truncated", j)
	}
	h1, h2 := int(s[0]), int(s[1]&0x7f)
	drawEnd = s[1]&0x80 != 0
	if h1 < 1 || h1 >= h2 || h2 >= b.p.Layers {
		return 0, false, corrupt("double record %d changes at layers %d and %d, not 1 <= h1 < h2 < %d", j, h1, h2, b.p.Layers)
	}
	w = 2 + 3*eb
	if drawEnd {
		w = 2 + 2*eb
	}
	if len(s) < w {
		return 0, false, corrupt("double record %d truncated", j)
	}
	for r := 2; r < w; r += eb {
		if err := b.checkRank(s[r:], "double", j); err != nil {
			return 0, false, err
		}
	}
	return w, drawEnd, nil
}

// checkMulti checks MULTI record j, exactly the bytes e.
func (b *Block) checkMulti(e []byte, j int) error {
	eb := b.p.EntryBytes
	if len(e) < 1+b.bm {
		return corrupt("multi record %d truncated", j)
	}
	k := int(e[0] & 0x7f)
	drawEnd := e[0]&0x80 != 0
	if k < 3 || k > b.p.Layers {
		return corrupt("multi record %d has %d segments", j, k)
	}
	cnt := 0
	for i, x := range e[1 : 1+b.bm] {
		for x != 0 {
			bit := i*8 + bits.TrailingZeros8(x)
			x &= x - 1
			if bit >= b.p.Layers {
				return corrupt("multi record %d marks layer %d of a %d-layer stack", j, bit, b.p.Layers)
			}
			cnt++
		}
	}
	if e[1]&1 == 0 {
		return corrupt("multi record %d has no segment at layer 0", j)
	}
	if cnt != k {
		return corrupt("multi record %d has %d changepoints, its count says %d", j, cnt, k)
	}
	nr := k
	if drawEnd {
		nr--
	}
	if len(e) != 1+b.bm+nr*eb {
		return corrupt("multi record %d is %d bytes, %d expected", j, len(e), 1+b.bm+nr*eb)
	}
	for r := 0; r < nr; r++ {
		if err := b.checkRank(e[1+b.bm+r*eb:], "multi", j); err != nil {
			return err
		}
	}
	return nil
}

func (b *Block) multiOffset(j int) uint32 {
	return binary.LittleEndian.Uint32(b.multiDir[4*j:])
}

func (b *Block) checkMultis() error {
	if b.multiOffset(0) != 0 {
		return corrupt("multi directory starts at %d, not 0", b.multiOffset(0))
	}
	for j := 0; j < b.nMulti; j++ {
		lo, hi := b.multiOffset(j), b.multiOffset(j+1)
		if hi < lo || uint64(hi) > uint64(len(b.multiStream)) {
			return corrupt("multi record %d spans bytes %d..%d of a %d-byte stream", j, lo, hi, len(b.multiStream))
		}
		if err := b.checkMulti(b.multiStream[lo:hi], j); err != nil {
			return err
		}
	}
	// The encoder pads the stream to a 4-byte boundary with zeros.
	if tail := len(b.multiStream) - int(b.multiOffset(b.nMulti)); tail < 0 || tail > 3 {
		return corrupt("multi stream has %d bytes after its last record", tail)
	}
	return nil
}

func popcountBits(words []uint64, lo, hi int) int {
	n := 0
	for lo < hi {
		w := words[lo>>6] >> (uint(lo) & 63)
		span := 64 - lo&63
		if hi-lo < span {
			span = hi - lo
			w &= 1<<uint(span) - 1
		}
		n += bits.OnesCount64(w)
		lo += span
	}
	return n
}

func (b *Block) buildPrefix() {
	n := (b.p.Positions + stride - 1) / stride
	b.prefix = make([]snapshot, n)
	var cur snapshot
	for s := 0; s < n; s++ {
		b.prefix[s] = cur
		lo := s * stride
		hi := min(lo+stride, b.p.Positions)
		ns0, nd0 := cur.nSingle, cur.nDouble
		single := b.countBefore(Single, lo, hi)
		double := b.countBefore(Double, lo, hi)
		multi := b.countBefore(Multi, lo, hi)
		cur.nSingle += uint32(single)
		cur.nDouble += uint32(double)
		cur.nMulti += uint32(multi)
		cur.nConst += uint32(hi - lo - single - double - multi)
		cur.nSingleShort += uint32(popcountBits(b.singleHints, int(ns0), int(cur.nSingle)))
		cur.nDoubleShort += uint32(popcountBits(b.doubleHints, int(nd0), int(cur.nDouble)))
	}
}

// countBefore counts the positions of state st in [lo, pos) by whole bytes of
// the state vector where it can.
func (b *Block) countBefore(st State, lo, pos int) int {
	n := 0
	i := lo
	for ; i < pos && i&3 != 0; i++ {
		if b.stateAt(i) == st {
			n++
		}
	}
	for ; i+32 <= pos; i += 32 {
		w := binary.LittleEndian.Uint64(b.states[i>>2:])
		n += countState(w, st)
	}
	for ; i < pos; i++ {
		if b.stateAt(i) == st {
			n++
		}
	}
	return n
}

func countState(w uint64, st State) int {
	const even = 0x5555555555555555
	lo := w & even
	hi := (w >> 1) & even
	switch st {
	case Single:
		return bits.OnesCount64(lo &^ hi)
	case Double:
		return bits.OnesCount64(hi &^ lo)
	case Multi:
		return bits.OnesCount64(lo & hi)
	}
	return 32 - bits.OnesCount64(lo|hi)
}

// Record is one position's decoded record: a view into its block.
type Record struct {
	State   State
	DrawEnd bool
	b       *Block
	entry   []byte
}

// Lookup returns the record of the position at index pos in the block.
func (b *Block) Lookup(pos int) (Record, error) {
	if pos < 0 || pos >= b.p.Positions {
		return Record{}, fmt.Errorf("changepoint: position %d outside a block of %d", pos, b.p.Positions)
	}
	st := b.stateAt(pos)
	sid := pos / stride
	snap := b.prefix[sid]
	idx := b.countBefore(st, sid*stride, pos)
	eb := b.p.EntryBytes
	r := Record{State: st, b: b}
	switch st {
	case Const:
		idx += int(snap.nConst)
		r.entry = b.constStream[idx*eb : idx*eb+eb]
	case Single:
		idx += int(snap.nSingle)
		short := int(snap.nSingleShort) + popcountBits(b.singleHints, int(snap.nSingle), idx)
		off := short*(1+eb) + (idx-short)*(1+2*eb)
		r.DrawEnd = b.singleHints[idx>>6]>>(idx&63)&1 != 0
		w := 1 + 2*eb
		if r.DrawEnd {
			w = 1 + eb
		}
		r.entry = b.singleStream[off : off+w]
	case Double:
		idx += int(snap.nDouble)
		short := int(snap.nDoubleShort) + popcountBits(b.doubleHints, int(snap.nDouble), idx)
		off := short*(2+2*eb) + (idx-short)*(2+3*eb)
		r.DrawEnd = b.doubleHints[idx>>6]>>(idx&63)&1 != 0
		w := 2 + 3*eb
		if r.DrawEnd {
			w = 2 + 2*eb
		}
		r.entry = b.doubleStream[off : off+w]
	default:
		idx += int(snap.nMulti)
		r.entry = b.multiStream[b.multiOffset(idx):b.multiOffset(idx+1)]
		r.DrawEnd = r.entry[0]&0x80 != 0
	}
	return r, nil
}

// Segments is the number of constant runs along the stack, the trailing DRAW
// run of a draw-ended record included.
func (r Record) Segments() int {
	switch r.State {
	case Const:
		return 1
	case Single:
		return 2
	case Double:
		return 3
	}
	return int(r.entry[0] & 0x7f)
}

// Segment returns where run i starts and its rank; draw reports the
// synthesized trailing DRAW run of a draw-ended record, which has no rank.
func (r Record) Segment(i int) (start int, rank uint16, draw bool) {
	eb := r.b.p.EntryBytes
	n := r.Segments()
	if i < 0 || i >= n {
		return 0, 0, false
	}
	draw = r.DrawEnd && i == n-1
	switch r.State {
	case Const:
		return 0, r.b.rank(r.entry), false
	case Single:
		if i == 1 {
			start = int(r.entry[0] & 0x7f)
		}
		if !draw {
			rank = r.b.rank(r.entry[1+i*eb:])
		}
		return start, rank, draw
	case Double:
		switch i {
		case 1:
			start = int(r.entry[0])
		case 2:
			start = int(r.entry[1] & 0x7f)
		}
		if !draw {
			rank = r.b.rank(r.entry[2+i*eb:])
		}
		return start, rank, draw
	}
	bm := r.entry[1 : 1+r.b.bm]
	seen := 0
	for byteIdx, x := range bm {
		for x != 0 {
			bit := bits.TrailingZeros8(x)
			x &= x - 1
			if seen == i {
				start = byteIdx*8 + bit
				if !draw {
					rank = r.b.rank(r.entry[1+r.b.bm+i*eb:])
				}
				return start, rank, draw
			}
			seen++
		}
	}
	return 0, 0, false // unreachable on a validated block
}

// At returns the rank at the given layer, or draw where the record's
// trailing DRAW run covers it. A layer outside the stack reads as the last.
func (r Record) At(layer int) (rank uint16, draw bool) {
	eb := r.b.p.EntryBytes
	switch r.State {
	case Const:
		return r.b.rank(r.entry), false
	case Single:
		if layer < int(r.entry[0]&0x7f) {
			return r.b.rank(r.entry[1:]), false
		}
		if r.DrawEnd {
			return 0, true
		}
		return r.b.rank(r.entry[1+eb:]), false
	case Double:
		h1, h2 := int(r.entry[0]), int(r.entry[1]&0x7f)
		switch {
		case layer < h1:
			return r.b.rank(r.entry[2:]), false
		case layer < h2:
			return r.b.rank(r.entry[2+eb:]), false
		case r.DrawEnd:
			return 0, true
		}
		return r.b.rank(r.entry[2+2*eb:]), false
	}
	// MULTI: the run is one less than the changepoints at or below layer.
	if layer < 0 {
		layer = 0
	}
	bm := r.entry[1 : 1+r.b.bm]
	n := 0
	for i, x := range bm {
		if i*8 > layer {
			break
		}
		if layer-i*8 < 7 {
			x &= byte(1<<uint(layer-i*8+1) - 1)
		}
		n += bits.OnesCount8(x)
	}
	sel := n - 1
	k := int(r.entry[0] & 0x7f)
	if r.DrawEnd && sel == k-1 {
		return 0, true
	}
	return r.b.rank(r.entry[1+r.b.bm+sel*eb:]), false
}

// DrawFlip is the first layer of a draw-ended record's trailing DRAW run, or
// 0 when the record never turns DRAW.
func (r Record) DrawFlip() int {
	if !r.DrawEnd {
		return 0
	}
	s, _, _ := r.Segment(r.Segments() - 1)
	return s
}
