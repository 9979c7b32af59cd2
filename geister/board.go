package geister

import (
	"errors"
	"fmt"
	"math/bits"
)

// Square is a square of the 6x6 board as a bit index in the reference's 8x8
// embedding: square (x, y) is bit 8*(y+1)+(x+1), x = column 0..5 (A..F),
// y = row 0..5 (rows 1..6). Row 1 (y = 0) is the side to move's exit row.
// Using the reference's embedding keeps bitboards comparable with its
// hexadecimal dumps and makes off-board steps fall onto zero bits.
type Square uint8

// BoardMask has a bit set for each of the 36 squares of the board.
const BoardMask uint64 = 0x007E7E7E7E7E7E00

// ExitMask has the side to move's two exit squares, A1 and F1.
const ExitMask uint64 = 1<<9 | 1<<14

// SquareAt returns the square at column x and row y (both 0..5). Coordinates
// outside the board give a square whose Valid method reports false.
func SquareAt(x, y int) Square {
	if x < 0 || x > 5 || y < 0 || y > 5 {
		return 0
	}
	return Square(8*(y+1) + x + 1)
}

// Valid reports whether s is one of the 36 board squares.
func (s Square) Valid() bool { return s < 64 && BoardMask&(1<<s) != 0 }

// X returns the column 0..5 (A..F).
func (s Square) X() int { return int(s)%8 - 1 }

// Y returns the row 0..5 (rows 1..6).
func (s Square) Y() int { return int(s)/8 - 1 }

// Bit returns the square's bitboard.
func (s Square) Bit() uint64 { return 1 << s }

// String names the square as a column letter and row number, "A1".."F6".
func (s Square) String() string {
	if !s.Valid() {
		return fmt.Sprintf("Square(%d)", uint8(s))
	}
	return string([]byte{byte('A' + s.X()), byte('1' + s.Y())})
}

// Coord returns the square as the two digits "xy" used by the GAT protocol
// and the oracle files ("00" is A1, "50" is F1).
func (s Square) Coord() string {
	if !s.Valid() {
		return "??"
	}
	return string([]byte{byte('0' + s.X()), byte('0' + s.Y())})
}

// Dir is the direction of a step. North is toward the side to move's exit
// row (y-1), as in the GAT protocol.
type Dir uint8

// The four step directions.
const (
	North Dir = iota // y-1, toward the side to move's exits
	East             // x+1
	South            // y+1
	West             // x-1
)

// String returns the direction's letter: N, E, S or W.
func (d Dir) String() string {
	switch d {
	case North:
		return "N"
	case East:
		return "E"
	case South:
		return "S"
	case West:
		return "W"
	}
	return "?"
}

// Name returns the direction's GAT protocol word (NORTH, EAST, SOUTH, WEST).
func (d Dir) Name() string {
	switch d {
	case North:
		return "NORTH"
	case East:
		return "EAST"
	case South:
		return "SOUTH"
	case West:
		return "WEST"
	}
	return "?"
}

// delta is the change of bit index for a step in each direction.
var delta = [4]int{North: -8, East: +1, South: +8, West: -1}

// Piece is what stands on a square, from the side to move's point of view.
type Piece uint8

// The piece kinds. The zero value is an empty square.
const (
	Empty   Piece = iota
	OwnBlue       // the side to move's blue ("good") piece, 'B'
	OwnRed        // the side to move's red ("bad") piece, 'R'
	OppBlue       // the opponent's blue piece, 'b'
	OppRed        // the opponent's red piece, 'r'
)

// Letter returns the piece's notation letter: B, R, b, r, or '.' for empty.
func (p Piece) Letter() byte {
	return ".BRbr"[p%5]
}

// Position is a perfect-information Geister position from the side to
// move's point of view: four disjoint bitboards in the Square embedding. The
// side to move heads for row 1 (exits A1 and F1); the opponent for row 6.
// There is no side-to-move bit: after every move the board is turned by 180
// degrees and the roles swap (see Play).
type Position struct {
	OwnBlue, OwnRed, OppBlue, OppRed uint64
}

