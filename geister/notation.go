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
