package chessprobe

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/format/chesstb"
)

// RootMove is one legal move of the root with what the tables say of it.
type RootMove struct {
	Move chess.Move
	// After is the probe of the position after the move, for the side to
	// move there, at the half-move clock the move leaves.
	After Result
	// Category is the move's result for the mover under the 50-move rule
	// at the root's clock, as the ranking saw it (chesstb.RootMove's
	// Category; Fathom's per-move WDL where Syzygy ranked).
	Category chesstb.Category
	// Distance is the ranking's signed distance in plies, positive when
	// the mover wins: chesstb.RootMove's Distance, or Fathom's per-move
	// DTZ where Syzygy ranked.
	Distance int
	// Best marks the moves ranked first, ties included.
	Best bool
	// RankedBy is the format whose ranking ordered the moves.
	RankedBy Format
}

// RankMoves returns every legal move of pos with the values after it, best
// first, the best marked. chesstb ranks where it holds the material (its
// rule-true DTZ ranking, see chesstb.Tablebase.RankMoves), each move's
// values checked against Syzygy's where Syzygy holds them too; else Syzygy
// ranks, as Fathom's tb_probe_root does at the root's clock (only the DTZ
// ranking with the 50-move rule: Syzygy tables hold no DTM).
func (p *Prober) RankMoves(ctx context.Context, pos *chess.Position, opts chesstb.RankOptions) ([]RootMove, error) {
	var ctbErr error
	if p.ctb != nil {
		moves, err := p.ctb.RankMoves(ctx, pos, opts)
		if err == nil {
			return p.withSyzygy(ctx, pos, moves)
		}
		if p.syz == nil || !unanswered(err) {
			return nil, err
		}
		ctbErr = err
	}
	if p.syz == nil {
		return nil, fmt.Errorf("%w: no tables opened", chesstb.ErrNoTable)
	}
	if opts.Ranker != chesstb.RankDTZ || !opts.Rule50 {
		err := fmt.Errorf("%w: Syzygy tables rank only by DTZ under the 50-move rule", chesstb.ErrUnsupported)
		if ctbErr != nil {
			err = fmt.Errorf("%w; %w", ctbErr, err)
		}
		return nil, err
	}
	moves, err := p.rankSyzygy(ctx, pos)
	if err != nil && ctbErr != nil && (errors.Is(err, chesstb.ErrNoTable) || errors.Is(err, chesstb.ErrBadPosition)) {
		return nil, fmt.Errorf("%w; %v", ctbErr, err)
	}
	return moves, err
}

// withSyzygy converts chesstb's ranking, adding to each move the Syzygy
// values after it, which must agree.
func (p *Prober) withSyzygy(ctx context.Context, pos *chess.Position, moves []chesstb.RootMove) ([]RootMove, error) {
	out := make([]RootMove, len(moves))
	for i := range moves {
		m := &moves[i]
		out[i] = RootMove{Move: m.Move, After: Result{Result: m.After}, Category: m.Category, Distance: m.Distance, Best: m.Best, RankedBy: Chesstb}
		child := pos.Play(m.Move)
		if boardDecided(&child, &m.After) {
			continue
		}
		out[i].After.Formats = Chesstb
		if p.syz == nil {
			continue
		}
		syz, err := p.probeSyzygy(ctx, &child, false)
		switch {
		case errors.Is(err, chesstb.ErrNoTable):
			continue
		case err != nil:
			return nil, fmt.Errorf("after %s: %w", m.Move.UCI(), err)
		}
		if err := out[i].After.merge(&child, syz); err != nil {
			return nil, fmt.Errorf("after %s: %w", m.Move.UCI(), err)
		}
	}
	return out, nil
}

// rankSyzygy ranks the moves of pos by Fathom's tb_probe_root: the best
// class at the clock first; among wins the fewest plies to the next
// zeroing move, among losses the most; ties in move generation order.
// Fathom returns the first of these; the ties are marked best with it.
func (p *Prober) rankSyzygy(ctx context.Context, pos *chess.Position) ([]RootMove, error) {
	root, err := p.syz.Root(ctx, pos)
	if err != nil {
		return nil, syzygyErr(err)
	}
	legal := pos.LegalMoves(nil)
	if len(root) != len(legal) {
		return nil, fmt.Errorf("%w: %s: the Syzygy root probe priced %d moves of %d", ErrCorrupt, pos.FEN(), len(root), len(legal))
	}
	out := make([]RootMove, len(root))
	for i, m := range root {
		child := pos.Play(m.Move)
		after, err := p.Probe(ctx, &child)
		if err != nil {
			return nil, fmt.Errorf("after %s: %w", m.Move.UCI(), err)
		}
		out[i] = RootMove{Move: m.Move, After: after, Category: chesstb.Category(m.WDL), Distance: sign(m.WDL) * m.DTZ, RankedBy: Syzygy}
	}
	less := func(a, b *RootMove) bool {
		if a.Category != b.Category {
			return a.Category > b.Category
		}
		// A win sooner, a loss later: the smaller signed distance.
		return a.Category != 0 && a.Distance < b.Distance
	}
	sort.SliceStable(out, func(i, j int) bool { return less(&out[i], &out[j]) })
	for i := range out {
		out[i].Best = !less(&out[0], &out[i])
	}
	return out, nil
}
