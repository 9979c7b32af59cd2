package gat

import (
	"errors"
	"fmt"

	"github.com/tbfs/tbfs/geister"
)

// ErrIllegal is matched by the error of a move the rules forbid.
var ErrIllegal = errors.New("gat: illegal move")

// DefaultMaxPlies is the GAT draw rule: the game is drawn when this many
// moves have been made without a result.
const DefaultMaxPlies = 300

// Draw is the winner of a drawn game.
const Draw = -1

// Game is one match as the server keeps it: each player's eight pieces in
// that player's own coordinates, with their true colours. Player 0 moves
// first. The zero Game is not usable; see NewGame and ParseSetup.
type Game struct {
	pieces [2][8]Piece // Colour is 'B' or 'R', the truth
	// Ply counts the moves made.
	Ply int
	// MaxPlies is the move count that draws the game (DefaultMaxPlies
	// when 0).
	MaxPlies int

	over   bool
	winner int
	reason string
}

// NewGame returns the standard start: each player's pieces A..D on row 4
// at columns 1..4 and E..H on row 5, in its own view, with the named
// pieces (indexes 0..7) red and the others blue.
func NewGame(red0, red1 [4]int) *Game {
	g := &Game{}
	for side, red := range [2][4]int{red0, red1} {
		for i := range g.pieces[side] {
			g.pieces[side][i] = Piece{X: int8(i%4 + 1), Y: int8(i/4 + 4), Colour: 'B'}
		}
		for _, i := range red {
			g.pieces[side][i&7].Colour = 'R'
		}
	}
	return g
}

// ParseSetup reads a custom start position: a 48-character board from the
// first player's view with every colour known, the first player's pieces
// A..H (B/R, or 99 with the colour for a piece that starts captured) then
// the second player's a..h (b/r, squares in the first player's view, or
// 99). Each side must list four blues and four reds and keep at least one
// of each on the board; escaped pieces (88) are refused.
func ParseSetup(s string) (*Game, error) {
	b, err := ParseBoard(s)
	if err != nil {
		return nil, err
	}
	g := &Game{}
	for i, p := range b {
		side, idx := i/8, i%8
		if p.Colour == 'u' {
			return nil, fmt.Errorf("%w setup: piece %c has no colour", ErrSyntax, Letter(i))
		}
		if p.IsEscaped() {
			return nil, fmt.Errorf("%w setup: piece %c has escaped", ErrSyntax, Letter(i))
		}
		q := Piece{X: p.X, Y: p.Y, Colour: p.Colour &^ 0x20}
		if side == 1 && q.OnBoard() {
			q.X, q.Y = 5-q.X, 5-q.Y
		}
		g.pieces[side][idx] = q
	}
	for side := range g.pieces {
		var blue, red, blueOn, redOn int
		for _, p := range g.pieces[side] {
			if p.Colour == 'B' {
				blue++
				if p.OnBoard() {
					blueOn++
				}
			} else {
				red++
				if p.OnBoard() {
					redOn++
				}
			}
		}
		if blue != 4 || red != 4 {
			return nil, fmt.Errorf("%w setup: player %d lists %d blue and %d red pieces, want 4 and 4", ErrSyntax, side+1, blue, red)
		}
		if blueOn == 0 || redOn == 0 {
			return nil, fmt.Errorf("%w setup: player %d has %d blue and %d red pieces on the board; the game would be over", ErrSyntax, side+1, blueOn, redOn)
		}
	}
	return g, nil
}

// Turn returns the player to move (0 or 1).
func (g *Game) Turn() int { return g.Ply % 2 }

// Over reports whether the game has ended, the winner (0, 1 or Draw) and
// why.
func (g *Game) Over() (over bool, winner int, reason string) {
	return g.over, g.winner, g.reason
}

// Forfeit ends the game with player loser losing, for a reason outside the
// board (an illegal or malformed command, a time-out, a disconnect).
func (g *Game) Forfeit(loser int, reason string) {
	if g.over {
		return
	}
	g.over, g.winner, g.reason = true, 1-loser, reason
}

// View returns the board as player sees it: its own pieces with their
// colours in upper case (lower case once captured or escaped), the
// opponent's turned into the player's coordinates with 'u' for an unknown
// colour. With reveal every colour is shown, as in the end-of-game
// messages.
func (g *Game) View(player int, reveal bool) Board {
	var b Board
	for i, p := range g.pieces[player] {
		if !p.OnBoard() {
			p.Colour |= 0x20
		}
		b[i] = p
	}
	for i, p := range g.pieces[1-player] {
		switch {
		case !p.OnBoard():
			p.Colour |= 0x20
		case reveal:
			p.X, p.Y, p.Colour = 5-p.X, 5-p.Y, p.Colour|0x20
		default:
			p.X, p.Y, p.Colour = 5-p.X, 5-p.Y, 'u'
		}
		b[8+i] = p
	}
	return b
}

