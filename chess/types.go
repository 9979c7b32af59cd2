// Package chess holds the rules of chess as pure computation: bitboards,
// positions with FEN parsing and printing, legal move generation, copy-make,
// check and mate detection, SAN and UCI move text, material keys, and the
// predecessor (unmove) generator the retrograde engine needs.
//
// Squares are numbered a1 = 0, b1 = 1, …, h8 = 63, the numbering the chesstb
// tables use. A Position is a small value: the normal way to make a child is
// to copy it (Play returns the child and leaves the parent untouched).
package chess

import (
	"fmt"
	"math/bits"
)

// Color is a side: White or Black.
type Color uint8

// The two sides. White is zero so that a zero Position has White to move.
const (
	White Color = 0
	Black Color = 1
)

// Other returns the opposite side.
func (c Color) Other() Color { return c ^ 1 }

// String returns "w" or "b", the FEN spelling.
func (c Color) String() string {
	if c == White {
		return "w"
	}
	return "b"
}

// PieceType is a kind of piece without colour.
type PieceType uint8

// The piece types; NoPieceType marks an empty square or a move without
// promotion.
const (
	NoPieceType PieceType = iota
	Pawn
	Knight
	Bishop
	Rook
	Queen
	King
)

// String returns the lower-case letter of the piece type ("p", "n", …), or
// "-" for NoPieceType.
func (pt PieceType) String() string {
	if pt > King {
		return "?"
	}
	return string("-pnbrqk"[pt])
}

// Piece is a coloured piece; NoPiece is an empty square. The encoding is
// colour*8 + type, so a piece fits in four bits.
type Piece uint8

// NoPiece marks an empty square.
const NoPiece Piece = 0

// MakePiece returns the piece of colour c and type pt.
func MakePiece(c Color, pt PieceType) Piece {
	if pt == NoPieceType {
		return NoPiece
	}
	return Piece(uint8(c)<<3 | uint8(pt))
}

// Color returns the colour of the piece (White for NoPiece).
func (p Piece) Color() Color { return Color(p >> 3) }

// Type returns the type of the piece (NoPieceType for NoPiece).
func (p Piece) Type() PieceType { return PieceType(p & 7) }

// String returns the FEN letter of the piece (upper case for White), or "."
// for NoPiece.
func (p Piece) String() string {
	if p.Type() == NoPieceType || p.Type() > King {
		return "."
	}
	s := p.Type().String()
	if p.Color() == White {
		return string(s[0] - 'a' + 'A')
	}
	return s
}

// Square is a board square, a1 = 0 … h8 = 63; NoSquare is -1.
type Square int8

// Named squares, in the chesstb numbering.
const (
	A1, B1, C1, D1, E1, F1, G1, H1 Square = 0, 1, 2, 3, 4, 5, 6, 7
	A2, B2, C2, D2, E2, F2, G2, H2 Square = 8, 9, 10, 11, 12, 13, 14, 15
	A3, B3, C3, D3, E3, F3, G3, H3 Square = 16, 17, 18, 19, 20, 21, 22, 23
	A4, B4, C4, D4, E4, F4, G4, H4 Square = 24, 25, 26, 27, 28, 29, 30, 31
	A5, B5, C5, D5, E5, F5, G5, H5 Square = 32, 33, 34, 35, 36, 37, 38, 39
	A6, B6, C6, D6, E6, F6, G6, H6 Square = 40, 41, 42, 43, 44, 45, 46, 47
	A7, B7, C7, D7, E7, F7, G7, H7 Square = 48, 49, 50, 51, 52, 53, 54, 55
	A8, B8, C8, D8, E8, F8, G8, H8 Square = 56, 57, 58, 59, 60, 61, 62, 63
)

// NoSquare stands for "no square" (no en-passant target, no king).
const NoSquare Square = -1

// MakeSquare returns the square on file f and rank r (both 0..7).
func MakeSquare(f, r int) Square { return Square(r*8 + f) }

// File returns the file, 0 (a) to 7 (h).
func (sq Square) File() int { return int(sq) & 7 }

