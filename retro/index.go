package retro

import (
	"fmt"

	"github.com/tbfs/tbfs/chess"
)

// indexer maps the positions of one material to dense indices and back.
//
// The index is side*K*64^(n-1) + king*64^(n-1) + the other men's squares in
// base 64 (Black's king first, then White's pieces, then Black's, in
// pieceOrder). Symmetry shrinks it: without pawns the board has eight
// symmetries and White's king is brought into the a1-d1-d4 triangle (K=10);
// with pawns only the left-right mirror applies and White's king stands on
// files a-d (K=32). Every position has exactly one canonical index: when
// White's king is on the a1-h8 diagonal the smaller of the two candidate
// encodings is taken, and interchangeable pieces are sorted by square, so
// canon is a function of the position, not of how it was reached. Indices
// that are not the canonical index of a legal position are simply unused.
type indexer struct {
	mat    material
	pawns  bool
	n      int           // men, kings included
	pieces []chess.Piece // the piece of each slot; slot 0 is White's king
	groups [][2]int      // [start, end) slot ranges of interchangeable pieces
	counts [2][7]int     // expected pieces per colour and type
	kings  int           // number of squares White's king may take
	stride int64         // 64^(n-1)
	size   int64         // number of indices
}

// triangle lists the White king squares of the pawnless index.
var triangle = [...]chess.Square{chess.A1, chess.B1, chess.C1, chess.D1, chess.B2, chess.C2, chess.D2, chess.C3, chess.D3, chess.D4}

var triangleIndex = func() (t [64]int8) {
	for i := range t {
		t[i] = -1
	}
	for i, sq := range triangle {
		t[sq] = int8(i)
	}
	return t
}()

func newIndexer(m material) (*indexer, error) {
	ix := &indexer{mat: m, pawns: m.hasPawns(), n: m.men()}
	if ix.n > 5 {
		return nil, fmt.Errorf("%w: %v has %d men; at most 5 fit the index", ErrUnsupported, m, ix.n)
	}
	ix.pieces = []chess.Piece{chess.MakePiece(chess.White, chess.King), chess.MakePiece(chess.Black, chess.King)}
	ix.counts[chess.White][chess.King], ix.counts[chess.Black][chess.King] = 1, 1
	for c := chess.White; c <= chess.Black; c++ {
		for i, pt := range m.side[c] {
			if i > 0 && m.side[c][i-1] == pt {
				g := &ix.groups[len(ix.groups)-1]
				g[1]++
			} else {
				ix.groups = append(ix.groups, [2]int{len(ix.pieces), len(ix.pieces) + 1})
			}
			ix.pieces = append(ix.pieces, chess.MakePiece(c, pt))
			ix.counts[c][pt]++
		}
	}
	ix.kings = 10
	if ix.pawns {
		ix.kings = 32
	}
	ix.stride = 1
	for range ix.n - 1 {
		ix.stride *= 64
	}
	ix.size = 2 * int64(ix.kings) * ix.stride
	return ix, nil
}

// transform applies the symmetry t to sq: bit 0 mirrors the files, bit 1
// the ranks, bit 2 swaps files and ranks (in that order).
func transform(sq chess.Square, t uint8) chess.Square {
	f, r := sq.File(), sq.Rank()
	if t&1 != 0 {
		f = 7 - f
	}
	if t&2 != 0 {
		r = 7 - r
	}
	if t&4 != 0 {
		f, r = r, f
	}
	return chess.MakeSquare(f, r)
}

// squares fills sq with the slots' squares of p, or reports false when p is
// not of this material (in this orientation).
func (ix *indexer) squares(p *chess.Position, sq *[6]chess.Square) bool {
	if p.Occupied().Count() != ix.n {
		return false
	}
	for c := chess.White; c <= chess.Black; c++ {
		k := p.Pieces(c, chess.King)
		if k.Count() != 1 {
			return false
		}
		sq[c] = k.LSB()
	}
	i := 2
	for c := chess.White; c <= chess.Black; c++ {
		for _, pt := range pieceOrder {
			bb := p.Pieces(c, pt)
			if bb.Count() != ix.counts[c][pt] {
				return false
			}
			for bb != 0 {
				sq[i] = bb.PopLSB()
				i++
			}
		}
	}
	return true
}

// encode returns the index of the squares after symmetry t, sorting
// interchangeable pieces.
func (ix *indexer) encode(side chess.Color, sq *[6]chess.Square, t uint8) int64 {
	var s [6]chess.Square
	for i := range ix.n {
		s[i] = transform(sq[i], t)
	}
	for _, g := range ix.groups {
		// Insertion sort: groups have at most a handful of members.
		for i := g[0] + 1; i < g[1]; i++ {
			for j := i; j > g[0] && s[j] < s[j-1]; j-- {
				s[j], s[j-1] = s[j-1], s[j]
			}
		}
	}
	var k int
	if ix.pawns {
		k = s[0].Rank()*4 + s[0].File()
	} else {
		k = int(triangleIndex[s[0]])
	}
	idx := int64(side)*int64(ix.kings) + int64(k)
	for i := 1; i < ix.n; i++ {
		idx = idx*64 + int64(s[i])
	}
	return idx
}

// index returns the canonical index of p, or false when p is not of this
// material in this orientation.
func (ix *indexer) index(p *chess.Position) (int64, bool) {
	var sq [6]chess.Square
	if !ix.squares(p, &sq) {
		return 0, false
	}
	return ix.indexSquares(p.SideToMove(), &sq), true
}

