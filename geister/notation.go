package geister

import (
	"errors"
	"fmt"
	"math/bits"
	"strings"
)

// ErrNotation is matched by every error about a malformed board string.
var ErrNotation = errors.New("geister: bad board notation")

// String writes p in the readable notation (FORMAT.md §6): six rows of six
// characters separated by '/', row 1 (the side to move's exit row) first,
// columns A..F left to right; 'B'/'R' are the side to move's blue/red
// pieces, 'b'/'r' the opponent's, '.' an empty square.
func (p Position) String() string {
	var sb strings.Builder
	sb.Grow(41)
	for y := 0; y < 6; y++ {
		if y > 0 {
			sb.WriteByte('/')
		}
		for x := 0; x < 6; x++ {
			sb.WriteByte(p.At(SquareAt(x, y)).Letter())
		}
	}
	return sb.String()
}

// ParseBoard parses the readable notation written by Position.String. The
// result is checked with Validate (zero counts are allowed).
func ParseBoard(s string) (Position, error) {
	var p Position
	rows := strings.Split(s, "/")
	if len(rows) != 6 {
		return p, fmt.Errorf("%w: %q has %d rows separated by '/', want 6", ErrNotation, s, len(rows))
	}
	for y, row := range rows {
		if len(row) != 6 {
			return p, fmt.Errorf("%w: row %d %q has %d characters, want 6", ErrNotation, y+1, row, len(row))
		}
		for x := 0; x < 6; x++ {
			b := SquareAt(x, y).Bit()
			switch row[x] {
			case 'B':
				p.OwnBlue |= b
			case 'R':
				p.OwnRed |= b
			case 'b':
				p.OppBlue |= b
			case 'r':
				p.OppRed |= b
			case '.':
			default:
				return Position{}, fmt.Errorf("%w: row %d %q: %q is not one of B R b r .", ErrNotation, y+1, row, row[x])
			}
		}
	}
	if err := p.Validate(); err != nil {
		return Position{}, err
	}
	return p, nil
}

// GAT writes p as the GAT protocol's 48-character board: 16 triples "xyc"
// (x column 0..5, y row 0..5 in the side to move's orientation), eight for
// the side to move and then eight for the opponent. Inside each side come
// the blues, then the reds, each in increasing square order, then the
// captured ones as "99b" and "99r". Own pieces use 'B'/'R'; the opponent's
// colours are written in lower case since the position has perfect
// information (a real server sends 'u'). Each side must have at most four
// pieces of each colour; the missing ones are shown as captured.
func (p Position) GAT() string {
	var sb strings.Builder
	sb.Grow(48)
	side := func(blue, red uint64, bl, rl byte) {
		for _, set := range [2]struct {
			b uint64
			c byte
		}{{blue, bl}, {red, rl}} {
			for b := set.b; b != 0; b &= b - 1 {
				s := Square(bits.TrailingZeros64(b))
				sb.WriteString(s.Coord())
				sb.WriteByte(set.c)
			}
		}
		for i := bits.OnesCount64(blue); i < 4; i++ {
			sb.WriteString("99b")
		}
		for i := bits.OnesCount64(red); i < 4; i++ {
			sb.WriteString("99r")
		}
	}
	side(p.OwnBlue, p.OwnRed, 'B', 'R')
	side(p.OppBlue, p.OppRed, 'b', 'r')
	return sb.String()
}

// gatPiece is one parsed triple of a GAT board.
type gatPiece struct {
	sq      Square // valid when onBoard
	onBoard bool
	escaped bool
	colour  byte // 'b', 'r' or 'u', lower-cased
}

