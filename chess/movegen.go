package chess

// kingSquare returns c's king square (NoSquare if c has no king, which only
// a zero Position can have).
func (p *Position) kingSquare(c Color) Square {
	k := p.pieces[King] & p.colors[c]
	if k == 0 {
		return NoSquare
	}
	return k.LSB()
}

// attackersTo returns the pieces of both colours attacking sq with the
// given occupancy.
func (p *Position) attackersTo(sq Square, occ Bitboard) Bitboard {
	return pawnAttacks[Black][sq]&p.pieces[Pawn]&p.colors[White] |
		pawnAttacks[White][sq]&p.pieces[Pawn]&p.colors[Black] |
		knightAttacks[sq]&p.pieces[Knight] |
		kingAttacks[sq]&p.pieces[King] |
		BishopAttacks(sq, occ)&(p.pieces[Bishop]|p.pieces[Queen]) |
		RookAttacks(sq, occ)&(p.pieces[Rook]|p.pieces[Queen])
}

// attackedBy reports whether side by attacks sq with the given occupancy.
func (p *Position) attackedBy(sq Square, by Color, occ Bitboard) bool {
	if sq == NoSquare {
		return false
	}
	them := p.colors[by]
	if pawnAttacks[by.Other()][sq]&p.pieces[Pawn]&them != 0 ||
		knightAttacks[sq]&p.pieces[Knight]&them != 0 ||
		kingAttacks[sq]&p.pieces[King]&them != 0 {
		return true
	}
	if BishopAttacks(sq, occ)&(p.pieces[Bishop]|p.pieces[Queen])&them != 0 {
		return true
	}
	return RookAttacks(sq, occ)&(p.pieces[Rook]|p.pieces[Queen])&them != 0
}

// checkers returns the opponent's pieces giving check to the side to move.
func (p *Position) checkers() Bitboard {
	ksq := p.kingSquare(p.side)
	if ksq == NoSquare {
		return 0
	}
	return p.attackersTo(ksq, p.Occupied()) & p.colors[p.side.Other()]
}

// InCheck reports whether the side to move is in check.
func (p *Position) InCheck() bool {
	return p.attackedBy(p.kingSquare(p.side), p.side.Other(), p.Occupied())
}

// pinned returns the pieces of the side to move that are pinned to its king.
func (p *Position) pinned(ksq Square) Bitboard {
	us, them := p.colors[p.side], p.colors[p.side.Other()]
	occ := us | them
	snipers := (RookAttacks(ksq, 0)&(p.pieces[Rook]|p.pieces[Queen]) |
		BishopAttacks(ksq, 0)&(p.pieces[Bishop]|p.pieces[Queen])) & them
	var pinned Bitboard
	for snipers != 0 {
		s := snipers.PopLSB()
		b := between[ksq][s] & occ
		if b != 0 && b&(b-1) == 0 && b&us != 0 {
			pinned |= b
		}
	}
	return pinned
}

// epLegal reports whether the side to move's pawn on from may capture en
// passant on to, by playing the capture on the occupancy and looking for
// any attack on the king. This covers every pin, including the horizontal
// one through both pawns, and checks the capture does or does not answer.
func (p *Position) epLegal(from, to Square) bool {
	us := p.side
	capSq := to - 8
	if us == Black {
		capSq = to + 8
	}
	ksq := p.kingSquare(us)
	occ := p.Occupied() ^ SquareBB(from) ^ SquareBB(to) ^ SquareBB(capSq)
	them := p.colors[us.Other()] &^ SquareBB(capSq)
	return pawnAttacks[us][ksq]&p.pieces[Pawn]&them == 0 &&
		knightAttacks[ksq]&p.pieces[Knight]&them == 0 &&
		kingAttacks[ksq]&p.pieces[King]&them == 0 &&
		BishopAttacks(ksq, occ)&(p.pieces[Bishop]|p.pieces[Queen])&them == 0 &&
		RookAttacks(ksq, occ)&(p.pieces[Rook]|p.pieces[Queen])&them == 0
}

// hasLegalEP reports whether the side to move has a legal en-passant
// capture onto p.ep.
func (p *Position) hasLegalEP() bool {
	if p.ep == NoSquare {
		return false
	}
	cands := pawnAttacks[p.side.Other()][p.ep] & p.pieces[Pawn] & p.colors[p.side]
	for cands != 0 {
		if p.epLegal(cands.PopLSB(), p.ep) {
			return true
		}
	}
	return false
}

