package chess

import (
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// ErrBadFEN is wrapped by every error about the text of a FEN (its syntax).
var ErrBadFEN = errors.New("chess: bad FEN")

// ErrIllegalPosition is wrapped by every error about a well-formed position
// that cannot arise in a game (wrong king count, the side not to move in
// check, pawns on the first or last rank, and the like).
var ErrIllegalPosition = errors.New("chess: illegal position")

// Position is a chess position: the pieces, the side to move, castling
// rights, the en-passant square, the half-move clock and the move number.
// It is a small comparable value; copy it to keep a position (Play returns
// the child by value). The zero Position has no kings and is not a valid
// position: obtain positions from ParseFEN, FromBoard, StartPosition or Play.
type Position struct {
	pieces   [7]Bitboard // by piece type; index 0 is unused
	colors   [2]Bitboard
	side     Color
	castling CastlingRights
	ep       Square
	halfmove int32
	fullmove int32
}

// StartFEN is the FEN of the initial position.
const StartFEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"

// StartPosition returns the initial position.
func StartPosition() Position {
	p, err := ParseFEN(StartFEN)
	if err != nil {
		panic("chess: the start position does not parse: " + err.Error())
	}
	return p
}

// maxClock bounds the clocks a FEN may carry, so that they fit the compact
// fields with room to count on.
const maxClock = 1 << 24

// ParseFEN parses a FEN. Missing trailing fields take their defaults (White
// to move, no castling, no en passant, clocks 0 and 1), and '_' may stand for
// a space so that FENs can be path components. The position is validated;
// the error wraps ErrBadFEN for malformed text and ErrIllegalPosition for a
// position that cannot arise, and says what is wrong. An en-passant square
// that is possible but allows no legal capture is dropped, so EnPassant
// reports only squares a capture can use.
func ParseFEN(s string) (Position, error) {
	var p Position
	fields := strings.Fields(strings.ReplaceAll(s, "_", " "))
	if len(fields) == 0 {
		return p, fmt.Errorf("%w: empty", ErrBadFEN)
	}
	if len(fields) > 6 {
		return p, fmt.Errorf("%w: %d fields, at most 6", ErrBadFEN, len(fields))
	}
	if err := p.parsePlacement(fields[0], false); err != nil {
		return Position{}, err
	}
	p.side = White
	if len(fields) > 1 {
		switch fields[1] {
		case "w":
			p.side = White
		case "b":
			p.side = Black
		default:
			return p, fmt.Errorf("%w: side to move %q, want w or b", ErrBadFEN, fields[1])
		}
	}
	p.ep = NoSquare
	if len(fields) > 2 && fields[2] != "-" {
		for _, ch := range []byte(fields[2]) {
			var r CastlingRights
			switch ch {
			case 'K':
				r = WhiteKingside
			case 'Q':
				r = WhiteQueenside
			case 'k':
				r = BlackKingside
			case 'q':
				r = BlackQueenside
			default:
				return p, fmt.Errorf("%w: bad castling field %q", ErrBadFEN, fields[2])
			}
			if p.castling&r != 0 {
				return p, fmt.Errorf("%w: castling field %q repeats %c", ErrBadFEN, fields[2], ch)
			}
			p.castling |= r
		}
	}
	if len(fields) > 3 && fields[3] != "-" {
		sq, err := ParseSquare(fields[3])
		if err != nil {
			return p, fmt.Errorf("%w: bad en-passant field %q", ErrBadFEN, fields[3])
		}
		p.ep = sq
	}
	p.fullmove = 1
	if len(fields) > 4 {
		n, err := strconv.Atoi(fields[4])
		if err != nil || n < 0 || n > maxClock {
			return p, fmt.Errorf("%w: bad half-move clock %q", ErrBadFEN, fields[4])
		}
		p.halfmove = int32(n)
	}
	if len(fields) > 5 {
		n, err := strconv.Atoi(fields[5])
		if err != nil || n < 0 || n > maxClock {
			return p, fmt.Errorf("%w: bad move number %q", ErrBadFEN, fields[5])
		}
		// Some writers emit move number 0; the first move is numbered 1.
		p.fullmove = int32(max(n, 1))
	}
	if err := p.validate(); err != nil {
		return Position{}, err
	}
	return p, nil
}

func pieceFromLetter(ch byte) (Piece, bool) {
	c := White
	if ch >= 'a' && ch <= 'z' {
		c = Black
		ch -= 'a' - 'A'
	}
	i := strings.IndexByte("PNBRQK", ch)
	if i < 0 {
		return NoPiece, false
	}
	return MakePiece(c, PieceType(i+1)), true
}

// FromBoard builds a position from a board array and the other FEN fields,
// validating it exactly as ParseFEN does. ep is NoSquare for none; a
// possible en-passant square without a legal capture is dropped.
func FromBoard(board [64]Piece, side Color, castling CastlingRights, ep Square, halfmove, fullmove int) (Position, error) {
	var p Position
	for sq, pc := range board {
		if pc == NoPiece {
			continue
		}
		if pc.Type() == NoPieceType || pc.Type() > King || pc > MakePiece(Black, King) {
			return Position{}, fmt.Errorf("%w: bad piece code %d on %v", ErrBadFEN, pc, Square(sq))
		}
		p.put(pc, Square(sq))
	}
	if side > Black {
		return Position{}, fmt.Errorf("%w: bad side %d", ErrBadFEN, side)
	}
	if castling > AllCastling {
		return Position{}, fmt.Errorf("%w: bad castling rights %d", ErrBadFEN, castling)
	}
	if ep != NoSquare && !ep.Valid() {
		return Position{}, fmt.Errorf("%w: bad en-passant square %d", ErrBadFEN, ep)
	}
	if halfmove < 0 || halfmove > maxClock {
		return Position{}, fmt.Errorf("%w: bad half-move clock %d", ErrBadFEN, halfmove)
	}
	if fullmove < 0 || fullmove > maxClock {
		return Position{}, fmt.Errorf("%w: bad move number %d", ErrBadFEN, fullmove)
	}
	p.side, p.castling, p.ep = side, castling, ep
	p.halfmove, p.fullmove = int32(halfmove), int32(max(fullmove, 1))
	if err := p.validate(); err != nil {
		return Position{}, err
	}
	return p, nil
}

// errNotToMoveInCheck is built once: enumerating solvers meet this reason
// for a large share of boards, and a prebuilt error costs no allocation.
var errNotToMoveInCheck = [2]error{
	fmt.Errorf("%w: black is in check but it is white to move", ErrIllegalPosition),
	fmt.Errorf("%w: white is in check but it is black to move", ErrIllegalPosition),
}

// castleHomes gives, per castling right, the king's home and the rook's home.
var castleHomes = [4]struct{ king, rook Square }{
	{E1, H1}, {E1, A1}, {E8, H8}, {E8, A8},
}

// validate rejects positions that cannot arise in a game — a king count
// other than one per side, pawns on the first or last rank, more pieces
// than a side can have, castling rights without their king and rook, the
// side not to move in check, an en-passant square no double push explains —
// and drops an en-passant square no legal capture uses. Subtler
// impossibilities (a triple check, say) are not looked for.
func (p *Position) validate() error {
	for c := White; c <= Black; c++ {
		if n := (p.pieces[King] & p.colors[c]).Count(); n != 1 {
			return fmt.Errorf("%w: %s has %d kings, want 1", ErrIllegalPosition, colorName(c), n)
		}
	}
	if p.pieces[Pawn]&(rank1|rank8) != 0 {
		sq := (p.pieces[Pawn] & (rank1 | rank8)).LSB()
		return fmt.Errorf("%w: pawn on %v (first or last rank)", ErrIllegalPosition, sq)
	}
	for c := White; c <= Black; c++ {
		own := p.colors[c]
		if n := own.Count(); n > 16 {
			return fmt.Errorf("%w: %s has %d pieces, at most 16", ErrIllegalPosition, colorName(c), n)
		}
		pawns := (p.pieces[Pawn] & own).Count()
		if pawns > 8 {
			return fmt.Errorf("%w: %s has %d pawns, at most 8", ErrIllegalPosition, colorName(c), pawns)
		}
		// Every piece beyond the initial set must be a promoted pawn.
		extra := max(0, (p.pieces[Queen]&own).Count()-1) +
			max(0, (p.pieces[Rook]&own).Count()-2) +
			max(0, (p.pieces[Bishop]&own).Count()-2) +
			max(0, (p.pieces[Knight]&own).Count()-2)
		if pawns+extra > 8 {
			return fmt.Errorf("%w: %s has %d pawns and %d promoted pieces, at most 8 together",
				ErrIllegalPosition, colorName(c), pawns, extra)
		}
	}
	for i, h := range castleHomes {
		r := CastlingRights(1 << i)
		if p.castling&r == 0 {
			continue
		}
		c := White
		if i >= 2 {
			c = Black
		}
		if p.PieceAt(h.king) != MakePiece(c, King) {
			return fmt.Errorf("%w: castling right %v without the %s king on %v", ErrIllegalPosition, r, colorName(c), h.king)
		}
		if p.PieceAt(h.rook) != MakePiece(c, Rook) {
			return fmt.Errorf("%w: castling right %v without the %s rook on %v", ErrIllegalPosition, r, colorName(c), h.rook)
		}
	}
	if p.attackedBy(p.kingSquare(p.side.Other()), p.side, p.Occupied()) {
		return errNotToMoveInCheck[p.side]
	}
	if p.ep != NoSquare {
		if err := p.checkEP(); err != nil {
			return err
		}
		if !p.hasLegalEP() {
			p.ep = NoSquare
		}
	}
	return nil
}

// checkEP verifies that the en-passant square could follow a double push:
// it is on the right rank, it and the pushed pawn's origin are empty, and
// the pushed pawn stands in front of it.
func (p *Position) checkEP() error {
	ep := p.ep
	wantRank, pushed, origin := 5, ep-8, ep+8
	if p.side == Black {
		wantRank, pushed, origin = 2, ep+8, ep-8
	}
	switch {
	case ep.Rank() != wantRank:
		return fmt.Errorf("%w: en-passant square %v is not on rank %d", ErrIllegalPosition, ep, wantRank+1)
	case p.Occupied().Has(ep):
		return fmt.Errorf("%w: en-passant square %v is occupied", ErrIllegalPosition, ep)
	case p.Occupied().Has(origin):
		return fmt.Errorf("%w: en-passant square %v: the double push's origin %v is occupied", ErrIllegalPosition, ep, origin)
	case p.PieceAt(pushed) != MakePiece(p.side.Other(), Pawn):
		return fmt.Errorf("%w: en-passant square %v without a %s pawn on %v", ErrIllegalPosition, ep, colorName(p.side.Other()), pushed)
	}
	return nil
}

func colorName(c Color) string {
	if c == White {
		return "white"
	}
	return "black"
}

func (p *Position) put(pc Piece, sq Square) {
	b := SquareBB(sq)
	p.pieces[pc.Type()] |= b
	p.colors[pc.Color()] |= b
}

// FEN returns the position in Forsyth–Edwards Notation.
func (p *Position) FEN() string {
	var b strings.Builder
	b.Grow(90)
	for r := 7; r >= 0; r-- {
		empty := 0
		for f := 0; f < 8; f++ {
			pc := p.PieceAt(MakeSquare(f, r))
			if pc == NoPiece {
				empty++
				continue
			}
			if empty > 0 {
				b.WriteByte(byte('0' + empty))
				empty = 0
			}
			b.WriteString(pc.String())
		}
		if empty > 0 {
			b.WriteByte(byte('0' + empty))
		}
		if r > 0 {
			b.WriteByte('/')
		}
	}
	b.WriteByte(' ')
	b.WriteString(p.side.String())
	b.WriteByte(' ')
	b.WriteString(p.castling.String())
	b.WriteByte(' ')
	b.WriteString(p.ep.String())
	b.WriteByte(' ')
	b.WriteString(strconv.Itoa(int(p.halfmove)))
	b.WriteByte(' ')
	b.WriteString(strconv.Itoa(int(p.fullmove)))
	return b.String()
}

// String returns the FEN.
func (p Position) String() string { return p.FEN() }

// SideToMove returns the side to move.
func (p *Position) SideToMove() Color { return p.side }

// PieceAt returns the piece on sq, or NoPiece.
func (p *Position) PieceAt(sq Square) Piece {
	b := SquareBB(sq)
	var c Color
	switch {
	case p.colors[White]&b != 0:
		c = White
	case p.colors[Black]&b != 0:
		c = Black
	default:
		return NoPiece
	}
	for pt := Pawn; pt <= King; pt++ {
		if p.pieces[pt]&b != 0 {
			return MakePiece(c, pt)
		}
	}
	return NoPiece
}

// typeAt returns the type of the piece on sq (NoPieceType if empty).
func (p *Position) typeAt(sq Square) PieceType {
	b := SquareBB(sq)
	for pt := Pawn; pt <= King; pt++ {
		if p.pieces[pt]&b != 0 {
			return pt
		}
	}
	return NoPieceType
}

// Pieces returns the squares of c's pieces of type pt.
func (p *Position) Pieces(c Color, pt PieceType) Bitboard {
	if pt == NoPieceType || pt > King {
		return 0
	}
	return p.pieces[pt] & p.colors[c]
}

// ByColor returns the squares of all of c's pieces.
func (p *Position) ByColor(c Color) Bitboard { return p.colors[c] }

// Occupied returns the squares holding any piece.
func (p *Position) Occupied() Bitboard { return p.colors[White] | p.colors[Black] }

// Castling returns the castling rights.
func (p *Position) Castling() CastlingRights { return p.castling }

// EnPassant returns the en-passant target square, or NoSquare. It is set
// only when a legal en-passant capture exists (as the chesstb prober treats
// it), so two positions that differ only by an unusable square are equal.
func (p *Position) EnPassant() Square { return p.ep }

// HalfmoveClock returns the number of plies since the last capture or pawn
// move.
func (p *Position) HalfmoveClock() int { return int(p.halfmove) }

// SetHalfmoveClock sets the half-move clock (negative values become 0).
func (p *Position) SetHalfmoveClock(n int) { p.halfmove = int32(min(max(n, 0), maxClock)) }

// FullmoveNumber returns the move number, starting at 1 and incremented
// after Black's move.
func (p *Position) FullmoveNumber() int { return int(p.fullmove) }

// MaterialKey returns the material signature, White's pieces first, each
// side in the order K Q R B N P, the sides separated by 'v' (e.g. "KQvK",
// "KRPvKR").
func (p *Position) MaterialKey() string {
	var b strings.Builder
	for c := White; c <= Black; c++ {
		if c == Black {
			b.WriteByte('v')
		}
		for _, pt := range [...]PieceType{King, Queen, Rook, Bishop, Knight, Pawn} {
			n := p.Pieces(c, pt).Count()
			for range n {
				b.WriteByte("-PNBRQK"[pt])
			}
		}
	}
	return b.String()
}

func flipBB(b Bitboard) Bitboard { return Bitboard(bits.ReverseBytes64(uint64(b))) }

// Mirror returns the colour-flipped position: ranks mirrored, colours of
// the pieces, the side to move, castling rights and the en-passant square
// swapped accordingly. The clocks are kept.
func (p *Position) Mirror() Position {
	m := *p
	for pt := Pawn; pt <= King; pt++ {
		m.pieces[pt] = flipBB(p.pieces[pt])
	}
	m.colors[White] = flipBB(p.colors[Black])
	m.colors[Black] = flipBB(p.colors[White])
	m.side = p.side.Other()
	m.castling = (p.castling&3)<<2 | p.castling>>2
	if p.ep != NoSquare {
		m.ep = p.ep ^ 56
	}
	return m
}

// InsufficientMaterial reports whether neither side can ever mate: no
// pawns, rooks or queens, and either at most one minor piece or only
// bishops all standing on squares of one colour.
func (p *Position) InsufficientMaterial() bool {
	if p.pieces[Pawn]|p.pieces[Rook]|p.pieces[Queen] != 0 {
		return false
	}
	minors := p.pieces[Knight] | p.pieces[Bishop]
	if minors.Count() <= 1 {
		return true
	}
	if p.pieces[Knight] != 0 {
		return false
	}
	const light Bitboard = 0x55aa55aa55aa55aa
	return p.pieces[Bishop]&light == 0 || p.pieces[Bishop]&^light == 0
}