// Rank returns the rank, 0 (rank 1) to 7 (rank 8).
func (sq Square) Rank() int { return int(sq) >> 3 }

// Valid reports whether sq is one of the 64 squares.
func (sq Square) Valid() bool { return sq >= 0 && sq < 64 }

// String returns the algebraic name ("e4"), or "-" for NoSquare.
func (sq Square) String() string {
	if !sq.Valid() {
		return "-"
	}
	return string([]byte{byte('a' + sq.File()), byte('1' + sq.Rank())})
}

// ParseSquare parses an algebraic square name such as "e4".
func ParseSquare(s string) (Square, error) {
	if len(s) != 2 || s[0] < 'a' || s[0] > 'h' || s[1] < '1' || s[1] > '8' {
		return NoSquare, fmt.Errorf("%w: bad square %q", ErrBadFEN, s)
	}
	return MakeSquare(int(s[0]-'a'), int(s[1]-'1')), nil
}

// Bitboard is a set of squares: bit i is Square i.
type Bitboard uint64

// SquareBB returns the bitboard holding only sq.
func SquareBB(sq Square) Bitboard { return 1 << uint(sq) }

// Has reports whether sq is in the set.
func (b Bitboard) Has(sq Square) bool { return b>>uint(sq)&1 != 0 }

// Count returns the number of squares in the set.
func (b Bitboard) Count() int { return bits.OnesCount64(uint64(b)) }

// LSB returns the lowest square in the set; the set must not be empty.
func (b Bitboard) LSB() Square { return Square(bits.TrailingZeros64(uint64(b))) }

// PopLSB removes and returns the lowest square; the set must not be empty.
func (b *Bitboard) PopLSB() Square {
	sq := Square(bits.TrailingZeros64(uint64(*b)))
	*b &= *b - 1
	return sq
}

// CastlingRights is a set of the four castling rights.
type CastlingRights uint8

// The castling rights, one bit each.
const (
	WhiteKingside CastlingRights = 1 << iota
	WhiteQueenside
	BlackKingside
	BlackQueenside
	NoCastling  CastlingRights = 0
	AllCastling CastlingRights = 15
)

// String returns the FEN spelling ("KQkq", "-").
func (cr CastlingRights) String() string {
	if cr&AllCastling == 0 {
		return "-"
	}
	var b []byte
	for i, c := range "KQkq" {
		if cr&(1<<i) != 0 {
			b = append(b, byte(c))
		}
	}
	return string(b)
}

// Move is a move in a position, packed in 32 bits: from (6 bits), to (6
// bits), promotion piece type (3 bits), an en-passant flag and a castling
// flag. Castling is encoded as the king's move (e1g1). NoMove is zero, which
// no legal move encodes because from and to always differ.
type Move uint32

// NoMove is the zero move.
const NoMove Move = 0

const (
	moveEP     Move = 1 << 15
	moveCastle Move = 1 << 16
)

func makeMove(from, to Square) Move { return Move(from) | Move(to)<<6 }

func makePromo(from, to Square, pt PieceType) Move {
	return Move(from) | Move(to)<<6 | Move(pt)<<12
}

// From returns the origin square.
func (m Move) From() Square { return Square(m & 63) }

// To returns the destination square (for castling, the king's destination).
func (m Move) To() Square { return Square(m >> 6 & 63) }

// Promotion returns the promoted-to piece type, or NoPieceType.
func (m Move) Promotion() PieceType { return PieceType(m >> 12 & 7) }

// IsEnPassant reports whether the move is an en-passant capture.
func (m Move) IsEnPassant() bool { return m&moveEP != 0 }

// IsCastle reports whether the move is castling.
func (m Move) IsCastle() bool { return m&moveCastle != 0 }

// UCI returns the move in UCI notation ("e2e4", "e7e8q", castling "e1g1");
// NoMove is "0000".
func (m Move) UCI() string {
	if m == NoMove {
		return "0000"
	}
	s := m.From().String() + m.To().String()
	if pt := m.Promotion(); pt != NoPieceType {
		s += pt.String()
	}
	return s
}

// String returns the UCI spelling.
func (m Move) String() string { return m.UCI() }
