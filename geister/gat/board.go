// Package gat speaks the GAT (Geister AI tournament) protocol: the board
// string of 16 "x y c" triples, the server's and the client's messages, a
// line connection with a deadline on every read, and the game's rules as a
// match server applies them (Game). The wire format is described in
// docs/gat.md.
//
// Coordinates are always the viewer's: x is the column 0..5, y the row
// 0..5, the viewer's own pieces start on rows 4 and 5 and head north
// (y-1) to the exits (0,0) and (5,0). This is the orientation of package
// geister and of the tables, so a board converts to a geister.Observation
// or geister.Position without turning.
package gat

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tbfs/tbfs/geister"
)

// ErrSyntax is matched by every error about a malformed board or message.
var ErrSyntax = errors.New("gat: malformed")

// Special coordinates of pieces off the board.
const (
	Captured = 9 // a captured piece is written "99"
	Escaped  = 8 // an escaped piece is written "88"
)

// Piece is one triple of a board: where a piece stands and what the viewer
// knows of its colour.
type Piece struct {
	// X and Y are the square (0..5 each), or both Captured, or both Escaped.
	X, Y int8
	// Colour is 'B' or 'R' for an own piece whose colour only its owner
	// knows, 'b' or 'r' for a colour both players know (a captured or
	// escaped piece, or every piece in an end-of-game board), 'u' for an
	// opponent piece whose colour the viewer does not know.
	Colour byte
}

// OnBoard reports whether the piece stands on a square.
func (p Piece) OnBoard() bool { return p.X >= 0 && p.X <= 5 && p.Y >= 0 && p.Y <= 5 }

// IsCaptured reports whether the piece was captured.
func (p Piece) IsCaptured() bool { return p.X == Captured && p.Y == Captured }

// IsEscaped reports whether the piece escaped off the board.
func (p Piece) IsEscaped() bool { return p.X == Escaped && p.Y == Escaped }

// Red reports whether the piece is known to be red (either case).
func (p Piece) Red() bool { return p.Colour == 'R' || p.Colour == 'r' }

// Blue reports whether the piece is known to be blue (either case).
func (p Piece) Blue() bool { return p.Colour == 'B' || p.Colour == 'b' }

// Square returns the piece's square in package geister's embedding; valid
// only when OnBoard.
func (p Piece) Square() geister.Square { return geister.SquareAt(int(p.X), int(p.Y)) }

// Board is a GAT board as one player sees it: indexes 0..7 are the viewer's
// pieces A..H, 8..15 the opponent's a..h. A piece keeps its letter for the
// whole game.
type Board [16]Piece

// BoardLen is the length of a board string.
const BoardLen = 48

// ParseBoard reads a 48-character board string. Each triple is two digits
// and a colour letter (B, R, b, r or u); the square must be on the board
// (x and y 0..5), captured (99) or escaped (88). Own pieces must have a
// colour; two pieces on one square are refused.
func ParseBoard(s string) (Board, error) {
	var b Board
	if len(s) != BoardLen {
		return b, fmt.Errorf("%w board: %q has %d characters, want %d", ErrSyntax, s, len(s), BoardLen)
	}
	var occupied [6][6]bool
	for i := range b {
		t := s[3*i : 3*i+3]
		x, y, c := t[0], t[1], t[2]
		switch {
		case x >= '0' && x <= '5' && y >= '0' && y <= '5':
		case x == '9' && y == '9', x == '8' && y == '8':
		default:
			return b, fmt.Errorf("%w board: piece %c %q: %q is not a square 00..55, 99 (captured) or 88 (escaped)", ErrSyntax, Letter(i), t, t[:2])
		}
		switch c {
		case 'B', 'R', 'b', 'r':
		case 'u':
			if i < 8 {
				return b, fmt.Errorf("%w board: own piece %c %q has no colour", ErrSyntax, Letter(i), t)
			}
		default:
			return b, fmt.Errorf("%w board: piece %c %q: colour %q is not B, R, b, r or u", ErrSyntax, Letter(i), t, c)
		}
		p := Piece{X: int8(x - '0'), Y: int8(y - '0'), Colour: c}
		if p.OnBoard() {
			if occupied[p.Y][p.X] {
				return b, fmt.Errorf("%w board: square %d%d holds two pieces", ErrSyntax, p.X, p.Y)
			}
			occupied[p.Y][p.X] = true
		}
		b[i] = p
	}
	return b, nil
}

// String writes the board as its 48-character wire form.
func (b Board) String() string {
	var sb strings.Builder
	sb.Grow(BoardLen)
	for _, p := range b {
		sb.WriteByte(byte('0' + p.X))
		sb.WriteByte(byte('0' + p.Y))
		sb.WriteByte(p.Colour)
	}
	return sb.String()
}

// Letter names piece i of a board: 'A'..'H' for the viewer's own pieces
// (0..7), 'a'..'h' for the opponent's (8..15).
func Letter(i int) byte {
	if i < 8 {
		return byte('A' + i)
	}
	return byte('a' + i - 8)
}

// Observation returns what the viewer knows, in package geister's terms: its
// own pieces by colour, the opponent's pieces on the board and how many of
// them are red (four minus the captured reds). Escaped pieces are refused:
// the game is over.
func (b Board) Observation() (geister.Observation, error) {
	return geister.ParseGATObservation(b.String())
}

// Position returns the board as a perfect-information position from the
// viewer's side. Every piece on the board must have a known colour (an end
// of game board, or one from Game.View with reveal set).
func (b Board) Position() (geister.Position, error) {
	var p geister.Position
	for i, pc := range b {
		if !pc.OnBoard() {
			continue
		}
		bit := pc.Square().Bit()
		switch {
		case pc.Colour == 'u':
			return geister.Position{}, fmt.Errorf("%w board: piece %c has an unknown colour", ErrSyntax, Letter(i))
		case i < 8 && pc.Blue():
			p.OwnBlue |= bit
		case i < 8:
			p.OwnRed |= bit
		case pc.Blue():
			p.OppBlue |= bit
		default:
			p.OppRed |= bit
		}
	}
	return p, p.Validate()
}

// At returns the index of the piece on square (x, y), or -1.
func (b Board) At(x, y int) int {
	for i, p := range b {
		if p.OnBoard() && int(p.X) == x && int(p.Y) == y {
			return i
		}
	}
	return -1
}

// Diagram draws the board for people: six rows from the viewer's opponent
// side (y = 0, the viewer's exit row) to its own, with the piece letters
// (capitals own, small opponent) and each piece's colour after a slash
// where it is known.
func (b Board) Diagram() string {
	var grid [6][6]string
	for y := range grid {
		for x := range grid[y] {
			grid[y][x] = " . "
		}
	}
	var off []string
	for i, p := range b {
		c := p.Colour
		if c == 'u' {
			c = '?'
		}
		cell := string([]byte{Letter(i), '/', c | 0x20})
		switch {
		case p.OnBoard():
			grid[p.Y][p.X] = cell
		case p.IsCaptured():
			off = append(off, cell+" captured")
		case p.IsEscaped():
			off = append(off, cell+" escaped")
		}
	}
	var sb strings.Builder
	sb.WriteString("    0   1   2   3   4   5\n")
	for y := range grid {
		fmt.Fprintf(&sb, "%d ", y)
		for x := range grid[y] {
			sb.WriteByte(' ')
			sb.WriteString(grid[y][x])
		}
		sb.WriteByte('\n')
	}
	if len(off) > 0 {
		sb.WriteString("  off the board: " + strings.Join(off, ", ") + "\n")
	}
	return sb.String()
}
