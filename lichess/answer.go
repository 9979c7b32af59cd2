package lichess

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/chessprobe"
	"github.com/tbfs/tbfs/format/chesstb"
	"github.com/tbfs/tbfs/render"
)

// Category is lila-tablebase's category of a position for the side to
// move. It takes the syzygy- values only where Syzygy tables alone answer
// (chesstb's DTZ is exact), and never the maybe- values, which lila gives
// only from op1's DTC.
type Category string

// The categories lila-tablebase names, in the order its moves sort by
// (a move whose child is a loss comes first; "unknown" sits just after it,
// as lila's PessimisticUnknown puts it).
const (
	Loss        Category = "loss"
	Unknown     Category = "unknown"
	SyzygyLoss  Category = "syzygy-loss"
	MaybeLoss   Category = "maybe-loss"
	BlessedLoss Category = "blessed-loss"
	Draw        Category = "draw"
	CursedWin   Category = "cursed-win"
	MaybeWin    Category = "maybe-win"
	SyzygyWin   Category = "syzygy-win"
	Win         Category = "win"
)

var categoryOrder = []Category{Loss, Unknown, SyzygyLoss, MaybeLoss, BlessedLoss, Draw, CursedWin, MaybeWin, SyzygyWin, Win}

func (c Category) order() int { return slices.Index(categoryOrder, c) }

// Negate gives the category for the other side.
func (c Category) Negate() Category {
	switch c {
	case Loss:
		return Win
	case SyzygyLoss:
		return SyzygyWin
	case MaybeLoss:
		return MaybeWin
	case BlessedLoss:
		return CursedWin
	case CursedWin:
		return BlessedLoss
	case MaybeWin:
		return MaybeLoss
	case SyzygyWin:
		return SyzygyLoss
	case Win:
		return Loss
	}
	return c // draw, unknown
}

// positive reports a category where the side to move wins or may win.
func (c Category) positive() bool {
	return c == CursedWin || c == MaybeWin || c == SyzygyWin || c == Win
}

// Position is the part of a /standard answer that describes one position,
// for the root and for the position after each move; the keys and their
// order are lila-tablebase's, then ours.
type Position struct {
	Checkmate            bool `json:"checkmate"`
	Stalemate            bool `json:"stalemate"`
	VariantWin           bool `json:"variant_win"`
	VariantLoss          bool `json:"variant_loss"`
	InsufficientMaterial bool `json:"insufficient_material"`
	// DTZ and PreciseDTZ are lila's: DTZ50″ (a cursed win or blessed loss
	// lies past ±100, a checkmated side -1), the Syzygy table's value as it
	// stands where a Syzygy table answers; PreciseDTZ is null where the
	// value may be rounded (see lilaDTZ).
	DTZ        *int `json:"dtz"`
	PreciseDTZ *int `json:"precise_dtz"`
	DTM        *int `json:"dtm"`
	// DTW is antichess's depth to win; always null here.
	DTW *int `json:"dtw"`
	// DTC is lila's depth to conversion from the op1 tables, which we do not
	// have: always null. chesstb's own DTC is DTCPair.
	DTC      *int     `json:"dtc"`
	Category Category `json:"category"`

	// ChesstbDTZ is chesstb's exact DTZ without the cursed band (plies to
	// the next zeroing move, signed, 0 for a checkmated side).
	ChesstbDTZ *int        `json:"chesstb_dtz"`
	DTCPair    *render.DTC `json:"dtc_pair"`
	DTM50      *int        `json:"dtm50"`
	// Formats are the table formats that answered ("chesstb", "syzygy").
	Formats []string `json:"formats"`
}

// Move is one legal move of a /standard answer with the values of the
// position after it, for the side to move there.
type Move struct {
	UCI        string `json:"uci"`
	SAN        string `json:"san"`
	Zeroing    bool   `json:"zeroing"`
	Conversion bool   `json:"conversion"`
	Position

	capture, promotion chess.PieceType
	// rule is the move's rule-true result for the child's side: its class
	// at its own clock, without lila's claimed-draw rule.
	rule Category
}

// Answer is the /standard answer for a position. Error, our addition,
// says why a root has no values of its own (no table for its material,
// castling rights).
type Answer struct {
	FEN string `json:"fen"`
	Position
	Moves []Move `json:"moves"`
	Error string `json:"error,omitempty"`
}

