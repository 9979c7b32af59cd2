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
	Captured = geister.GATCaptured // a captured piece is written "99"
	Escaped  = geister.GATEscaped  // an escaped piece is written "88"
)

// Piece is one triple of a board: where a piece stands and what the viewer
// knows of its colour (geister.GATPiece: X and Y are the square 0..5, or
// both Captured, or both Escaped; Colour is 'B' or 'R' for an own piece
// whose colour only its owner knows, 'b' or 'r' for a colour both players
// know, 'u' for an opponent piece of unknown colour).
type Piece = geister.GATPiece

// Board is a GAT board as one player sees it: indexes 0..7 are the viewer's
// pieces A..H, 8..15 the opponent's a..h. A piece keeps its letter for the
// whole game.
type Board geister.GATBoard

// BoardLen is the length of a board string.
const BoardLen = 48

// ParseBoard reads a 48-character board string as a server sends it
// (geister.GATWire): each triple is two digits and a colour letter (B, R,
// b, r or u); the square must be on the board (x and y 0..5), captured
// (99) or escaped (88). Own pieces and pieces off the board must have a
// colour (a capture reveals it); two pieces on one square are refused.
// Errors match ErrSyntax and the geister package's error.
func ParseBoard(s string) (Board, error) {
	b, err := geister.ParseGATBoard(s, geister.GATWire)
	if err != nil {
		return Board{}, fmt.Errorf("%w board: %w", ErrSyntax, err)
	}
	return Board(b), nil
}

// String writes the board as its 48-character wire form.
func (b Board) String() string { return geister.GATBoard(b).String() }

// Letter names piece i of a board: 'A'..'H' for the viewer's own pieces
// (0..7), 'a'..'h' for the opponent's (8..15).
func Letter(i int) byte { return geister.GATLetter(i) }

// Observation returns what the viewer knows, in package geister's terms
// (geister.GATBoard.Observation): its own pieces by colour, the opponent's
// pieces on the board and how many of them are red (four minus the
// captured reds). Escaped pieces are refused: the game is over.
func (b Board) Observation() (geister.Observation, error) {
	return geister.GATBoard(b).Observation()
}

// Position returns the board as a perfect-information position from the
// viewer's side (geister.GATBoard.Position). Every colour must be known
// (an end-of-game board, or one from Game.View with reveal set) and no
// piece may have escaped.
func (b Board) Position() (geister.Position, error) {
	return geister.GATBoard(b).Position()
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
