package chess

// CountLegalMoves returns the number of legal moves, len(LegalMoves(nil)),
// without listing them: destination sets are counted whole. Perft uses it
// for the last ply, and it is the cheap way to tell mate and stalemate.
func (p *Position) CountLegalMoves() int {
	us, them := p.side, p.side.Other()
	ksq := p.kingSquare(us)
	if ksq == NoSquare {
		return 0
	}
	ours, theirs := p.colors[us], p.colors[them]
	occ := ours | theirs
	checkers := p.attackersTo(ksq, occ) & theirs

	n := 0
	occNoK := occ ^ SquareBB(ksq)
	for t := kingAttacks[ksq] &^ ours; t != 0; {
		if !p.attackedBy(t.PopLSB(), them, occNoK) {
			n++
		}
	}
	if checkers&(checkers-1) != 0 {
		return n
	}

	target := ^ours
	if checkers != 0 {
		target = between[ksq][checkers.LSB()] | checkers
	}
	pinned := p.pinned(ksq)

	for b := p.pieces[Knight] & ours &^ pinned; b != 0; {
		n += (knightAttacks[b.PopLSB()] & target).Count()
	}
	for b := (p.pieces[Bishop] | p.pieces[Queen]) & ours; b != 0; {
		from := b.PopLSB()
		t := BishopAttacks(from, occ) & target
		if pinned.Has(from) {
			t &= line[ksq][from]
		}
		n += t.Count()
	}
	for b := (p.pieces[Rook] | p.pieces[Queen]) & ours; b != 0; {
		from := b.PopLSB()
		t := RookAttacks(from, occ) & target
		if pinned.Has(from) {
			t &= line[ksq][from]
		}
		n += t.Count()
	}

	n += p.countPawnMoves(ksq, target, pinned)

	if checkers == 0 && p.castling != 0 {
		var buf [2]Move
		n += len(p.castlingMoves(buf[:0], occ))
	}
	return n
}

// countPawnMoves counts what pawnMoves lists: a promotion counts four.
func (p *Position) countPawnMoves(ksq Square, target, pinned Bitboard) int {
	us, them := p.side, p.side.Other()
	ours, theirs := p.colors[us], p.colors[them]
	empty := ^(ours | theirs)
	pawns := p.pieces[Pawn] & ours
	free := pawns &^ pinned

	var push1, push2, capL, capR, lastRank Bitboard
	var up Square
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
	n := push2.Count()
	for _, b := range [3]Bitboard{push1, capL, capR} {
		n += (b &^ lastRank).Count() + 4*(b&lastRank).Count()
	}

	for b := pawns & pinned; b != 0; {
		from := b.PopLSB()
		allowed := target & line[ksq][from]
		to := from + up
		var t Bitboard
		if empty.Has(to) {
			t |= SquareBB(to) & allowed
			to2 := to + up
			homeRank := from.Rank() == 1
			if us == Black {
				homeRank = from.Rank() == 6
			}
			if homeRank && empty.Has(to2) && allowed.Has(to2) {
				n++
			}
		}
		t |= pawnAttacks[us][from] & theirs & allowed
		n += (t &^ lastRank).Count() + 4*(t&lastRank).Count()
	}

	if p.ep != NoSquare {
		for b := pawnAttacks[them][p.ep] & pawns; b != 0; {
			if p.epLegal(b.PopLSB(), p.ep) {
				n++
			}
		}
	}
	return n
}
