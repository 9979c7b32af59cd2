package chess

import "strings"

// Unmove is a move retracted from a position: Unmake turns the position
// (the child) into the parent it came from. It records the forward move
// played in the parent, the type of the piece that move captured (restored
// by Unmake), the parent's en-passant square, and the castling rights the
// parent held beyond the child's (lost by this move).
type Unmove struct {
	move     Move
	captured PieceType
	parentEP Square
	rights   CastlingRights
}

// Move returns the forward move: played in the parent, it gives the child.
func (u Unmove) Move() Move { return u.move }

// Captured returns the type of the piece the forward move captured (put
// back by Unmake), or NoPieceType.
func (u Unmove) Captured() PieceType { return u.captured }

// ParentEnPassant returns the parent's en-passant square, or NoSquare.
func (u Unmove) ParentEnPassant() Square { return u.parentEP }

// RestoredCastling returns the castling rights the parent holds beyond the
// child's: those the forward move lost (castling, a king or rook leaving
// home, a rook captured at home). Unmake adds them.
func (u Unmove) RestoredCastling() CastlingRights { return u.rights }

// String returns the forward move in UCI, then "x" and the captured piece
// type if any, then "ep=" and the parent's en-passant square if it has one,
// then "+" and the restored castling rights if any, for debugging:
// "e5d6xp ep=d6", "e1g1 +K".
func (u Unmove) String() string {
	var b strings.Builder
	b.WriteString(u.move.UCI())
	if u.captured != NoPieceType {
		b.WriteString("x")
		b.WriteString(u.captured.String())
	}
	if u.parentEP != NoSquare {
		b.WriteString(" ep=")
		b.WriteString(u.parentEP.String())
	}
	if u.rights != 0 {
		b.WriteString(" +")
		b.WriteString(u.rights.String())
	}
	return b.String()
}

// captureKinds are the piece types a move can capture, most common first.
var captureKinds = [...]PieceType{Pawn, Knight, Bishop, Rook, Queen}

type uncaptureMode uint8

const (
	quietOnly uncaptureMode = iota
	quietOrCapture
	captureOnly
)

// Unmoves appends to dst every unmove of the position: every (move, parent)
// pair such that the parent is a legal position in which the move is legal
// and leads to this position. It covers quiet unmoves, uncaptures of every
// capturable kind, unpromotions (straight and capturing), en-passant
// uncaptures, un-double-pushes, castling, parents that held castling rights
// the move lost (a king or rook leaving home, a rook captured at home: each
// subset of those rights gives its own parent), and parents that carry an
// en-passant square of their own (the opponent's last move was a double
// push). Parents must pass the same validation as ParseFEN: in particular
// the side that did not move in the parent is not in check, castling rights
// have their king and rook at home, and piece counts stay possible.
//
// The half-move clock does not prune unmoves (a child with clock 0 still
// gets quiet unmoves), because retrograde analysis works on positions
// without clocks. Parents are the positions ParseFEN accepts; whether they
// are reachable from the initial position is not examined further (for
// instance a parent with an en-passant square whose side to move is in a
// check that double push could not have given).
func (p *Position) Unmoves(dst []Unmove) []Unmove { return p.unmoves(dst, false) }

// SameMaterialUnmoves appends to dst the unmoves of Unmoves that keep the
// material: no uncaptures (en passant included) and no unpromotions, in the
// same order (castling and restored rights included). A retrograde solver working within one material signature
// needs only these, and they are several times fewer.
func (p *Position) SameMaterialUnmoves(dst []Unmove) []Unmove { return p.unmoves(dst, true) }

