package chessprobe

import (
	"context"
	"errors"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/format/chesstb"
	"github.com/tbfs/tbfs/format/syzygy"
)

// SyzygyTables is what the Prober needs from Syzygy tables (OpenSyzygy
// adapts format/syzygy's reader to it).
type SyzygyTables interface {
	// WDL is the tables' class for the side to move, -2..2, blind to the
	// clock (python-chess's probe_wdl).
	WDL(ctx context.Context, pos *chess.Position) (int, error)
	// DTZ is the DTZ50″ in plies, signed (python-chess's probe_dtz), and
	// whether it is precise: false where it may be one ply short of the
	// truth (SyzygyAnswer.Precise).
	DTZ(ctx context.Context, pos *chess.Position) (dtz int, precise bool, err error)
	// Root is Fathom's tb_probe_root at the position's clock: every legal
	// move with its values, in move generation order.
	Root(ctx context.Context, pos *chess.Position) ([]SyzygyMove, error)
}

// SyzygyMove is one root move as Fathom's tb_probe_root prices it, from
// the mover's side: WDL is the class at the root's half-move clock (-2..2),
// DTZ the unsigned plies to the next zeroing move counting the move itself
// (1 for a zeroing or mating move into a win or loss, 101 into a cursed
// one, 0 for a draw).
type SyzygyMove struct {
	Move     chess.Move
	WDL, DTZ int
}

// syzygyClass maps the errors of the Syzygy reader onto chesstb's, which
// the front ends classify (render.Answerable), keeping the reader's error
// in the chain.
type syzygyClass struct {
	err, class error
}

func (e *syzygyClass) Error() string        { return e.err.Error() }
func (e *syzygyClass) Unwrap() error        { return e.err }
func (e *syzygyClass) Is(target error) bool { return target == e.class }

// Syzygy reader errors, classified by syzygyErr.
var (
	errSyzygyNoTable     = syzygy.ErrNoTable
	errSyzygyBadPosition = syzygy.ErrBadPosition
	errSyzygyCorrupt     = syzygy.ErrCorrupt
	errSyzygyClosed      = syzygy.ErrClosed
)

// syzygyErr classifies a Syzygy reader error.
func syzygyErr(err error) error {
	for _, c := range []struct{ syz, ctb error }{
		{errSyzygyNoTable, chesstb.ErrNoTable},
		{errSyzygyBadPosition, chesstb.ErrBadPosition},
		{errSyzygyCorrupt, chesstb.ErrCorrupt},
		{errSyzygyClosed, chesstb.ErrClosed},
	} {
		if errors.Is(err, c.syz) && !errors.Is(err, c.ctb) {
			return &syzygyClass{err: err, class: c.ctb}
		}
	}
	return err
}

// SyzygyReader adapts format/syzygy's reader to SyzygyTables.
type SyzygyReader struct{ TB *syzygy.Tablebase }

var _ SyzygyTables = SyzygyReader{}

// WDL is the reader's WDL.
func (r SyzygyReader) WDL(ctx context.Context, pos *chess.Position) (int, error) {
	return r.TB.WDL(ctx, pos)
}

// DTZ is the reader's DTZ with its rounding flag (DTZWithRounding): a
// value is precise unless the table stores it in moves or it comes from a
// child's value that may be rounded.
func (r SyzygyReader) DTZ(ctx context.Context, pos *chess.Position) (int, bool, error) {
	d, rounded, err := r.TB.DTZWithRounding(ctx, pos)
	return d, !rounded, err
}

// Root is the reader's Root, its moves in Fathom's order.
func (r SyzygyReader) Root(ctx context.Context, pos *chess.Position) ([]SyzygyMove, error) {
	root, err := r.TB.Root(ctx, pos)
	if err != nil {
		return nil, err
	}
	out := make([]SyzygyMove, len(root.Moves))
	for i, m := range root.Moves {
		out[i] = SyzygyMove{Move: m.Move, WDL: m.WDL, DTZ: m.DTZ}
	}
	return out, nil
}