// Position returns the game from player's side with every colour known.
func (g *Game) Position(player int) geister.Position {
	p, _ := g.View(player, true).Position() // the server's boards are valid by construction
	return p
}

// at returns the side and index of the piece on (x, y) in player's view,
// or side -1.
func (g *Game) at(player, x, y int) (side, idx int) {
	for i, p := range g.pieces[player] {
		if p.OnBoard() && int(p.X) == x && int(p.Y) == y {
			return player, i
		}
	}
	for i, p := range g.pieces[1-player] {
		if p.OnBoard() && int(5-p.X) == x && int(5-p.Y) == y {
			return 1 - player, i
		}
	}
	return -1, 0
}

// Move makes player's move of its piece (0..7) in direction d and returns
// the colour it captured ('R', 'B' or 0). A blue piece on (0,0) moving
// west or north, or on (5,0) moving east or north, escapes. After the move
// the game may be over (see Over): an escape or the capture of the
// opponent's last blue wins, the capture of its last red loses, and the
// MaxPlies-th move without a result draws. An illegal move changes nothing
// and gives an error matching ErrIllegal.
func (g *Game) Move(player, piece int, d geister.Dir) (taken byte, err error) {
	if g.over {
		return 0, fmt.Errorf("%w: the game is over", ErrIllegal)
	}
	if player != g.Turn() {
		return 0, fmt.Errorf("%w: player %d moved out of turn", ErrIllegal, player+1)
	}
	if piece < 0 || piece > 7 {
		return 0, fmt.Errorf("%w: no piece %d", ErrIllegal, piece)
	}
	p := &g.pieces[player][piece]
	name := fmt.Sprintf("%c,%s", 'A'+piece, d.Name())
	if !p.OnBoard() {
		return 0, fmt.Errorf("%w %s: piece %c is not on the board", ErrIllegal, name, 'A'+piece)
	}
	x, y := int(p.X), int(p.Y)
	switch d {
	case geister.North:
		y--
	case geister.East:
		x++
	case geister.South:
		y++
	case geister.West:
		x--
	default:
		return 0, fmt.Errorf("%w: no direction %d", ErrIllegal, d)
	}
	if x < 0 || x > 5 || y < 0 || y > 5 {
		exit := p.Y == 0 && (p.X == 0 && (d == geister.West || d == geister.North) || p.X == 5 && (d == geister.East || d == geister.North))
		if !exit {
			return 0, fmt.Errorf("%w %s: piece %c at %d%d would leave the board", ErrIllegal, name, 'A'+piece, p.X, p.Y)
		}
		if p.Colour != 'B' {
			return 0, fmt.Errorf("%w %s: piece %c at %d%d is red and cannot escape", ErrIllegal, name, 'A'+piece, p.X, p.Y)
		}
		p.X, p.Y = Escaped, Escaped
		g.Ply++
		g.over, g.winner, g.reason = true, player, fmt.Sprintf("piece %c of player %d escaped", 'A'+piece, player+1)
		return 0, nil
	}
	side, idx := g.at(player, x, y)
	if side == player {
		return 0, fmt.Errorf("%w %s: square %d%d holds own piece %c", ErrIllegal, name, x, y, 'A'+idx)
	}
	if side >= 0 {
		q := &g.pieces[side][idx]
		q.X, q.Y = Captured, Captured
		taken = q.Colour
	}
	p.X, p.Y = int8(x), int8(y)
	g.Ply++
	g.judge(player)
	return taken, nil
}

// judge ends the game after player's move when the pieces decide it or the
// move limit is reached.
func (g *Game) judge(player int) {
	var blue, red int
	for _, q := range g.pieces[1-player] {
		if q.OnBoard() {
			if q.Colour == 'B' {
				blue++
			} else {
				red++
			}
		}
	}
	max := g.MaxPlies
	if max <= 0 {
		max = DefaultMaxPlies
	}
	switch {
	case blue == 0:
		g.over, g.winner, g.reason = true, player, fmt.Sprintf("player %d captured the last blue piece of player %d", player+1, 2-player)
	case red == 0:
		g.over, g.winner, g.reason = true, 1-player, fmt.Sprintf("player %d captured the last red piece of player %d", player+1, 2-player)
	case g.Ply >= max:
		g.over, g.winner, g.reason = true, Draw, fmt.Sprintf("%d moves without a result", max)
	}
}
