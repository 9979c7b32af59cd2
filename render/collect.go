package render

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/chessprobe"
	"github.com/tbfs/tbfs/format/chesstb"
	"github.com/tbfs/tbfs/source"
)

// Prober is what Collect needs from the tables; *chessprobe.Prober (chesstb
// and Syzygy tables, either or both) is one. RankMoves is there so the move lists of every front end take their order
// and their best marks from the prober's root ranking, the one checked
// against the reference prober, rather than from a sort of their own.
type Prober interface {
	Probe(ctx context.Context, pos *chess.Position) (chessprobe.Result, error)
	RankMoves(ctx context.Context, pos *chess.Position, opts chesstb.RankOptions) ([]chessprobe.RootMove, error)
}

// MoveRanking is the ranking Collect orders and marks moves by, and so the
// one tbprobe --children and the tbfs moves/ files use: the DTZ ranker
// (Fathom's DTZ root probe, priced on DTC's line where the material
// carries DTC) with the 50-move rule at the position's own half-move
// clock, so the first move reaches the best rule-true result (the child's
// class at the clock the move leaves) and a win the clock still allows is
// never traded for one it draws. A FEN says nothing of earlier positions,
// so the root is taken as not repeated.
var MoveRanking = chesstb.RankOptions{Ranker: chesstb.RankDTZ, Rule50: true}

// Collect probes pos and, with children, the position after every legal
// move, and returns the report both front ends render.
//
// The moves come from the prober's RankMoves with MoveRanking: its order
// (best first), its best marks, and each move's post-move probe, so no
// child is probed twice. Where the ranking cannot be made because some
// move has no answer in the tables (a missing material, say), every move
// is still listed with what the tables say of it, in UCI order and with
// none marked best, and Report.MovesUnranked says why: a best chosen over
// part of the moves could be wrong.
//
// Answers the tables cannot give are part of the report, not errors: a
// material with no table, a position outside the tables' domain (castling
// rights) or a value that cannot be derived becomes Report.Error, and a
// missing metric is listed in Unavailable. Collect fails only when a
// failure could hide a value the tables hold: a transport failure, a
// corrupt table, a cancelled context. Then no report is returned, so a
// caller can never print a partial answer as if it were whole.
func Collect(ctx context.Context, p Prober, pos *chess.Position, children bool) (*Report, error) {
	res, err := p.Probe(ctx, pos)
	rep, err := rootReport(pos, &res, err)
	if err != nil || !children {
		return rep, err
	}
	rep.Moves = []Move{}
	ranked, err := p.RankMoves(ctx, pos, MoveRanking)
	switch {
	case err == nil:
		for i := range ranked {
			rm := &ranked[i]
			mv := Move{UCI: rm.Move.UCI(), SAN: pos.SAN(rm.Move), Best: rm.Best}
			child := pos.Play(rm.Move)
			mv.Values, _ = FromMoveResult(&rm.After, child.HalfmoveClock(), pos.HalfmoveClock())
			rep.Moves = append(rep.Moves, mv)
		}
		return rep, nil
	case !Answerable(err):
		return nil, err
	}
	rep.MovesUnranked = err.Error()
	if err := unranked(ctx, p, pos, rep); err != nil {
		return nil, err
	}
	return rep, nil
}

// rootReport is the report of pos from its probe, or the probe's error
// when it is not a fact about the position (Answerable).
func rootReport(pos *chess.Position, res *chessprobe.Result, err error) (*Report, error) {
	rep := &Report{FEN: pos.FEN(), Material: res.Material}
	switch {
	case err == nil:
		rep.Values, rep.Unavailable = FromResult(res, pos.HalfmoveClock())
	case !Answerable(err):
		return nil, err
	default:
		rep.Error = describe(res.Material, err)
		rep.Checkmate, rep.Stalemate = res.Checkmate, res.Stalemate
	}
	return rep, nil
}

// WDLProber is a Prober that can read the WDL class alone;
// *chessprobe.Prober is one.
type WDLProber interface {
	ProbeWDL(ctx context.Context, pos *chess.Position) (chessprobe.Result, error)
}

