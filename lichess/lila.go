package lichess

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/chessprobe"
	"github.com/tbfs/tbfs/format/chesstb"
	"github.com/tbfs/tbfs/render"
)

// BoardProber is a Prober that also tells which tables hold a position
// the board settles (checkmate, stalemate), which Probe answers from the
// rules alone. lila-tablebase reads the tables there too, so where only
// Syzygy tables hold the material its dtz is the table's (a mated side's
// precise_dtz null when the table stores that value in moves), where none
// does its dtz is null, and without DTM tables its dtm is null.
// *chessprobe.Prober is one; with a Prober that is not, such positions
// take the rules' values (a mated side's dtz -1, a stalemate's 0, both
// precise, and the prober's DTM).
type BoardProber interface {
	Prober
	// ChesstbHolds reports whether a chesstb table of the kind holds the
	// position's material.
	ChesstbHolds(ctx context.Context, pos *chess.Position, k chesstb.Kind) (bool, error)
	// SyzygyAnswer is the Syzygy tables' answer for the position, an
	// error wrapping chesstb.ErrNoTable where none holds it.
	SyzygyAnswer(ctx context.Context, pos *chess.Position) (*chessprobe.SyzygyAnswer, error)
}

// lilaValue is what lila-tablebase's probe_dtz (shakmaty-syzygy) gives a
// position: its WDL class for the side to move, blind to the clock, and its
// DTZ50″, precise or maybe rounded. hasDTZ is false where the WDL is known
// but no DTZ table answers.
type lilaValue struct {
	wdl             int
	dtz             int
	precise, hasDTZ bool
}

// lilaValueOf gives pos's lilaValue from its probe res (nil when no table
// holds pos). ok is false where lila would find no table (its dtz null;
// for a mainline, a 404). A position the board settles takes, where no
// chesstb table holds its material, the Syzygy tables' own answer, as
// lila's; where one does, the rules' exact one (a mated side -1, a
// stalemate 0). The error is only a failure to read the tables.
func lilaValueOf(ctx context.Context, p Prober, pos *chess.Position, res *chessprobe.Result) (v lilaValue, ok bool, err error) {
	if res == nil {
		return v, false, nil
	}
	if bp, is := p.(BoardProber); is && boardSettled(res) {
		held, err := bp.ChesstbHolds(ctx, pos, chesstb.KindWDL)
		if err != nil {
			return v, false, &tableError{err}
		}
		if held {
			v = lilaValue{wdl: res.WDL, precise: true, hasDTZ: true}
			if res.Checkmate {
				v.dtz = -1
			}
			return v, true, nil
		}
		s, err := bp.SyzygyAnswer(ctx, pos)
		switch {
		case err != nil && render.Answerable(err):
			return v, false, nil
		case err != nil:
			return v, false, &tableError{err}
		}
		return lilaValue{wdl: s.WDL, dtz: s.DTZ, precise: s.Precise, hasDTZ: s.HasDTZ}, true, nil
	}
	v.wdl = res.WDL
	if res.HasDTZ || (res.Syzygy != nil && res.Syzygy.HasDTZ) {
		v.dtz, v.precise = lilaDTZ(res)
		v.hasDTZ = true
	}
	return v, true, nil
}

// boardDTM reports whether lila would have a DTM for the position res
// describes: not for a mated side (its DTM tables report a mate as 0,
// which lila reserves for a draw), and for another position the board
// settles (a stalemate, bare kings) only where a DTM table holds its
// material.
func boardDTM(ctx context.Context, p Prober, pos *chess.Position, res *chessprobe.Result) (bool, error) {
	switch bp, is := p.(BoardProber); {
	case res == nil:
		return false, nil
	case res.Checkmate:
		return false, nil
	case is && res.Formats == 0:
		held, err := bp.ChesstbHolds(ctx, pos, chesstb.KindDTM)
		if err != nil {
			return false, &tableError{err}
		}
		return held, nil
	}
	return true, nil
}

// boardSettled reports a checkmate or stalemate that Probe answered from
// the rules alone.
func boardSettled(res *chessprobe.Result) bool {
	return res.Formats == 0 && (res.Checkmate || res.Stalemate)
}

// lilaProbe probes pos and gives its lilaValue; ok is false where no
// table holds it, why then saying so.
func lilaProbe(ctx context.Context, p Prober, pos *chess.Position) (v lilaValue, ok bool, why, err error) {
	res, err := probe(ctx, p, pos)
	if res == nil {
		if isTableError(err) {
			return v, false, nil, err
		}
		return v, false, err, nil
	}
	v, ok, err = lilaValueOf(ctx, p, pos, res)
	if !ok && err == nil {
		why = fmt.Errorf("no Syzygy table holds %s", pos.MaterialKey())
	}
	return v, ok, why, err
}

// shakmatyOrder sorts moves (the legal moves of pos) into the order
// shakmaty generates them, which is the order lila-tablebase meets them
// in: an en-passant capture first; in check the king's moves next; then
// pawn captures towards the a-file, then towards the h-file (each plain
// before promoting, by target square, promotions queen, rook, bishop,
// knight), single pushes likewise, double pushes; knights, bishops, rooks
// and queens by origin then target; the king by target; castling king's
// side first. A square's order is a1, b1, ..., h8.
func shakmatyOrder(pos *chess.Position, moves []chess.Move) {
	inCheck := pos.InCheck()
	type key struct{ group, promoted, a, b, promo int }
	promoRank := map[chess.PieceType]int{chess.Queen: 0, chess.Rook: 1, chess.Bishop: 2, chess.Knight: 3}
	keyOf := func(m chess.Move) key {
		from, to := int(m.From()), int(m.To())
		promoted, promo := 0, 0
		if m.Promotion() != chess.NoPieceType {
			promoted, promo = 1, promoRank[m.Promotion()]
		}
		switch pt := pos.PieceAt(m.From()).Type(); {
		case m.IsEnPassant():
			return key{group: 0, a: from}
		case m.IsCastle():
			side := 0
			if m.To().File() < m.From().File() {
				side = 1
			}
			return key{group: 12, a: side}
		case pt == chess.King && inCheck:
			return key{group: 1, a: to}
		case pt == chess.King:
			return key{group: 11, a: to}
		case pt == chess.Pawn && pos.IsCapture(m) && m.To().File() < m.From().File():
			return key{group: 2, promoted: promoted, a: to, promo: promo}
		case pt == chess.Pawn && pos.IsCapture(m):
			return key{group: 3, promoted: promoted, a: to, promo: promo}
		case pt == chess.Pawn && abs(to-from) == 16:
			return key{group: 5, a: to}
		case pt == chess.Pawn:
			return key{group: 4, promoted: promoted, a: to, promo: promo}
		default: // knight 6, bishop 7, rook 8, queen 9
			return key{group: 4 + int(pt), a: from, b: to}
		}
	}
	slices.SortStableFunc(moves, func(x, y chess.Move) int {
		kx, ky := keyOf(x), keyOf(y)
		return cmp.Or(cmp.Compare(kx.group, ky.group), cmp.Compare(kx.promoted, ky.promoted),
			cmp.Compare(kx.a, ky.a), cmp.Compare(kx.b, ky.b), cmp.Compare(kx.promo, ky.promo))
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
