package chesstb

import (
	"context"
	"errors"

	"github.com/tbfs/tbfs/chess"
)

// Holds reports whether a kind-k table holds pos's material, opening it
// when needed. Probe answers a position the board settles (a checkmate, a
// stalemate) without reading any table; Holds says whether one is there
// for it all the same. A table that is missing is false, not an error.
func (tb *Tablebase) Holds(ctx context.Context, pos *chess.Position, k Kind) (bool, error) {
	leave, err := tb.enter()
	if err != nil {
		return false, err
	}
	defer leave()
	n := tb.nodeOf(ctx, pos)
	_, err = tb.table(ctx, k, n.mat)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrNoTable):
		return false, nil
	}
	return false, err
}