// CollectWDL is Collect without children for a caller that shows the WDL
// class alone (the mount's wdl/ files). Where p is a WDLProber it reads
// only WDL tables, so a distance table that is missing or fails to read
// does not fail it; the report then holds the class, checkmate,
// stalemate and the formats, and Unavailable at most the class's reason.
// Otherwise it is Collect.
func CollectWDL(ctx context.Context, p Prober, pos *chess.Position) (*Report, error) {
	wp, ok := p.(WDLProber)
	if !ok {
		return Collect(ctx, p, pos, false)
	}
	res, err := wp.ProbeWDL(ctx, pos)
	if err != nil && !Answerable(err) {
		return nil, err
	}
	// Built here rather than by rootReport: FromResult would fill and
	// explain every metric the probe left out.
	rep := &Report{FEN: pos.FEN(), Material: res.Material}
	rep.Checkmate, rep.Stalemate = res.Checkmate, res.Stalemate
	switch {
	case err != nil:
		rep.Error = describe(res.Material, err)
	case res.HasWDL:
		rep.WDL = intPtr(res.WDL)
		rep.Formats = res.Formats.Names()
	default:
		rep.Unavailable = map[Metric]string{MetricWDL: reason(&res, chesstb.MetricWDL)}
	}
	return rep, nil
}

// unranked lists every move of pos with its own probe, in UCI order, for a
// position whose moves cannot all be ranked.
func unranked(ctx context.Context, p Prober, pos *chess.Position, rep *Report) error {
	for _, m := range pos.LegalMoves(nil) {
		child := pos.Play(m)
		mv := Move{UCI: m.UCI(), SAN: pos.SAN(m)}
		cres, err := p.Probe(ctx, &child)
		switch {
		case err == nil:
			mv.Values, _ = FromMoveResult(&cres, child.HalfmoveClock(), pos.HalfmoveClock())
		case Answerable(err):
			mv.Error = describe(cres.Material, err)
			mv.Checkmate, mv.Stalemate = cres.Checkmate, cres.Stalemate
		default:
			return fmt.Errorf("after %s: %w", m.UCI(), err)
		}
		rep.Moves = append(rep.Moves, mv)
	}
	sort.Slice(rep.Moves, func(i, j int) bool { return rep.Moves[i].UCI < rep.Moves[j].UCI })
	return nil
}

// Answerable reports whether a probe error is a fact about the position
// (no table, outside the domain, not derivable) rather than a failure to
// read the tables that hold it (transport, corrupt data, cancelled).
func Answerable(err error) bool {
	if errors.Is(err, source.ErrTransient) || errors.Is(err, source.ErrPermanent) ||
		errors.Is(err, source.ErrClosed) || errors.Is(err, chesstb.ErrCorrupt) ||
		errors.Is(err, chesstb.ErrClosed) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	return errors.Is(err, chesstb.ErrNoTable) || errors.Is(err, chesstb.ErrBadPosition) ||
		errors.Is(err, chesstb.ErrUnsupported) || errors.Is(err, chesstb.ErrUnresolved)
}

// describe says in one line why a position has no answer.
func describe(material string, err error) string {
	if errors.Is(err, chesstb.ErrNoTable) && material != "" {
		return fmt.Sprintf("no table for %s (%v)", material, err)
	}
	return err.Error()
}

// FromResult converts the probe result of a position whose half-move
// clock is clock into the rendered values and the reasons for the metrics
// it lacks. The category is lichess's, clock-aware (see CategoryAt); the
// WDL stays the tables' clock-blind class.
func FromResult(res *chessprobe.Result, clock int) (Values, map[Metric]string) {
	return fromResult(res, clock, clock-1)
}

// FromMoveResult is FromResult for the position after a move: clock is
// that position's half-move clock, before the clock of the position the
// move was played from, which lichess's category also reads (a 50-move
// draw that could be claimed before the move).
func FromMoveResult(res *chessprobe.Result, clock, before int) (Values, map[Metric]string) {
	return fromResult(res, clock, before)
}