func (p *Position) unmoves(dst []Unmove, sameMaterial bool) []Unmove {
	y := p.side    // to move in the child: the side that did not move
	x := y.Other() // the side that just moved
	if p.kingSquare(x) == NoSquare || p.kingSquare(y) == NoSquare {
		return dst
	}
	occ := p.Occupied()
	empty := ^occ
	up := Square(8)
	lastRank, relRank := rank8, func(sq Square) int { return sq.Rank() }
	if x == Black {
		up = -8
		lastRank, relRank = rank1, func(sq Square) int { return 7 - sq.Rank() }
	}

	if p.ep != NoSquare {
		// A usable en-passant square means the last move was the double
		// push that passed it, and nothing else.
		to := p.ep + up
		from := p.ep - up
		return p.addUnmoves(dst, makeMove(from, to), quietOnly)
	}

	dst = p.castlingUnmoves(dst, x)

	for b := p.colors[x]; b != 0; {
		to := b.PopLSB()
		pt := p.typeAt(to)
		var froms Bitboard
		switch pt {
		case King:
			froms = kingAttacks[to]
		case Knight:
			froms = knightAttacks[to]
		case Bishop:
			froms = BishopAttacks(to, occ)
		case Rook:
			froms = RookAttacks(to, occ)
		case Queen:
			froms = QueenAttacks(to, occ)
		case Pawn:
			dst = p.pawnUnmoves(dst, to, up, relRank(to), empty, sameMaterial)
			continue
		}
		mode := quietOrCapture
		if sameMaterial {
			mode = quietOnly
		}
		for f := froms & empty; f != 0; {
			dst = p.addUnmoves(dst, makeMove(f.PopLSB(), to), mode)
		}
		if pt != King && lastRank.Has(to) && !sameMaterial {
			// Unpromotions: the pawn came from the seventh rank, straight
			// (quiet) or diagonally (capturing).
			if from := to - up; empty.Has(from) {
				dst = p.addUnmoves(dst, makePromo(from, to, pt), quietOnly)
			}
			for f := pawnAttacks[y][to] & empty; f != 0; {
				dst = p.addUnmoves(dst, makePromo(f.PopLSB(), to, pt), captureOnly)
			}
		}
	}
	return dst
}

// pawnUnmoves appends the unmoves of the side that moved's pawn on to; r is
// its rank counted from its own side (0..7) and up its forward step. With
// sameMaterial it leaves out the capturing ones.
func (p *Position) pawnUnmoves(dst []Unmove, to, up Square, r int, empty Bitboard, sameMaterial bool) []Unmove {
	y := p.side
	if r < 2 {
		return dst // a pawn on its second rank has not moved
	}
	if from := to - up; empty.Has(from) {
		dst = p.addUnmoves(dst, makeMove(from, to), quietOnly)
		if r == 3 && empty.Has(from-up) {
			// A double push passed from; it is a parent only if it would
			// not have left a usable en-passant square, which this child
			// (whose square is unset) would show.
			t := *p
			t.ep = from
			if !t.hasLegalEP() {
				dst = p.addUnmoves(dst, makeMove(from-up, to), quietOnly)
			}
		}
	}
	if sameMaterial {
		return dst
	}
	for f := pawnAttacks[y][to] & empty; f != 0; {
		dst = p.addUnmoves(dst, makeMove(f.PopLSB(), to), captureOnly)
	}
	if r == 5 {
		// En passant: the captured pawn stood beside the capturer, behind
		// to, and had just double-pushed from the square in front of to.
		capSq, origin := to-up, to+up
		if empty.Has(capSq) && empty.Has(origin) {
			for f := pawnAttacks[y][to] & empty; f != 0; {
				u := Unmove{move: makeMove(f.PopLSB(), to) | moveEP, captured: Pawn, parentEP: to}
				if par := p.unmake(u); par.parentValid(true) {
					dst = append(dst, u)
				}
			}
		}
	}
	return dst
}