func appendPromos(dst []Move, from, to Square) []Move {
	return append(dst,
		makePromo(from, to, Queen), makePromo(from, to, Rook),
		makePromo(from, to, Bishop), makePromo(from, to, Knight))
}

// LegalMoves appends every legal move to dst and returns the extended
// slice. With a dst of capacity 256 or more (218 is the most any position
// has) it does not allocate.
func (p *Position) LegalMoves(dst []Move) []Move {
	us, them := p.side, p.side.Other()
	ksq := p.kingSquare(us)
	if ksq == NoSquare {
		return dst
	}
	ours, theirs := p.colors[us], p.colors[them]
	occ := ours | theirs
	checkers := p.attackersTo(ksq, occ) & theirs

	// King moves: test the destination with the king lifted off the board,
	// so that it cannot hide behind itself from a slider.
	occNoK := occ ^ SquareBB(ksq)
	for t := kingAttacks[ksq] &^ ours; t != 0; {
		to := t.PopLSB()
		if !p.attackedBy(to, them, occNoK) {
			dst = append(dst, makeMove(ksq, to))
		}
	}
	if checkers&(checkers-1) != 0 {
		return dst // double check: only the king may move
	}

	target := ^ours
	if checkers != 0 {
		target = between[ksq][checkers.LSB()] | checkers
	}
	pinned := p.pinned(ksq)

	for b := p.pieces[Knight] & ours &^ pinned; b != 0; {
		from := b.PopLSB()
		for t := knightAttacks[from] & target; t != 0; {
			dst = append(dst, makeMove(from, t.PopLSB()))
		}
	}
	for b := (p.pieces[Bishop] | p.pieces[Queen]) & ours; b != 0; {
		from := b.PopLSB()
		t := BishopAttacks(from, occ) & target
		if pinned.Has(from) {
			t &= line[ksq][from]
		}
		for t != 0 {
			dst = append(dst, makeMove(from, t.PopLSB()))
		}
	}
	for b := (p.pieces[Rook] | p.pieces[Queen]) & ours; b != 0; {
		from := b.PopLSB()
		t := RookAttacks(from, occ) & target
		if pinned.Has(from) {
			t &= line[ksq][from]
		}
		for t != 0 {
			dst = append(dst, makeMove(from, t.PopLSB()))
		}
	}

	dst = p.pawnMoves(dst, ksq, target, pinned)

	if checkers == 0 && p.castling != 0 {
		dst = p.castlingMoves(dst, occ)
	}
	return dst
}

