package geister

import (
	"fmt"
	"math/bits"
	"strings"
)

// gatLen is the length of a GAT board: 16 triples.
const gatLen = 48

// GATCaptured and GATEscaped are the coordinates a GAT board gives a piece
// that is off the board: "99" captured, "88" escaped.
const (
	GATCaptured = 9
	GATEscaped  = 8
)

// GATPiece is one triple of a GAT board: where a piece stands and what the
// board's viewer knows of its colour.
type GATPiece struct {
	// X and Y are the square (0..5 each), or both GATCaptured, or both
	// GATEscaped.
	X, Y int8
	// Colour is 'B' or 'R' for an own piece whose colour only its owner
	// knows, 'b' or 'r' for a colour both players know (a captured or
	// escaped piece, or any piece of a board with every colour shown), 'u'
	// for an opponent piece whose colour the viewer does not know.
	Colour byte
}

// OnBoard reports whether the piece stands on a square.
func (p GATPiece) OnBoard() bool { return p.X >= 0 && p.X <= 5 && p.Y >= 0 && p.Y <= 5 }

// IsCaptured reports whether the piece was captured.
func (p GATPiece) IsCaptured() bool { return p.X == GATCaptured && p.Y == GATCaptured }

// IsEscaped reports whether the piece escaped off the board.
func (p GATPiece) IsEscaped() bool { return p.X == GATEscaped && p.Y == GATEscaped }

// Red reports whether the piece is known to be red (either case).
func (p GATPiece) Red() bool { return p.Colour == 'R' || p.Colour == 'r' }

// Blue reports whether the piece is known to be blue (either case).
func (p GATPiece) Blue() bool { return p.Colour == 'B' || p.Colour == 'b' }

// Square returns the piece's square; valid only when OnBoard.
func (p GATPiece) Square() Square { return SquareAt(int(p.X), int(p.Y)) }

// GATBoard is a GAT board as one player sees it, in that player's
// orientation (the side to move's, as everywhere in this package):
// indexes 0..7 are the viewer's own pieces A..H, 8..15 the opponent's
// a..h. A piece keeps its letter and its place for the whole game.
type GATBoard [16]GATPiece

// GATSyntax says which writers' GAT boards ParseGATBoard reads. The rules
// hold in either: they differ only in the colour letters they take.
type GATSyntax uint8

const (
	// GATWire is the board a GAT server sends (docs/gat.md): colour
	// letters exactly as the reference server writes them
	// (Board.getEncodedItem in miyo/geister_server.java), B, R, b, r and
	// u; any other letter is a malformed message.
	GATWire GATSyntax = iota
	// GATTable is the board the table tools read: the oracle files' gat
	// column, and a board a user types. Colour letters are read in either
	// case (U is u), as the reference's client (ItemColor.decode) and the
	// table-driven player of eukaryo/Unweaver (parse_board48) read them.
	GATTable
)

// ParseGATBoard reads a 48-character GAT board: 16 triples "xyc", own
// pieces first, each a square (x and y 0..5), 99 (captured) or 88
// (escaped), then a colour letter as syntax allows. Whatever the syntax,
// the board must be one the rules allow a player to see: no square holds
// two pieces (a step onto an opponent captures it, and none onto an own
// piece is legal), and every colour the player knows is given, its own
// pieces' and that of every piece off the board (a capture shows the
// colour, and only a blue escapes). Errors match ErrNotation, or
// ErrInvalidPosition for two pieces on one square.
func ParseGATBoard(s string, syntax GATSyntax) (GATBoard, error) {
	var b GATBoard
	if len(s) != gatLen {
		return b, fmt.Errorf("%w: GAT board %q has %d characters, want %d", ErrNotation, s, len(s), gatLen)
	}
	var occupied uint64
	for i := range b {
		t := s[3*i : 3*i+3]
		x, y, c := t[0], t[1], t[2]
		switch {
		case x >= '0' && x <= '5' && y >= '0' && y <= '5':
		case x == '9' && y == '9', x == '8' && y == '8':
		default:
			return b, fmt.Errorf("%w: GAT piece %c %q: %q is not a square 00..55, 99 (captured) or 88 (escaped)", ErrNotation, GATLetter(i), t, t[:2])
		}
		switch {
		case c == 'B', c == 'R', c == 'b', c == 'r', c == 'u':
		case syntax == GATTable && c == 'U':
			c = 'u'
		default:
			letters := "B, R, b, r or u"
			if syntax == GATTable {
				letters = "B, R or U in either case"
			}
			return b, fmt.Errorf("%w: GAT piece %c %q: colour %q is not %s", ErrNotation, GATLetter(i), t, c, letters)
		}
		p := GATPiece{X: int8(x - '0'), Y: int8(y - '0'), Colour: c}
		switch {
		case c != 'u':
		case i < 8:
			return b, fmt.Errorf("%w: GAT piece %c %q is the viewer's own and has no colour", ErrNotation, GATLetter(i), t)
		case !p.OnBoard():
			return b, fmt.Errorf("%w: GAT piece %c %q is off the board and has no colour", ErrNotation, GATLetter(i), t)
		}
		if p.OnBoard() {
			bit := p.Square().Bit()
			if occupied&bit != 0 {
				return b, fmt.Errorf("%w: GAT square %s holds two pieces", ErrInvalidPosition, p.Square())
			}
			occupied |= bit
		}
		b[i] = p
	}
	return b, nil
}