// parseGATTriples splits a 48-character GAT board into its 16 triples.
func parseGATTriples(s string) ([16]gatPiece, error) {
	var out [16]gatPiece
	if len(s) != 48 {
		return out, fmt.Errorf("%w: GAT board %q has %d characters, want 48", ErrNotation, s, len(s))
	}
	for i := range out {
		t := s[3*i : 3*i+3]
		c := t[2] | 0x20 // lower case
		if c != 'b' && c != 'r' && c != 'u' {
			return out, fmt.Errorf("%w: GAT piece %d %q: colour %q is not B, R or U", ErrNotation, i, t, t[2])
		}
		out[i].colour = c
		switch {
		case t[0] == '9' && t[1] == '9':
		case t[0] == '8' && t[1] == '8':
			out[i].escaped = true
		case t[0] >= '0' && t[0] <= '5' && t[1] >= '0' && t[1] <= '5':
			out[i].onBoard = true
			out[i].sq = SquareAt(int(t[0]-'0'), int(t[1]-'0'))
		default:
			return out, fmt.Errorf("%w: GAT piece %d %q: %q is not a square 00..55, 99 (captured) or 88 (escaped)", ErrNotation, i, t, t[:2])
		}
	}
	return out, nil
}

// ParseGAT parses a 48-character GAT board with every colour known (as in
// the oracle files; colour letters are read case-insensitively). Each side
// must list four blue and four red pieces, captured ones as 99. A piece
// that escaped (88) ends the game and is not a position; an unknown colour
// 'u' needs ParseGATObservation.
func ParseGAT(s string) (Position, error) {
	ps, err := parseGATTriples(s)
	if err != nil {
		return Position{}, err
	}
	var p Position
	for i, g := range ps {
		switch {
		case g.escaped:
			return Position{}, fmt.Errorf("%w: GAT piece %d has escaped (88); the game is over", ErrNotation, i)
		case g.colour == 'u':
			return Position{}, fmt.Errorf("%w: GAT piece %d has an unknown colour; read it as an observation", ErrNotation, i)
		}
		if !g.onBoard {
			continue
		}
		b := g.sq.Bit()
		if (p.OwnBlue|p.OwnRed|p.OppBlue|p.OppRed)&b != 0 {
			return Position{}, fmt.Errorf("%w: GAT square %s holds two pieces", ErrInvalidPosition, g.sq)
		}
		switch own := i < 8; {
		case own && g.colour == 'b':
			p.OwnBlue |= b
		case own:
			p.OwnRed |= b
		case g.colour == 'b':
			p.OppBlue |= b
		default:
			p.OppRed |= b
		}
	}
	for side := 0; side < 2; side++ {
		blues := 0
		for _, g := range ps[8*side : 8*side+8] {
			if g.colour == 'b' {
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

// ParseGATObservation parses a GAT board as the side to move sees it:
// opponent pieces on the board may be 'u' (unknown) and their number of reds
// is four minus the captured reds ("99r"). Own pieces must have known
// colours. Escaped pieces (88) are rejected: the game is over.
func ParseGATObservation(s string) (Observation, error) {
	ps, err := parseGATTriples(s)
	if err != nil {
		return Observation{}, err
	}
	var o Observation
	capturedBlue, capturedRed := 0, 0
	for i, g := range ps {
		if g.escaped {
			return Observation{}, fmt.Errorf("%w: GAT piece %d has escaped (88); the game is over", ErrNotation, i)
		}
		if i < 8 && g.colour == 'u' {
			return Observation{}, fmt.Errorf("%w: GAT piece %d is one's own and has no colour", ErrNotation, i)
		}
		if !g.onBoard {
			if i >= 8 {
				switch g.colour {
				case 'b':
					capturedBlue++
				case 'r':
					capturedRed++
				default:
					return Observation{}, fmt.Errorf("%w: captured opponent piece %d has no colour", ErrNotation, i)
				}
			}
			continue
		}
		b := g.sq.Bit()
		if (o.OwnBlue|o.OwnRed|o.Opp)&b != 0 {
			return Observation{}, fmt.Errorf("%w: GAT square %s holds two pieces", ErrInvalidPosition, g.sq)
		}
		switch {
		case i >= 8:
			o.Opp |= b
		case g.colour == 'b':
			o.OwnBlue |= b
		default:
			o.OwnRed |= b
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

// Parse reads a board in either notation: a 48-character GAT board (all
// colours known) or the readable six-row form. Surrounding spaces are
// ignored.
func Parse(s string) (Position, error) {
	s = strings.TrimSpace(s)
	if len(s) == 48 && !strings.Contains(s, "/") {
		return ParseGAT(s)
	}
	return ParseBoard(s)
}
