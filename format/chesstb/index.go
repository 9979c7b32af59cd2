package chesstb

import (
	"fmt"
	"math/bits"
	"sync"

	"github.com/tbfs/tbfs/chess"
)

// This file maps a position to its cell in a stored table, exactly as the
// chesstb generator lays cells out:
//
//	index = pawnSlice*pawnStride + kingSlice*withinSize + within
//
// The king pair picks a king slice after the position is moved by a board
// symmetry into its canonical orientation (the eight-element dihedral group
// without pawns, the file mirror with them). Pawns pick a pawn slice: the rank
// of the (white, black) pawn placement among the placements whose squares do
// not collide. Every other piece class contributes the colex rank of its
// sorted squares ("binomial ranking" of identical pieces), and the classes are
// composed in a mixed radix whose digit order is the per-colour permutation
// stored in the table header.

// pieceSet is a board reduced to what the index needs: one bitboard per
// colour and piece type, and the side to move.
type pieceSet struct {
	bb  [2][7]uint64
	stm chess.Color
}

// pieceSetOf copies the men of a position.
func pieceSetOf(p *chess.Position) pieceSet {
	var ps pieceSet
	for c := chess.White; c <= chess.Black; c++ {
		for pt := chess.Pawn; pt <= chess.King; pt++ {
			ps.bb[c][pt] = uint64(p.Pieces(c, pt))
		}
	}
	ps.stm = p.SideToMove()
	return ps
}

// mirrored is the colour flip of ps: ranks reversed, colours and the side to
// move swapped.
func (ps *pieceSet) mirrored() pieceSet {
	var out pieceSet
	for c := range 2 {
		for pt := chess.Pawn; pt <= chess.King; pt++ {
			out.bb[1-c][pt] = bits.ReverseBytes64(ps.bb[c][pt])
		}
	}
	out.stm = ps.stm.Other()
	return out
}

func popcount(b uint64) int { return bits.OnesCount64(b) }

// binomial[n][k] = C(n, k) for n <= 64, k <= 7.
var binomial = func() (b [65][8]uint64) {
	for n := 0; n <= 64; n++ {
		b[n][0] = 1
		for k := 1; k <= 7; k++ {
			if n > 0 {
				b[n][k] = b[n-1][k-1] + b[n-1][k]
			}
		}
	}
	return b
}()

// symmetry is the board symmetry group a material is indexed under.
type symmetry uint8

const (
	fileMirror symmetry = iota // pawnful: a-h file flip only
	dihedral                   // pawnless: the eight rotations and reflections
)

// transform is an element of the dihedral group: bit 0 flips files, bit 1
// flips ranks, bit 2 then swaps file and rank (the a1-h8 reflection).
type transform uint8

const diagTransform transform = 4

func (t transform) apply(sq int) int {
	f, r := sq&7, sq>>3
	if t&1 != 0 {
		f = 7 - f
	}
	if t&2 != 0 {
		r = 7 - r
	}
	if t&4 != 0 {
		f, r = r, f
	}
	return r*8 + f
}

func (t transform) applyBB(b uint64) uint64 {
	if t == 0 {
		return b
	}
	sqs := &transformedSquare[t&7]
	var out uint64
	for b != 0 {
		sq := bits.TrailingZeros64(b)
		b &= b - 1
		out |= 1 << sqs[sq]
	}
	return out
}

// transformedSquare[t][sq] is t.apply(sq), looked up by applyBB, which
// every index computes for every piece.
var transformedSquare = func() (m [8][64]uint8) {
	for t := range m {
		for sq := range m[t] {
			m[t][sq] = uint8(transform(t).apply(sq))
		}
	}
	return m
}()

// kingEntry is what the king-pair table knows about one (white king, black
// king) placement.
type kingEntry struct {
	slice int32     // king slice id, -1 for an impossible pair
	t     transform // symmetry that brings the pair to its canonical form
	stab  bool      // both kings on the a1-h8 diagonal: the diagonal flip keeps them
}

