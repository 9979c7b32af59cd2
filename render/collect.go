package render

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/format/chesstb"
	"github.com/tbfs/tbfs/source"
)

// Prober is what Collect needs from a tablebase; *chesstb.Tablebase is one.
type Prober interface {
	Probe(ctx context.Context, pos *chess.Position) (chesstb.Result, error)
}

// Collect probes pos and, with children, the position after every legal
// move, and returns the report both front ends render.
//
// Answers the tables cannot give are part of the report, not errors: a
// material with no table, a position outside the tables' domain (castling
// rights) or a value that cannot be derived becomes Report.Error, and a
// missing metric is listed in Unavailable. Collect fails only when a
// failure could hide a value the tables hold: a transport failure, a
// corrupt table, a cancelled context. Then no report is returned, so a
// caller can never print a partial answer as if it were whole.
func Collect(ctx context.Context, p Prober, pos *chess.Position, children bool) (*Report, error) {
	rep := &Report{FEN: pos.FEN()}
	res, err := p.Probe(ctx, pos)
	if err != nil {
		if !answerable(err) {
			return nil, err
		}
		rep.Material = res.Material
		rep.Error = describe(res.Material, err)
		rep.Checkmate, rep.Stalemate = res.Checkmate, res.Stalemate
	} else {
		rep.Material = res.Material
		rep.Values, rep.Unavailable = FromResult(&res)
	}
	if !children {
		return rep, nil
	}
	rep.Moves = []Move{}
	for _, m := range pos.LegalMoves(nil) {
		child := pos.Play(m)
		mv := Move{UCI: m.UCI(), SAN: pos.SAN(m)}
		cres, err := p.Probe(ctx, &child)
		switch {
		case err == nil:
			mv.Values, _ = FromResult(&cres)
		case answerable(err):
			mv.Error = describe(cres.Material, err)
			mv.Checkmate, mv.Stalemate = cres.Checkmate, cres.Stalemate
		default:
			return nil, fmt.Errorf("after %s: %w", m.UCI(), err)
		}
		rep.Moves = append(rep.Moves, mv)
	}
	SortMoves(rep.Moves)
	return rep, nil
}

// answerable reports whether a probe error is a fact about the position
// (no table, outside the domain, not derivable) rather than a failure to
// read the tables that hold it.
func answerable(err error) bool {
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

// FromResult converts a probe result into the rendered values and the
// reasons for the metrics it lacks.
func FromResult(res *chesstb.Result) (Values, map[Metric]string) {
	var v Values
	v.Checkmate, v.Stalemate = res.Checkmate, res.Stalemate
	un := map[Metric]string{}
	if res.HasWDL {
		v.WDL = intPtr(res.WDL)
		v.Category = CategoryOf(res.WDL)
	} else {
		un[MetricWDL] = reason(res, chesstb.MetricWDL)
	}
	if res.HasDTZ {
		v.DTZ = intPtr(res.DTZ)
	} else {
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

func reason(res *chesstb.Result, m chesstb.Metric) string {
	if err := res.Unavailable[m]; err != nil {
		return describe(res.Material, err)
	}
	return "no table answered it"
}

func intPtr(n int) *int { return &n }

// SortMoves orders moves best first for the side that makes them and marks
// the best. A move's values are the opponent's after it, so the mover's
// outcome is the negated WDL. Among wins the shortest DTZ comes first (it
// keeps the 50-move rule safe), then the shortest DTM; among losses the
// longest; ties, draws among them, keep UCI order. Moves whose class is unknown come last.
// The best moves are those sharing the first move's class and distances.
func SortMoves(moves []Move) {
	sort.Slice(moves, func(i, j int) bool { return moves[i].UCI < moves[j].UCI })
	sort.SliceStable(moves, func(i, j int) bool { return moveLess(&moves[i], &moves[j]) })
	for i := range moves {
		moves[i].Best = moves[0].WDL != nil && !moveLess(&moves[0], &moves[i])
	}
}

// moveLess reports whether a is strictly better than b for the mover.
func moveLess(a, b *Move) bool {
	if (a.WDL == nil) != (b.WDL == nil) {
		return a.WDL != nil
	}
	if a.WDL == nil {
		return false
	}
	if *a.WDL != *b.WDL {
		return *a.WDL < *b.WDL // the opponent's worse is the mover's better
	}
	mover := -*a.WDL
	for _, m := range []Metric{MetricDTZ, MetricDTM} {
		x, xok := a.Int(m)
		y, yok := b.Int(m)
		if xok != yok {
			return xok
		}
		if !xok || x == y || mover == 0 {
			continue
		}
		ax, ay := abs(x), abs(y)
		if mover > 0 {
			return ax < ay // win: faster
		}
		return ax > ay // loss: slower
	}
	return false
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