// pawnMoves appends the pawn moves, set-wise for unpinned pawns and one by
// one for pinned ones.
func (p *Position) pawnMoves(dst []Move, ksq Square, target, pinned Bitboard) []Move {
	us, them := p.side, p.side.Other()
	ours := p.colors[us]
	theirs := p.colors[them]
	empty := ^(ours | theirs)
	pawns := p.pieces[Pawn] & ours
	free := pawns &^ pinned

	var push1, push2, capL, capR Bitboard
	var up Square
	var lastRank Bitboard
	if us == White {
		up, lastRank = 8, rank8
		push1 = free << 8 & empty
		push2 = (push1 & rank3) << 8 & empty & target
		push1 &= target
		capL = (free &^ fileA) << 7 & theirs & target
		capR = (free &^ fileH) << 9 & theirs & target
	} else {
		up, lastRank = -8, rank1
		push1 = free >> 8 & empty
		push2 = (push1 & rank6) >> 8 & empty & target
		push1 &= target
		capL = (free &^ fileA) >> 9 & theirs & target
		capR = (free &^ fileH) >> 7 & theirs & target
	}
	for b := push1 &^ lastRank; b != 0; {
		to := b.PopLSB()
		dst = append(dst, makeMove(to-up, to))
	}
	for b := push1 & lastRank; b != 0; {
		to := b.PopLSB()
		dst = appendPromos(dst, to-up, to)
	}
	for b := push2; b != 0; {
		to := b.PopLSB()
		dst = append(dst, makeMove(to-2*up, to))
	}
	for b := capL; b != 0; {
		to := b.PopLSB()
		from := to - up + 1
		if lastRank.Has(to) {
			dst = appendPromos(dst, from, to)
		} else {
			dst = append(dst, makeMove(from, to))
		}
	}
	for b := capR; b != 0; {
		to := b.PopLSB()
		from := to - up - 1
		if lastRank.Has(to) {
			dst = appendPromos(dst, from, to)
		} else {
			dst = append(dst, makeMove(from, to))
		}
	}

	// Pinned pawns move only along the pin line.
	for b := pawns & pinned; b != 0; {
		from := b.PopLSB()
		allowed := target & line[ksq][from]
		to := from + up
		if empty.Has(to) {
			if allowed.Has(to) {
				if lastRank.Has(to) {
					dst = appendPromos(dst, from, to)
				} else {
					dst = append(dst, makeMove(from, to))
				}
			}
			to2 := to + up
			homeRank := from.Rank() == 1
			if us == Black {
				homeRank = from.Rank() == 6
			}
			if homeRank && empty.Has(to2) && allowed.Has(to2) {
				dst = append(dst, makeMove(from, to2))
			}
		}
		for t := pawnAttacks[us][from] & theirs & allowed; t != 0; {
			to := t.PopLSB()
			if lastRank.Has(to) {
				dst = appendPromos(dst, from, to)
			} else {
				dst = append(dst, makeMove(from, to))
			}
		}
	}

	if p.ep != NoSquare {
		for b := pawnAttacks[them][p.ep] & pawns; b != 0; {
			from := b.PopLSB()
			if p.epLegal(from, p.ep) {
				dst = append(dst, makeMove(from, p.ep)|moveEP)
			}
		}
	}
	return dst
}

// castling lists, per right, the squares that must be empty and the
// squares the king passes (which must not be attacked), and the move.
var castlingPaths = [4]struct {
	empty, safe Bitboard
	move        Move
	rookFrom    Square
	rookTo      Square
}{
	{SquareBB(F1) | SquareBB(G1), SquareBB(F1) | SquareBB(G1), makeMove(E1, G1) | moveCastle, H1, F1},
	{SquareBB(B1) | SquareBB(C1) | SquareBB(D1), SquareBB(C1) | SquareBB(D1), makeMove(E1, C1) | moveCastle, A1, D1},
	{SquareBB(F8) | SquareBB(G8), SquareBB(F8) | SquareBB(G8), makeMove(E8, G8) | moveCastle, H8, F8},
	{SquareBB(B8) | SquareBB(C8) | SquareBB(D8), SquareBB(C8) | SquareBB(D8), makeMove(E8, C8) | moveCastle, A8, D8},
}

// castlingMoves appends the castling moves; the caller has checked the king
// is not in check. The rights guarantee king and rook on their homes.
func (p *Position) castlingMoves(dst []Move, occ Bitboard) []Move {
	first := 0
	if p.side == Black {
		first = 2
	}
	them := p.side.Other()
	for i := first; i < first+2; i++ {
		if p.castling&(1<<i) == 0 {
			continue
		}
		c := &castlingPaths[i]
		if occ&c.empty != 0 {
			continue
		}
		ok := true
		for s := c.safe; s != 0; {
			if p.attackedBy(s.PopLSB(), them, occ) {
				ok = false
				break
			}
		}
		if ok {
			dst = append(dst, c.move)
		}
	}
	return dst
}

// castlingIndex returns the index into castlingPaths (and the bit of the
// right) of the castling whose king lands on to.
func castlingIndex(to Square) int {
	switch to {
	case C1:
		return 1
	case G8:
		return 2
	case C8:
		return 3
	}
	return 0
}

// castleKeep masks the castling rights with the rights that survive a move
// touching the square (from or to): moving or capturing on a king or rook
// home loses the rights tied to it.
var castleKeep = func() (k [64]CastlingRights) {
	for i := range k {
		k[i] = AllCastling
	}
	k[E1] &^= WhiteKingside | WhiteQueenside
	k[H1] &^= WhiteKingside
	k[A1] &^= WhiteQueenside
	k[E8] &^= BlackKingside | BlackQueenside
	k[H8] &^= BlackKingside
	k[A8] &^= BlackQueenside
	return k
}()