// lilaDTZ is lila's dtz of a probe and whether it is its precise_dtz.
// Where a Syzygy table answers it is the table's DTZ50″ as lila reads it,
// precise by lila's rule (shakmaty-syzygy's MaybeRounded); where that value
// may be rounded but chesstb answers too (and agrees, see
// chessprobe.Agree) with an exact distance, that distance decides whether
// it is precise. From chesstb alone it is chesstb's distance in DTZ50″
// (chessprobe.SyzygyDTZOf), precise but in the cursed band, where
// chesstb's 1-byte tier stores distances halved. A checkmated side has -1,
// as shakmaty-syzygy reports it.
func lilaDTZ(res *chessprobe.Result) (dtz int, precise bool) {
	if res.Checkmate {
		return -1, true
	}
	c := res.Category()
	exact := chessprobe.SyzygyDTZOf(c, res.DTZ)
	exactKnown := res.Formats&chessprobe.Chesstb != 0 && res.HasDTZ && c != chesstb.CursedWin && c != chesstb.BlessedLoss
	if s := res.Syzygy; s != nil && s.HasDTZ {
		if !s.Precise && exactKnown {
			return s.DTZ, exact == s.DTZ
		}
		return s.DTZ, s.Precise
	}
	return exact, exactKnown || c == chesstb.Draw
}

// positionOf fills the lila fields of a position from its probe, clock
// being its half-move clock and before that of the position before it
// (see render.CategoryAt). res is nil when no table answers; lv is its
// lilaValue, ok false where lila finds no table (dtz null); dtm whether
// lila has a DTM for it (see boardDTM).
func positionOf(pos *chess.Position, res *chessprobe.Result, lv lilaValue, ok, dtm bool, clock, before int) Position {
	p := Position{
		Checkmate: pos.IsCheckmate(), Stalemate: pos.IsStalemate(),
		InsufficientMaterial: pos.InsufficientMaterial(), Category: Unknown,
	}
	if res == nil {
		if p.Stalemate || p.InsufficientMaterial {
			p.Category = Draw
		}
		return p
	}
	v, _ := render.FromMoveResult(res, clock, before)
	if v.Category != "" {
		p.Category = Category(v.Category)
	}
	if ok && lv.hasDTZ {
		d := lv.dtz
		p.DTZ = &d
		if lv.precise {
			p.PreciseDTZ = &d
		}
	}
	if res.Formats != chessprobe.Syzygy {
		// chesstb's, or the board's (a mate, stalemate or bare kings).
		p.ChesstbDTZ = v.DTZ
	}
	p.DTCPair, p.DTM50 = v.DTC, v.DTM50
	if dtm {
		p.DTM = v.DTM
	}
	p.Formats = v.Formats
	return p
}

// Prober is what the server needs from the tables; *chessprobe.Prober is
// one.
type Prober interface {
	Probe(ctx context.Context, pos *chess.Position) (chessprobe.Result, error)
	RankMoves(ctx context.Context, pos *chess.Position, opts chesstb.RankOptions) ([]chessprobe.RootMove, error)
}

// probe probes one position, nil when it is outside the tables.
func probe(ctx context.Context, p Prober, pos *chess.Position) (*chessprobe.Result, error) {
	res, err := p.Probe(ctx, pos)
	switch {
	case err == nil:
		return &res, nil
	case render.Answerable(err):
		return nil, err
	}
	return nil, &tableError{err}
}

// tableError marks a failure to read the tables (a server error), as
// opposed to a position outside them.
type tableError struct{ err error }

func (e *tableError) Error() string { return e.err.Error() }
func (e *tableError) Unwrap() error { return e.err }

func isTableError(err error) bool {
	var te *tableError
	return errors.As(err, &te)
}

// Build answers one position as lila-tablebase does: every legal move with
// the values after it, sorted by lila's key, and the root's category the
// negation of the first move's when the root has moves. A root outside the
// tables (castling rights, a material without a table) is still answered
// from its children, which is how a capture or promotion into the tables
// is priced. The error is only a failure to read the tables.
func Build(ctx context.Context, p Prober, pos *chess.Position) (*Answer, error) {
	clock := pos.HalfmoveClock()
	a := &Answer{FEN: pos.FEN(), Moves: []Move{}}
	res, err := probe(ctx, p, pos)
	if res == nil {
		if isTableError(err) {
			return nil, err
		}
		a.Error = err.Error()
	}
	lv, ok, err := lilaValueOf(ctx, p, pos, res)
	if err != nil {
		return nil, err
	}
	dtm, err := boardDTM(ctx, p, pos, res)
	if err != nil {
		return nil, err
	}
	a.Position = positionOf(pos, res, lv, ok, dtm, clock, clock-1)
	moves := pos.LegalMoves(nil)
	// lila meets the moves in shakmaty's order; ties of its sort keep it
	// here.
	shakmatyOrder(pos, moves)
	for _, m := range moves {
		child := pos.Play(m)
		cres, err := probe(ctx, p, &child)
		if isTableError(err) {
			return nil, fmt.Errorf("after %s: %w", m.UCI(), err)
		}
		clv, cok, err := lilaValueOf(ctx, p, &child, cres)
		if err != nil {
			return nil, fmt.Errorf("after %s: %w", m.UCI(), err)
		}
		cdtm, err := boardDTM(ctx, p, &child, cres)
		if err != nil {
			return nil, fmt.Errorf("after %s: %w", m.UCI(), err)
		}
		mv := Move{
			UCI: m.UCI(), SAN: pos.SAN(m), Zeroing: pos.IsZeroing(m),
			Conversion: pos.IsCapture(m) || m.Promotion() != chess.NoPieceType,
			Position:   positionOf(&child, cres, clv, cok, cdtm, child.HalfmoveClock(), clock),
			promotion:  m.Promotion(),
		}
		mv.rule = mv.Category
		if clock >= 100 {
			mv.rule = positionOf(&child, cres, clv, cok, cdtm, child.HalfmoveClock(), 0).Category
		}
		if pos.IsCapture(m) {
			mv.capture = chess.Pawn
			if !m.IsEnPassant() {
				mv.capture = pos.PieceAt(m.To()).Type()
			}
		}
		a.Moves = append(a.Moves, mv)
	}
	slices.SortStableFunc(a.Moves, compareMoves)
	// Where Syzygy alone answers the root, its category is lila's to the
	// letter: the root's own category settles leading syzygy- categories
	// of its moves, then the root takes the best move's, negated. chesstb's
	// exact values need neither step.
	syzygyOnly := res != nil && res.Formats&chessprobe.Chesstb == 0 && res.Syzygy != nil
	if syzygyOnly {
		settleSyzygyMoves(a.Category, a.Moves)
	}
	if len(a.Moves) > 0 && (res == nil || a.Category == Unknown || syzygyOnly) {
		a.Category = a.Moves[0].Category.Negate()
	}
	return a, nil
}