// addUnmoves appends the unmoves of forward move m with the captures the
// mode allows, each with and without a parent en-passant square, keeping
// those whose parent is valid.
func (p *Position) addUnmoves(dst []Unmove, m Move, mode uncaptureMode) []Unmove {
	base := p.unmake(Unmove{move: m, parentEP: NoSquare})
	if !base.castlingConsistent() {
		return dst
	}
	x, y := base.side, base.side.Other()
	ky := base.kingSquare(y)
	// An uncaptured piece belongs to the side not moving, so it can only
	// block attacks on its own king: when the quiet parent leaves that king
	// unattacked, so does every uncapture, and only counts need checking.
	attacked := base.attackedBy(ky, x, base.Occupied())
	unpromo := m.Promotion() != NoPieceType
	// Rights the move would have lost, which the parent may have held.
	lost := AllCastling &^ (castleKeep[m.From()] & castleKeep[m.To()]) &^ p.castling
	if mode != captureOnly && !attacked && (!unpromo || base.countsPossible()) {
		dst = base.appendWithRights(dst, Unmove{move: m, parentEP: NoSquare}, lost)
	}
	if mode == quietOnly {
		return dst
	}
	to := m.To()
	toBB := SquareBB(to)
	for _, pt := range captureKinds {
		if pt == Pawn && (rank1|rank8)&toBB != 0 {
			continue
		}
		par := base
		par.pieces[pt] |= toBB
		par.colors[y] |= toBB
		par.halfmove = 0
		if attacked && par.attackedBy(ky, x, par.Occupied()) {
			continue
		}
		if !par.countsPossible() {
			continue
		}
		dst = par.appendWithRights(dst, Unmove{move: m, captured: pt, parentEP: NoSquare}, lost)
	}
	return dst
}

// appendWithRights appends u, whose parent q is valid, with its en-passant
// variants, then the same for every non-empty subset of the lost rights
// whose king and rook stand at home in the parent.
func (q *Position) appendWithRights(dst []Unmove, u Unmove, lost CastlingRights) []Unmove {
	dst = q.appendWithEP(dst, u)
	for s := lost; s != 0; s = (s - 1) & lost {
		r := *q
		r.castling |= s
		if !r.castlingConsistent() {
			continue
		}
		v := u
		v.rights |= s
		dst = r.appendWithEP(dst, v)
	}
	return dst
}

// castlingUnmoves appends the retractions of x's castling: king and rook on
// their castled squares, their homes empty; the parent holds the right used
// (and possibly x's other right) and castling was legal in it.
func (p *Position) castlingUnmoves(dst []Unmove, x Color) []Unmove {
	first := 0
	if x == Black {
		first = 2
	}
	y := x.Other()
	kings, rooks := p.pieces[King]&p.colors[x], p.pieces[Rook]&p.colors[x]
	for i := first; i < first+2; i++ {
		c := &castlingPaths[i]
		home := castleHomes[i].king
		if !kings.Has(c.move.To()) || !rooks.Has(c.rookTo) || p.Occupied().Has(home) || p.Occupied().Has(c.rookFrom) {
			continue
		}
		u := Unmove{move: c.move, parentEP: NoSquare, rights: 1 << i}
		par := p.unmake(u)
		occ := par.Occupied()
		if occ&c.empty != 0 || par.attackedBy(par.kingSquare(y), x, occ) || par.attackedBy(home, y, occ) {
			continue
		}
		safe := true
		for s := c.safe; s != 0; {
			if par.attackedBy(s.PopLSB(), y, occ) {
				safe = false
				break
			}
		}
		if !safe || !par.castlingConsistent() {
			continue
		}
		other := CastlingRights(1<<first|1<<(first+1)) &^ u.rights &^ p.castling
		dst = par.appendWithRights(dst, u, other)
	}
	return dst
}

// appendWithEP appends u, whose parent q is valid, then every variant of u
// whose parent additionally has a usable en-passant square: the parent's
// opponent (the child's side to move) may have just double-pushed a pawn
// the mover could take en passant.
func (q *Position) appendWithEP(dst []Unmove, u Unmove) []Unmove {
	dst = append(dst, u)
	x, y := q.side, q.side.Other()
	var pushedRank Bitboard = rank5
	down := Square(8) // from the ep square to the pushed pawn, for x White
	if x == Black {
		pushedRank, down = rank4, -8
	}
	cands := q.pieces[Pawn] & q.colors[y] & pushedRank
	if cands == 0 {
		return dst
	}
	par := *q
	occ := par.Occupied()
	for cands != 0 {
		pushed := cands.PopLSB()
		ep := pushed + down
		origin := ep + down
		if occ.Has(ep) || occ.Has(origin) || pawnAttacks[y][ep]&par.pieces[Pawn]&par.colors[x] == 0 {
			continue
		}
		par.ep = ep
		if par.hasLegalEP() {
			v := u
			v.parentEP = ep
			dst = append(dst, v)
		}
	}
	return dst
}

