package geister

import (
	"fmt"
	"math/bits"
)

// Observation is a position as the side to move sees it in a real game: its
// own pieces with their colours, the squares of the opponent's pieces, and
// how many of those are red (known from the colours of the captured ones).
type Observation struct {
	OwnBlue, OwnRed, Opp uint64
	// OppRed is the number of red pieces among Opp.
	OppRed int
}

// Validate reports whether the observation could occur: pieces on the
// board and disjoint, and OppRed between 0 and the number of opponent pieces.
func (o Observation) Validate() error {
	own := o.OwnBlue | o.OwnRed
	if (own|o.Opp)&^BoardMask != 0 {
		return fmt.Errorf("%w: pieces off the board (bits %#016x)", ErrInvalidPosition, (own|o.Opp)&^BoardMask)
	}
	if o.OwnBlue&o.OwnRed != 0 || own&o.Opp != 0 {
		return fmt.Errorf("%w: square %s holds two pieces", ErrInvalidPosition,
			Square(bits.TrailingZeros64(o.OwnBlue&o.OwnRed|own&o.Opp)))
	}
	n := bits.OnesCount64(o.Opp)
	if o.OppRed < 0 || o.OppRed > n || o.OppRed > 4 || n-o.OppRed > 4 ||
		bits.OnesCount64(o.OwnBlue) > 4 || bits.OnesCount64(o.OwnRed) > 4 {
		return fmt.Errorf("%w: %d opponent pieces with %d red, %d own blue, %d own red", ErrInvalidPosition,
			n, o.OppRed, bits.OnesCount64(o.OwnBlue), bits.OnesCount64(o.OwnRed))
	}
	return nil
}