// kingSlices enumerates the canonical king pairs of one symmetry group.
type kingSlices struct {
	n      int
	lookup [64 * 64]kingEntry
}

// kingTables returns the king-pair table of each symmetry group, built on
// first use (64 KiB and a sweep of every pair): a process that opens no
// chesstb table, such as "tbprobe version", never pays for them.
var kingTables = [2]func() *kingSlices{
	sync.OnceValue(func() *kingSlices { return buildKingSlices(fileMirror) }),
	sync.OnceValue(func() *kingSlices { return buildKingSlices(dihedral) }),
}

func kingsAdjacent(a, b int) bool {
	df, dr := a&7-b&7, a>>3-b>>3
	return df >= -1 && df <= 1 && dr >= -1 && dr <= 1
}

func onMainDiagonal(sq int) bool { return sq&7 == sq>>3 }

func anchorLegal(sym symmetry, wk int) bool {
	f, r := wk&7, wk>>3
	if sym == dihedral {
		return f <= 3 && r <= f
	}
	return f <= 3
}

func buildKingSlices(sym symmetry) *kingSlices {
	ks := &kingSlices{}
	for i := range ks.lookup {
		ks.lookup[i] = kingEntry{slice: -1}
	}
	for wk := range 64 {
		if !anchorLegal(sym, wk) {
			continue
		}
		for bk := range 64 {
			if bk == wk || kingsAdjacent(wk, bk) {
				continue
			}
			if sym == dihedral && onMainDiagonal(wk) {
				bd := diagTransform.apply(bk)
				if bd != bk && bk > bd {
					continue
				}
			}
			ks.lookup[wk*64+bk] = kingEntry{
				slice: int32(ks.n),
				stab:  sym == dihedral && onMainDiagonal(wk) && onMainDiagonal(bk),
			}
			ks.n++
		}
	}
	nt := 2
	if sym == dihedral {
		nt = 8
	}
	for wk := range 64 {
		for bk := range 64 {
			e := &ks.lookup[wk*64+bk]
			if e.slice >= 0 || wk == bk || kingsAdjacent(wk, bk) {
				continue
			}
			for t := transform(0); int(t) < nt; t++ {
				l := ks.lookup[t.apply(wk)*64+t.apply(bk)]
				if l.slice >= 0 && l.t == 0 {
					*e = kingEntry{slice: l.slice, t: t, stab: l.stab}
					break
				}
			}
		}
	}
	return ks
}

// pieceClass is one populated non-king, non-pawn class of a material.
type pieceClass struct {
	color  int
	pt     chess.PieceType
	count  int
	size   uint64 // C(64, count)
	weight uint64 // the generator's own radix weight, used for tie-breaks
}

// generatorClassOrder is the order the generator enumerates piece classes
// in: Black's knights, bishops, rooks, queens, then White's.
var generatorClassOrder = [...]struct {
	color int
	pt    chess.PieceType
}{
	{1, chess.Knight}, {1, chess.Bishop}, {1, chess.Rook}, {1, chess.Queen},
	{0, chess.Knight}, {0, chess.Bishop}, {0, chess.Rook}, {0, chess.Queen},
}

// indexConfig is the index geometry of one stored (canonical) material.
type indexConfig struct {
	mat        material
	sym        symmetry
	kings      *kingSlices
	classes    []pieceClass
	withinSize uint64
	// Pawn slices: nw white and nb black free pawns. Each black placement
	// leaves the same number of collision-free white placements, perBlack.
	nw, nb     int
	perBlack   uint64
	pawnSlices uint64
	pawnStride uint64
	// pairs ranks the pawn cells of an opposing-pair material (pair.go).
	pairs     *pairSlices
	positions uint64
	// sig is, per colour, the menSignature a position of this material
	// has: its pawn to queen counts, the pair's pawns included.
	sig [2]uint64
}