// Unmake returns the parent of the position for u, one of its Unmoves.
// The parent holds the child's castling rights plus u.RestoredCastling(),
// and u's en-passant square.
// Its half-move clock cannot be known exactly: Unmake sets 0 after a
// zeroing move (capture or pawn move) and the child's clock minus one
// (never below 0) otherwise. The move number goes back by one when Black
// made the move.
func (p *Position) Unmake(u Unmove) Position { return p.unmake(u) }

func (p *Position) unmake(u Unmove) Position {
	q := *p
	x, y := p.side.Other(), p.side
	m := u.move
	from, to := m.From(), m.To()
	fromBB, toBB := SquareBB(from), SquareBB(to)
	pt := q.typeAt(to)
	q.pieces[pt] ^= toBB
	if m.Promotion() != NoPieceType {
		q.pieces[Pawn] ^= fromBB
	} else {
		q.pieces[pt] ^= fromBB
	}
	q.colors[x] ^= fromBB | toBB
	if m.IsCastle() {
		c := &castlingPaths[castlingIndex(to)]
		rk := SquareBB(c.rookFrom) | SquareBB(c.rookTo)
		q.pieces[Rook] ^= rk
		q.colors[x] ^= rk
	}
	q.castling |= u.rights
	if u.captured != NoPieceType {
		capBB := toBB
		if m.IsEnPassant() {
			if x == White {
				capBB = toBB >> 8
			} else {
				capBB = toBB << 8
			}
		}
		q.pieces[u.captured] |= capBB
		q.colors[y] |= capBB
	}
	q.side = x
	q.ep = u.parentEP
	if u.captured != NoPieceType || pt == Pawn || m.Promotion() != NoPieceType {
		q.halfmove = 0
	} else {
		q.halfmove = max(p.halfmove-1, 0)
	}
	if x == Black {
		q.fullmove = max(p.fullmove-1, 1)
	}
	return q
}

// parentValid is the part of validate an unmade parent can fail: the side
// not to move in check, castling rights without their pieces, and (after an
// uncapture or unpromotion, when counts is set) too many pieces.
func (q *Position) parentValid(counts bool) bool {
	if q.attackedBy(q.kingSquare(q.side.Other()), q.side, q.Occupied()) {
		return false
	}
	return q.castlingConsistent() && (!counts || q.countsPossible())
}

// castlingConsistent reports whether every castling right has its king and
// rook at home.
func (q *Position) castlingConsistent() bool {
	if q.castling == 0 {
		return true
	}
	for i, h := range castleHomes {
		if q.castling&(1<<i) == 0 {
			continue
		}
		c := Color(i / 2)
		if !(q.pieces[King] & q.colors[c]).Has(h.king) || !(q.pieces[Rook] & q.colors[c]).Has(h.rook) {
			return false
		}
	}
	return true
}

// countsPossible reports whether each side's pieces could stand on the
// board together: at most 16, at most 8 pawns, and no more promoted pieces
// than missing pawns.
func (q *Position) countsPossible() bool {
	for c := White; c <= Black; c++ {
		own := q.colors[c]
		if own.Count() > 16 {
			return false
		}
		pawns := (q.pieces[Pawn] & own).Count()
		extra := max(0, (q.pieces[Queen]&own).Count()-1) +
			max(0, (q.pieces[Rook]&own).Count()-2) +
			max(0, (q.pieces[Bishop]&own).Count()-2) +
			max(0, (q.pieces[Knight]&own).Count()-2)
		if pawns+extra > 8 {
			return false
		}
	}
	return true
}