func (ix *indexer) indexSquares(side chess.Color, sq *[6]chess.Square) int64 {
	f, r := sq[0].File(), sq[0].Rank()
	var t uint8
	if f > 3 {
		t |= 1
		f = 7 - f
	}
	if ix.pawns {
		return ix.encode(side, sq, t)
	}
	if r > 3 {
		t |= 2
		r = 7 - r
	}
	if r > f {
		t |= 4
	}
	idx := ix.encode(side, sq, t)
	if r == f {
		idx = min(idx, ix.encode(side, sq, t|4))
	}
	return idx
}

// decode returns the position with index idx, or false when idx is not the
// canonical index of a well-formed placement (overlapping men, pawns on the
// first or last rank, or a non-canonical encoding). Legality (the side not
// to move in check, adjacent kings) is left to chess.FromBoard.
func (ix *indexer) decode(idx int64, board *[64]chess.Piece) (chess.Color, bool) {
	if idx < 0 || idx >= ix.size {
		return 0, false
	}
	var sq [6]chess.Square
	for i := ix.n - 1; i >= 1; i-- {
		sq[i] = chess.Square(idx % 64)
		idx /= 64
	}
	k := int(idx % int64(ix.kings))
	side := chess.Color(idx / int64(ix.kings))
	if ix.pawns {
		sq[0] = chess.MakeSquare(k%4, k/4)
	} else {
		sq[0] = triangle[k]
	}
	var occ chess.Bitboard
	for i := range ix.n {
		b := chess.SquareBB(sq[i])
		if occ&b != 0 {
			return 0, false
		}
		occ |= b
		if ix.pieces[i].Type() == chess.Pawn && (sq[i].Rank() == 0 || sq[i].Rank() == 7) {
			return 0, false
		}
	}
	for _, g := range ix.groups {
		for i := g[0] + 1; i < g[1]; i++ {
			if sq[i] < sq[i-1] {
				return 0, false
			}
		}
	}
	if !ix.pawns && sq[0].File() == sq[0].Rank() {
		enc := ix.encode(side, &sq, 0)
		if ix.encode(side, &sq, 4) < enc {
			return 0, false
		}
	}
	*board = [64]chess.Piece{}
	for i := range ix.n {
		board[sq[i]] = ix.pieces[i]
	}
	return side, true
}

// An en-passant position (one whose side to move may capture en passant) is
// not an index entry: its board has the same index as the position without
// the right, whose moves are a subset of its own. Solvers keep such
// positions apart, keyed by epKey: the board's canonical index times eight
// plus the file of the en-passant square in the same orientation. With
// pawns the canonical orientation is unique (no diagonal ties), so the key
// is a function of the position.

// bothPawns reports whether the material has pawns of both colours, the
// only case in which en passant can arise.
func (ix *indexer) bothPawns() bool {
	return ix.counts[chess.White][chess.Pawn] > 0 && ix.counts[chess.Black][chess.Pawn] > 0
}

// epKey returns the key of p, which must carry an en-passant square, or
// false when p's board is not of this material in this orientation.
func (ix *indexer) epKey(p *chess.Position) (int64, bool) {
	var sq [6]chess.Square
	if !ix.pawns || p.EnPassant() == chess.NoSquare || !ix.squares(p, &sq) {
		return 0, false
	}
	var t uint8
	if sq[0].File() > 3 {
		t = 1
	}
	return ix.encode(p.SideToMove(), &sq, t)<<3 | int64(transform(p.EnPassant(), t).File()), true
}

// epSquare returns the en-passant square on file f for side to move.
func epSquare(side chess.Color, f int) chess.Square {
	if side == chess.White {
		return chess.MakeSquare(f, 5)
	}
	return chess.MakeSquare(f, 2)
}

// decodeEP returns the position with en-passant key k, or an error when k
// is not the key of a valid en-passant position.
func (ix *indexer) decodeEP(k int64) (chess.Position, error) {
	var board [64]chess.Piece
	side, ok := ix.decode(k>>3, &board)
	if !ok {
		return chess.Position{}, fmt.Errorf("index %d does not decode", k>>3)
	}
	ep := epSquare(side, int(k&7))
	p, err := chess.FromBoard(board, side, 0, ep, 0, 1)
	if err != nil {
		return chess.Position{}, err
	}
	if p.EnPassant() != ep {
		return chess.Position{}, fmt.Errorf("%s: no legal capture on %v", p.FEN(), ep)
	}
	return p, nil
}

// epFiles returns, as a bit set of files, the en-passant squares the
// board of p (a position without the right) could carry: a pawn of the
// side not to move on its fourth rank with the two squares behind it empty
// and a pawn of the side to move beside it. Whether a capture is legal is
// left to chess.FromBoard.
func epFiles(p *chess.Position) uint8 {
	side := p.SideToMove()
	them := side.Other()
	rank, back := 3, chess.Square(-8) // White pushed: from rank 2 to 4
	if them == chess.Black {
		rank, back = 4, 8
	}
	occ := p.Occupied()
	mine := p.Pieces(side, chess.Pawn)
	var files uint8
	for b := p.Pieces(them, chess.Pawn); b != 0; {
		sq := b.PopLSB()
		if sq.Rank() != rank || occ.Has(sq+back) || occ.Has(sq+2*back) {
			continue
		}
		f := sq.File()
		if (f > 0 && mine.Has(sq-1)) || (f < 7 && mine.Has(sq+1)) {
			files |= 1 << f
		}
	}
	return files
}

// nodeKey identifies a position of the material, en-passant square
// included: its index, or for an en-passant position ix.size plus its
// epKey (distinct from every index). False when p is not of this material
// in this orientation.
func (ix *indexer) nodeKey(p *chess.Position) (int64, bool) {
	if p.EnPassant() == chess.NoSquare {
		return ix.index(p)
	}
	k, ok := ix.epKey(p)
	return ix.size + k, ok
}