// GATLetter names piece i of a GAT board: 'A'..'H' for the viewer's own
// pieces (0..7), 'a'..'h' for the opponent's (8..15).
func GATLetter(i int) byte {
	if i < 8 {
		return byte('A' + i)
	}
	return byte('a' + i - 8)
}

// String writes the board as its 48-character form.
func (b GATBoard) String() string {
	var sb strings.Builder
	sb.Grow(gatLen)
	for _, p := range b {
		sb.WriteByte(byte('0' + p.X))
		sb.WriteByte(byte('0' + p.Y))
		sb.WriteByte(p.Colour)
	}
	return sb.String()
}

// Position returns the board as a perfect-information position from the
// viewer's side. Every colour must be known and each side must list four
// blue and four red pieces, captured ones as 99; a piece that escaped (88)
// has ended the game, so its board is not a position.
func (b GATBoard) Position() (Position, error) {
	var p Position
	for i, g := range b {
		switch {
		case g.IsEscaped():
			return Position{}, fmt.Errorf("%w: GAT piece %c has escaped (88); the game is over", ErrNotation, GATLetter(i))
		case g.Colour == 'u':
			return Position{}, fmt.Errorf("%w: GAT piece %c has an unknown colour; read it as an observation", ErrNotation, GATLetter(i))
		}
		if !g.OnBoard() {
			continue
		}
		bit := g.Square().Bit()
		switch own := i < 8; {
		case own && g.Blue():
			p.OwnBlue |= bit
		case own:
			p.OwnRed |= bit
		case g.Blue():
			p.OppBlue |= bit
		default:
			p.OppRed |= bit
		}
	}
	for side := 0; side < 2; side++ {
		blues := 0
		for _, g := range b[8*side : 8*side+8] {
			if g.Blue() {
				blues++
			}
		}
		if blues != 4 {
			return Position{}, fmt.Errorf("%w: GAT side %d lists %d blue and %d red pieces, want 4 and 4", ErrNotation, side+1, blues, 8-blues)
		}
	}
	if err := p.Validate(); err != nil {
		return Position{}, err
	}
	return p, nil
}

// Observation returns what the viewer knows: its own pieces by colour, the
// squares of the opponent's pieces on the board, and how many of those are
// red, four minus the captured reds ("99r"). A piece that escaped (88) has
// ended the game, so its board is not an observation.
func (b GATBoard) Observation() (Observation, error) {
	var o Observation
	capturedBlue, capturedRed := 0, 0
	for i, g := range b {
		if g.IsEscaped() {
			return Observation{}, fmt.Errorf("%w: GAT piece %c has escaped (88); the game is over", ErrNotation, GATLetter(i))
		}
		if !g.OnBoard() {
			if i >= 8 {
				if g.Red() {
					capturedRed++
				} else {
					capturedBlue++
				}
			}
			continue
		}
		bit := g.Square().Bit()
		switch {
		case i >= 8:
			o.Opp |= bit
		case g.Blue():
			o.OwnBlue |= bit
		default:
			o.OwnRed |= bit
		}
	}
	if capturedBlue > 4 || capturedRed > 4 {
		return Observation{}, fmt.Errorf("%w: %d captured opponent blues and %d reds (at most 4 each)", ErrNotation, capturedBlue, capturedRed)
	}
	o.OppRed = 4 - capturedRed
	if n := bits.OnesCount64(o.Opp); n != 8-capturedBlue-capturedRed {
		return Observation{}, fmt.Errorf("%w: %d opponent pieces on the board but %d blue and %d red captured", ErrNotation, n, capturedBlue, capturedRed)
	}
	if err := o.Validate(); err != nil {
		return Observation{}, err
	}
	return o, nil
}

// ParseGAT parses a 48-character GAT board in the table tools' notation
// (GATTable) with every colour known, as the oracle files write it; see
// GATBoard.Position.
func ParseGAT(s string) (Position, error) {
	b, err := ParseGATBoard(s, GATTable)
	if err != nil {
		return Position{}, err
	}
	return b.Position()
}

// ParseGATObservation parses a GAT board in the table tools' notation
// (GATTable) as the side to move sees it: opponent pieces on the board may
// be 'u' (unknown); see GATBoard.Observation.
func ParseGATObservation(s string) (Observation, error) {
	b, err := ParseGATBoard(s, GATTable)
	if err != nil {
		return Observation{}, err
	}
	return b.Observation()
}