// Play returns the position after the legal move m (from LegalMoves or
// ParseMove); the receiver is unchanged. The half-move clock is reset by a
// capture or pawn move and incremented otherwise; the move number is
// incremented after Black's move. The en-passant square is set only when
// the opponent has a legal en-passant capture. Playing an illegal move
// gives an unspecified position.
func (p *Position) Play(m Move) Position {
	c := *p
	c.playInPlace(m)
	return c
}

func (p *Position) playInPlace(m Move) {
	us, them := p.side, p.side.Other()
	from, to := m.From(), m.To()
	fromBB, toBB := SquareBB(from), SquareBB(to)
	pt := p.typeAt(from)
	p.halfmove++
	if us == Black {
		p.fullmove++
	}
	p.ep = NoSquare
	switch {
	case m&moveEP != 0:
		capBB := toBB >> 8
		if us == Black {
			capBB = toBB << 8
		}
		p.pieces[Pawn] ^= fromBB | toBB | capBB
		p.colors[us] ^= fromBB | toBB
		p.colors[them] ^= capBB
		p.halfmove = 0
	case m&moveCastle != 0:
		c := &castlingPaths[castlingIndex(to)]
		rk := SquareBB(c.rookFrom) | SquareBB(c.rookTo)
		p.pieces[King] ^= fromBB | toBB
		p.pieces[Rook] ^= rk
		p.colors[us] ^= fromBB | toBB | rk
	default:
		if p.colors[them]&toBB != 0 {
			p.pieces[p.typeAt(to)] ^= toBB
			p.colors[them] ^= toBB
			p.halfmove = 0
		}
		p.colors[us] ^= fromBB | toBB
		if promo := m.Promotion(); promo != NoPieceType {
			p.pieces[Pawn] ^= fromBB
			p.pieces[promo] ^= toBB
		} else {
			p.pieces[pt] ^= fromBB | toBB
		}
		if pt == Pawn {
			p.halfmove = 0
			if to-from == 16 || from-to == 16 {
				p.side = them
				p.ep = (from + to) / 2
				if !p.hasLegalEP() {
					p.ep = NoSquare
				}
				p.castling &= castleKeep[from] & castleKeep[to]
				return
			}
		}
	}
	p.castling &= castleKeep[from] & castleKeep[to]
	p.side = them
}

// IsCapture reports whether m captures (en passant included).
func (p *Position) IsCapture(m Move) bool {
	return m.IsEnPassant() || (!m.IsCastle() && p.colors[p.side.Other()].Has(m.To()))
}

// IsZeroing reports whether m resets the half-move clock: a capture or a
// pawn move.
func (p *Position) IsZeroing(m Move) bool {
	return p.IsCapture(m) || p.pieces[Pawn].Has(m.From())
}

// hasLegalMove reports whether the side to move has any legal move.
func (p *Position) hasLegalMove() bool { return p.CountLegalMoves() > 0 }

// IsCheckmate reports whether the side to move is checkmated.
func (p *Position) IsCheckmate() bool { return p.InCheck() && !p.hasLegalMove() }

// IsStalemate reports whether the side to move is stalemated.
func (p *Position) IsStalemate() bool { return !p.InCheck() && !p.hasLegalMove() }

// Perft counts the leaf nodes of the legal move tree of the given depth,
// counting the last ply without making its moves (bulk counting, by
// CountLegalMoves).
// Perft of depth 0 is 1.
func Perft(p Position, depth int) uint64 {
	if depth <= 0 {
		return 1
	}
	return perft(p, depth)
}

// perft takes the position by value: recursion defeats escape analysis for
// a pointer to a local child, which would put every child on the heap.
func perft(p Position, depth int) uint64 {
	if depth == 1 {
		return uint64(p.CountLegalMoves())
	}
	var buf [256]Move
	var n uint64
	for _, m := range p.LegalMoves(buf[:0]) {
		c := p
		c.playInPlace(m)
		n += perft(c, depth-1)
	}
	return n
}

// perftFull counts the leaves without bulk counting: every leaf is made.
func perftFull(p Position, depth int) uint64 {
	if depth == 0 {
		return 1
	}
	var buf [256]Move
	var n uint64
	for _, m := range p.LegalMoves(buf[:0]) {
		c := p
		c.playInPlace(m)
		n += perftFull(c, depth-1)
	}
	return n
}