// settleSyzygyMoves is lila-tablebase's inference (tablebases.rs, probe):
// a root that wins (or is cursed) cannot have a best reply that only maybe
// loses, so the leading syzygy-loss moves are losses (blessed losses), and
// likewise for a root that loses.
func settleSyzygyMoves(root Category, moves []Move) {
	for _, r := range []struct{ prev, ambiguous, correct Category }{
		{Win, SyzygyLoss, Loss},
		{CursedWin, SyzygyLoss, BlessedLoss},
		{BlessedLoss, SyzygyWin, CursedWin},
		{Loss, SyzygyWin, Win},
	} {
		if root != r.prev {
			continue
		}
		for i := range moves {
			if moves[i].Category != r.ambiguous {
				break
			}
			moves[i].Category = r.correct
		}
	}
}

// compareMoves is lila-tablebase's move order (MoveInfo::sort_key), best
// for the mover first: the child's category, worst for the child first
// (then, ours, the rule-true result, which differs from the category only
// from a clock of 100 or more, where lila reports every decisive result as
// cursed or blessed, though a capture there still wins);
// a mate; a stalemate or dead position; the tightest mate distance; a
// conversion (first when not losing) and DTC; a zeroing move (likewise)
// and DTZ, the larger first; the bigger capture, then promotion. Ties
// keep the move generator's order.
func compareMoves(a, b Move) int {
	if c := cmp.Compare(a.Category.order(), b.Category.order()); c != 0 {
		return c
	}
	if c := cmp.Compare(a.rule.order(), b.rule.order()); c != 0 {
		return c
	}
	if c := firstTrue(a.Checkmate, b.Checkmate); c != 0 {
		return c
	}
	if c := firstTrue(a.Stalemate, b.Stalemate); c != 0 {
		return c
	}
	if c := firstTrue(a.InsufficientMaterial, b.InsufficientMaterial); c != 0 {
		return c
	}
	if c := tightening(a.DTM, b.DTM); c != 0 {
		return c
	}
	if c := firstTrue(a.Conversion != a.Category.positive(), b.Conversion != b.Category.positive()); c != 0 {
		return c
	}
	if c := tightening(a.DTC, b.DTC); c != 0 {
		return c
	}
	if c := firstTrue(a.Zeroing != a.Category.positive(), b.Zeroing != b.Category.positive()); c != 0 {
		return c
	}
	if c := largerFirst(a.DTZ, b.DTZ); c != 0 {
		return c
	}
	if c := cmp.Compare(b.capture, a.capture); c != 0 {
		return c
	}
	return cmp.Compare(b.promotion, a.promotion)
}

// firstTrue orders true before false.
func firstTrue(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return -1
	}
	return 1
}

// tightening is lila's tightening_metric_sort_key: negative values first,
// the one nearest zero first (the child loses soonest), then zero and
// null, then positive values, the largest first (the child wins latest).
func tightening(a, b *int) int {
	band := func(p *int) int {
		switch {
		case p == nil || *p == 0:
			return 1
		case *p < 0:
			return 0
		}
		return 2
	}
	ba, bb := band(a), band(b)
	if ba != bb || ba == 1 {
		return cmp.Compare(ba, bb)
	}
	return cmp.Compare(*b, *a)
}

// largerFirst orders by value, the larger first, null last.
func largerFirst(a, b *int) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	return cmp.Compare(*b, *a)
}