func fromResult(res *chessprobe.Result, clock, before int) (Values, map[Metric]string) {
	var v Values
	v.Checkmate, v.Stalemate = res.Checkmate, res.Stalemate
	v.Formats = res.Formats.Names()
	if s := res.Syzygy; s != nil && s.HasDTZ {
		v.SyzygyDTZ = intPtr(s.DTZ)
		if s.Precise {
			v.PreciseDTZ = intPtr(s.DTZ)
		}
	}
	un := map[Metric]string{}
	if res.HasWDL {
		v.WDL = intPtr(res.WDL)
		v.Category = CategoryAt(res, clock, before)
	} else {
		un[MetricWDL] = reason(res, chesstb.MetricWDL)
	}
	switch {
	case res.HasDTZ:
		v.DTZ = intPtr(res.DTZ)
	case v.SyzygyDTZ != nil:
		// Only Syzygy holds it, and not as an exact plain distance: the
		// DTZ is the table's DTZ50'' as it stands (SyzygyDTZ says so).
		v.DTZ = intPtr(*v.SyzygyDTZ)
	default:
		un[MetricDTZ] = reason(res, chesstb.MetricDTZ)
	}
	if res.HasDTM {
		v.DTM = intPtr(res.DTM)
	} else {
		un[MetricDTM] = reason(res, chesstb.MetricDTM)
	}
	if res.HasDTC {
		v.DTC = &DTC{Pushes: res.DTC.Pushes, Plies: res.DTC.Plies}
	} else {
		un[MetricDTC] = reason(res, chesstb.MetricDTC)
	}
	if res.HasDTM50 {
		v.DTM50 = intPtr(res.DTM50)
	} else {
		un[MetricDTM50] = reason(res, chesstb.MetricDTM50)
	}
	return v, un
}

func reason(res *chessprobe.Result, m chesstb.Metric) string {
	if err := res.Unavailable[m]; err != nil {
		return describe(res.Material, err)
	}
	return "no table answered it"
}

func intPtr(n int) *int { return &n }

// CategoryAt is lichess's category of a probed position with half-move
// clock clock, reached from a position whose clock was before (for a root,
// lila-tablebase takes the clock minus one). It is the class under the
// 50-move rule: a win or loss the clock still allows is "win" or "loss",
// one it draws is "cursed-win" or "blessed-loss", as
// chesstb.Result.RuleCategory gives it. When before is 100 or more a draw
// could have been claimed already, so lichess reports every decisive
// result, a checkmate included, as cursed or blessed. chesstb's DTZ is
// exact, so no "syzygy-" category occurs where chesstb answers; where only
// Syzygy does, the category is lila-tablebase's from the DTZ50″
// (SyzygyCategory). "" means no table prices the position at its clock
// (lichess's "unknown").
func CategoryAt(res *chessprobe.Result, clock, before int) Category {
	var c chesstb.Category
	switch {
	case res.Checkmate:
		c = chesstb.Loss
	case res.Stalemate:
		return Draw
	case !res.HasWDL:
		return ""
	case res.Formats&chessprobe.Chesstb == 0 && res.Syzygy != nil && res.Syzygy.HasDTZ:
		return SyzygyCategory(res.Syzygy, clock, before)
	default:
		var ok bool
		if c, ok = res.Result.RuleCategory(clock); !ok {
			if clock != 0 {
				return ""
			}
			c = res.Category() // right after a zeroing move the class is the verdict
		}
	}
	if before >= 100 {
		switch {
		case c > chesstb.Draw:
			c = chesstb.CursedWin
		case c < chesstb.Draw:
			c = chesstb.BlessedLoss
		}
	}
	return CategoryOf(int(c))
}

// SyzygyCategory is lila-tablebase's category of a position from its
// Syzygy DTZ50″ (its response.rs with shakmaty-syzygy's
// AmbiguousWdl::from_dtz_and_halfmoves): a draw at DTZ 0; when a draw could
// have been claimed before (before of 100 or more) every decisive result
// cursed or blessed; otherwise the DTZ with the clock's plies added, a win
// or loss up to 100 plies, cursed or blessed past them, and exactly 100 for
// a rounded value "syzygy-win" or "syzygy-loss" (n may mean n+1). Right
// after a zeroing move (clock 0) the value is a win or loss as it stands.
func SyzygyCategory(s *chessprobe.SyzygyAnswer, clock, before int) Category {
	d := s.DTZ
	switch {
	case d == 0:
		return Draw
	case before >= 100 && d < 0:
		return BlessedLoss
	case before >= 100:
		return CursedWin
	}
	if clock > 0 {
		if d > 0 {
			d += clock
		} else {
			d -= clock
		}
		switch {
		case !s.Precise && d == 100:
			return SyzygyWin
		case !s.Precise && d == -100:
			return SyzygyLoss
		}
	}
	switch {
	case d < -100:
		return BlessedLoss
	case d < 0:
		return Loss
	case d <= 100:
		return Win
	}
	return CursedWin
}
