package chessprobe

import (
	"context"
	"fmt"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/format/chesstb"
)

// ChesstbHolds reports whether a chesstb table of kind k holds pos's
// material (chesstb.Tablebase.Holds), false when no chesstb tables are
// opened or they cannot tell.
func (p *Prober) ChesstbHolds(ctx context.Context, pos *chess.Position, k chesstb.Kind) (bool, error) {
	h, ok := p.ctb.(interface {
		Holds(ctx context.Context, pos *chess.Position, k chesstb.Kind) (bool, error)
	})
	if !ok {
		return false, nil
	}
	return h.Holds(ctx, pos, k)
}

// SyzygyAnswer is the Syzygy tables' own answer for pos, read even where
// Probe answers from the board alone (a checkmate, a stalemate): lichess's
// server reads the tables for those too, so whether a table holds the
// material, and whether it stores the mated side's value in moves, shows
// in its answer. The error wraps chesstb.ErrNoTable when no Syzygy table
// holds the material (or no Syzygy tables are opened), and
// chesstb.ErrBadPosition for a position no Syzygy table can hold.
func (p *Prober) SyzygyAnswer(ctx context.Context, pos *chess.Position) (*SyzygyAnswer, error) {
	if p.syz == nil {
		return nil, fmt.Errorf("%w: no Syzygy tables opened", chesstb.ErrNoTable)
	}
	return p.probeSyzygy(ctx, pos, false)
}