// At returns the piece on square s.
func (p Position) At(s Square) Piece {
	b := uint64(1) << (s & 63)
	switch {
	case p.OwnBlue&b != 0:
		return OwnBlue
	case p.OwnRed&b != 0:
		return OwnRed
	case p.OppBlue&b != 0:
		return OppBlue
	case p.OppRed&b != 0:
		return OppRed
	}
	return Empty
}

// Own returns the side to move's pieces.
func (p Position) Own() uint64 { return p.OwnBlue | p.OwnRed }

// Opp returns the opponent's pieces.
func (p Position) Opp() uint64 { return p.OppBlue | p.OppRed }

// ErrInvalidPosition is matched (errors.Is) by every error about a board
// that cannot occur: pieces off the board, two pieces on a square, more
// than four pieces of a kind.
var ErrInvalidPosition = errors.New("geister: invalid position")

// Validate reports whether p could occur in a game: every piece on the
// board, no square holding two pieces, at most four pieces of each kind.
// Zero counts are allowed (such positions are terminal, see Terminal).
func (p Position) Validate() error {
	all := [4]uint64{p.OwnBlue, p.OwnRed, p.OppBlue, p.OppRed}
	var seen uint64
	for i, b := range all {
		if b&^BoardMask != 0 {
			return fmt.Errorf("%w: %s bits %#016x lie off the board", ErrInvalidPosition, Piece(i+1).kindName(), b&^BoardMask)
		}
		if seen&b != 0 {
			return fmt.Errorf("%w: square %s holds two pieces", ErrInvalidPosition, Square(bits.TrailingZeros64(seen&b)))
		}
		seen |= b
		if n := bits.OnesCount64(b); n > 4 {
			return fmt.Errorf("%w: %d %s pieces (at most 4)", ErrInvalidPosition, n, Piece(i+1).kindName())
		}
	}
	return nil
}

func (p Piece) kindName() string {
	switch p {
	case OwnBlue:
		return "own blue"
	case OwnRed:
		return "own red"
	case OppBlue:
		return "opponent blue"
	case OppRed:
		return "opponent red"
	}
	return "empty"
}

// Terminal reports whether the game is decided at the start of the side to
// move's turn and, if so, its value (1: the side to move wins now, 2: it has
// lost). Wins are checked first, as the reference does: no own red left, no
// opponent blue left, or an own blue on an exit (its escape is the one
// remaining ply); then losses: no own blue left, or no opponent red left.
func (p Position) Terminal() (value uint8, ok bool) {
	switch {
	case p.OwnRed == 0, p.OppBlue == 0, p.OwnBlue&ExitMask != 0:
		return 1, true
	case p.OwnBlue == 0, p.OppRed == 0:
		return 2, true
	}
	return 0, false
}

// Mirror returns the left-right mirror image (column A <-> F), which maps
// square (x, y) to (5-x, y). Tables store a position and its mirror image once.
func (p Position) Mirror() Position {
	return Position{mirror(p.OwnBlue), mirror(p.OwnRed), mirror(p.OppBlue), mirror(p.OppRed)}
}

// mirror reverses the bits inside each byte, i.e. columns within each row.
func mirror(b uint64) uint64 { return bits.ReverseBytes64(bits.Reverse64(b)) }

// Move is one step of a piece of the side to move.
type Move struct {
	From, To Square
	Dir      Dir
	// Capture is the opponent piece taken (OppBlue or OppRed), or Empty.
	Capture Piece
}

// String formats the move as "from-to" in Coord form with the direction and
// any capture, e.g. "21-20N" or "13-14Sxr".
func (m Move) String() string {
	s := m.From.Coord() + "-" + m.To.Coord() + m.Dir.String()
	switch m.Capture {
	case OppBlue:
		s += "xb"
	case OppRed:
		s += "xr"
	}
	return s
}