// menSignature packs the pawn to queen counts of one colour's bitboards
// into a byte each, so that one comparison checks them all (a count is at
// most 64, so the bytes never carry into each other).
func menSignature(bb *[7]uint64) uint64 {
	return uint64(popcount(bb[chess.Pawn])) | uint64(popcount(bb[chess.Knight]))<<8 |
		uint64(popcount(bb[chess.Bishop]))<<16 | uint64(popcount(bb[chess.Rook]))<<24 |
		uint64(popcount(bb[chess.Queen]))<<32
}

// countSignature is menSignature for counts.
func countSignature(n *[7]uint8) uint64 {
	return uint64(n[chess.Pawn]) | uint64(n[chess.Knight])<<8 | uint64(n[chess.Bishop])<<16 |
		uint64(n[chess.Rook])<<24 | uint64(n[chess.Queen])<<32
}

// maxIndexPositions is the generator's ceiling on a table's cell count.
const maxIndexPositions = 0xffffffffffff

func newIndexConfig(m material) (*indexConfig, error) {
	cfg := &indexConfig{mat: m, sym: dihedral}
	men := m.n
	if m.pair {
		men[0][chess.Pawn]++ // the pair's pawns
		men[1][chess.Pawn]++
	}
	cfg.sig = [2]uint64{countSignature(&men[0]), countSignature(&men[1])}
	if m.n[0][chess.King] != 1 || m.n[1][chess.King] != 1 {
		return nil, fmt.Errorf("material %s: need one king per side", m.name())
	}
	if m.hasPawns() {
		cfg.sym = fileMirror
	}
	cfg.kings = kingTables[cfg.sym]()
	w := uint64(1)
	for _, gc := range generatorClassOrder {
		n := int(m.n[gc.color][gc.pt])
		if n == 0 {
			continue
		}
		if n > 7 {
			return nil, fmt.Errorf("material %s: more than 7 identical pieces", m.name())
		}
		size := binomial[64][n]
		cfg.classes = append(cfg.classes, pieceClass{color: gc.color, pt: gc.pt, count: n, size: size, weight: w})
		hi, lo := bits.Mul64(w, size)
		if hi != 0 || lo > maxIndexPositions {
			return nil, fmt.Errorf("material %s: index too large", m.name())
		}
		w = lo
	}
	cfg.withinSize = w
	cfg.nw, cfg.nb = int(m.n[0][chess.Pawn]), int(m.n[1][chess.Pawn])
	if cfg.nw+cfg.nb > 6 {
		return nil, fmt.Errorf("material %s: more than six pawns", m.name())
	}
	cfg.perBlack = binomial[48-cfg.nb][cfg.nw]
	cfg.pawnSlices = binomial[48][cfg.nb] * cfg.perBlack
	if m.pair {
		ps, err := pairSlicesFor(cfg.nw, cfg.nb)
		if err != nil {
			return nil, fmt.Errorf("material %s: %v", m.name(), err)
		}
		cfg.pairs, cfg.pawnSlices = ps, ps.survived
	}
	hi, stride := bits.Mul64(uint64(cfg.kings.n), cfg.withinSize)
	if hi != 0 {
		return nil, fmt.Errorf("material %s: index too large", m.name())
	}
	cfg.pawnStride = stride
	hi, total := bits.Mul64(cfg.pawnSlices, stride)
	if hi != 0 || total > maxIndexPositions {
		return nil, fmt.Errorf("material %s: index too large", m.name())
	}
	cfg.positions = total
	return cfg, nil
}

// layout is the storage order of the piece classes for one stored colour:
// order[i] indexes cfg.classes, radix[i] is that class's size.
type layout struct {
	n     int
	order [8]int
	radix [8]uint64
}

var factorial = [...]uint32{1, 1, 2, 6, 24, 120, 720, 5040, 40320}

// layoutFor decodes the header's permutation number (a Lehmer code over the
// populated classes in generator order).
func (cfg *indexConfig) layoutFor(perm uint32) (layout, error) {
	n := len(cfg.classes)
	var l layout
	if n > 8 || perm >= factorial[n] {
		return l, fmt.Errorf("index permutation %d invalid for %d piece classes", perm, n)
	}
	var avail [8]int
	for i := range n {
		avail[i] = i
	}
	l.n = n
	idx := perm
	for i := range n {
		f := factorial[n-1-i]
		pick := int(idx / f)
		idx %= f
		l.order[i] = avail[pick]
		l.radix[i] = cfg.classes[avail[pick]].size
		copy(avail[pick:n-i-1], avail[pick+1:n-i])
	}
	return l, nil
}