// Moves appends every legal move of the side to move to buf and returns it.
// Escapes are not moves: an own blue on A1 or F1 makes the position terminal
// (see Terminal). The order is by piece square, then North, East, South, West.
func (p Position) Moves(buf []Move) []Move {
	own := p.Own()
	free := BoardMask &^ own
	for pieces := own; pieces != 0; pieces &= pieces - 1 {
		from := Square(bits.TrailingZeros64(pieces))
		for d := North; d <= West; d++ {
			to := Square(int(from) + delta[d])
			if free&(1<<to) == 0 {
				continue
			}
			taken := Empty
			if p.OppBlue&(1<<to) != 0 {
				taken = OppBlue
			} else if p.OppRed&(1<<to) != 0 {
				taken = OppRed
			}
			buf = append(buf, Move{From: from, To: to, Dir: d, Capture: taken})
		}
	}
	return buf
}

// Play returns the position after m from the new side to move's point of
// view: the board turned by 180 degrees (square (x, y) becomes (5-x, 5-y),
// which is reversing the 64-bit word) with the roles swapped. m must be one
// of p.Moves; Play does not check it.
func (p Position) Play(m Move) Position {
	from, to := uint64(1)<<m.From, uint64(1)<<m.To
	ob, or := p.OppBlue&^to, p.OppRed&^to
	pb, pr := p.OwnBlue, p.OwnRed
	if pb&from != 0 {
		pb ^= from | to
	} else {
		pr ^= from | to
	}
	return Position{
		OwnBlue: bits.Reverse64(ob),
		OwnRed:  bits.Reverse64(or),
		OppBlue: bits.Reverse64(pb),
		OppRed:  bits.Reverse64(pr),
	}
}

// CapturesLastBlue reports whether m takes the opponent's last blue piece,
// which wins at once (the position's value is then 1).
func (p Position) CapturesLastBlue(m Move) bool {
	return m.Capture == OppBlue && p.OppBlue == 1<<m.To
}

// Unmoves appends to buf every position q, from q's side to move, that has
// a legal move m with q.Play(m) == p, and returns it: p's opponent moved one
// of its pieces one step, possibly capturing a piece of p's side to move
// (of either colour, as long as that colour then had at most four pieces).
// Parents that are decided before any move (for example with a blue of
// the mover already on its exit) are included; a retrograde builder takes
// their values from Terminal instead. Each parent appears once per move
// that leads to p.
func (p Position) Unmoves(buf []Position) []Position {
	// The board just after the move, from the mover's point of view.
	q := Position{
		OwnBlue: bits.Reverse64(p.OppBlue),
		OwnRed:  bits.Reverse64(p.OppRed),
		OppBlue: bits.Reverse64(p.OwnBlue),
		OppRed:  bits.Reverse64(p.OwnRed),
	}
	empty := BoardMask &^ (q.Own() | q.Opp())
	canBlue := bits.OnesCount64(q.OppBlue) < 4
	canRed := bits.OnesCount64(q.OppRed) < 4
	for pieces := q.Own(); pieces != 0; pieces &= pieces - 1 {
		to := Square(bits.TrailingZeros64(pieces))
		toBit := uint64(1) << to
		blue := q.OwnBlue&toBit != 0
		for d := North; d <= West; d++ {
			from := int(to) - delta[d]
			if from < 0 || from > 63 || empty&(1<<from) == 0 {
				continue
			}
			parent := q
			if blue {
				parent.OwnBlue ^= toBit | 1<<from
			} else {
				parent.OwnRed ^= toBit | 1<<from
			}
			buf = append(buf, parent)
			if canBlue {
				c := parent
				c.OppBlue |= toBit
				buf = append(buf, c)
			}
			if canRed {
				c := parent
				c.OppRed |= toBit
				buf = append(buf, c)
			}
		}
	}
	return buf
}