// colexRank is the combinatorial rank of the set bits of b among all sets of
// the same size, counting squares from base (0 for pieces, 8 for pawns).
func colexRank(b uint64, base int) uint64 {
	var r uint64
	i := 1
	for b != 0 {
		sq := bits.TrailingZeros64(b)
		b &= b - 1
		r += binomial[sq-base][i]
		i++
	}
	return r
}

// errOutsideDomain reports a position the table layout has no cell for.
var errOutsideDomain = ErrBadPosition

const backRanks = 0xff000000000000ff

// index returns the cell of ps, which must already be in this material's
// stored colour orientation. The layout is the stored colour's.
func (cfg *indexConfig) index(ps *pieceSet, l *layout) (uint64, error) {
	wkBB, bkBB := ps.bb[0][chess.King], ps.bb[1][chess.King]
	if popcount(wkBB) != 1 || popcount(bkBB) != 1 {
		return 0, fmt.Errorf("%w: need one king per side", errOutsideDomain)
	}
	if menSignature(&ps.bb[0]) != cfg.sig[0] || menSignature(&ps.bb[1]) != cfg.sig[1] {
		return 0, fmt.Errorf("%w: pieces do not match material %s", errOutsideDomain, cfg.mat.name())
	}
	if (ps.bb[0][chess.Pawn]|ps.bb[1][chess.Pawn])&backRanks != 0 {
		return 0, fmt.Errorf("%w: pawn on a back rank", errOutsideDomain)
	}
	wk, bk := bits.TrailingZeros64(wkBB), bits.TrailingZeros64(bkBB)
	ke := cfg.kings.lookup[wk*64+bk]
	if ke.slice < 0 {
		return 0, fmt.Errorf("%w: kings adjacent", errOutsideDomain)
	}
	t := ke.t
	var cls [8]uint64 // per class, transformed squares
	for i, c := range cfg.classes {
		cls[i] = t.applyBB(ps.bb[c.color][c.pt])
	}
	if ke.stab {
		var cur, alt uint64
		for i, c := range cfg.classes {
			cur += c.weight * colexRank(cls[i], 0)
			alt += c.weight * colexRank(diagTransform.applyBB(cls[i]), 0)
		}
		if alt < cur {
			for i := range cfg.classes {
				cls[i] = diagTransform.applyBB(cls[i])
			}
		}
	}
	var pawnSlice uint64
	switch {
	case cfg.pairs != nil:
		var err error
		wp, bp := t.applyBB(ps.bb[0][chess.Pawn]), t.applyBB(ps.bb[1][chess.Pawn])
		if pawnSlice, err = cfg.pairs.slice(wp, bp); err != nil {
			return 0, err
		}
	case cfg.nw+cfg.nb > 0:
		wp, bp := t.applyBB(ps.bb[0][chess.Pawn]), t.applyBB(ps.bb[1][chess.Pawn])
		pawnSlice = colexRank(bp, 8)*cfg.perBlack + reducedRank(wp, bp)
	}
	var within, w uint64 = 0, 1
	for i := range l.n {
		within += w * colexRank(cls[l.order[i]], 0)
		w *= l.radix[i]
	}
	return pawnSlice*cfg.pawnStride + uint64(ke.slice)*cfg.withinSize + within, nil
}

// reducedRank ranks the white pawn placement among the placements that avoid
// the black pawns' squares: each white square counts only the free pawn
// squares below it.
func reducedRank(wp, bp uint64) uint64 {
	var r uint64
	i := 1
	for wp != 0 {
		sq := bits.TrailingZeros64(wp)
		wp &= wp - 1
		below := popcount(bp & (1<<uint(sq) - 1))
		r += binomial[sq-8-below][i]
		i++
	}
	return r
}
