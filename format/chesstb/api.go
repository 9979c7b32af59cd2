package chesstb

import (
	"context"
	"fmt"

	"github.com/tbfs/tbfs/chess"
)

// metricMask selects the distances probeWithEP reads.
type metricMask uint8

const (
	wantDTZ metricMask = 1 << iota
	wantDTM
)

// nodeResult is probeWithEP's answer for one node: the class, and each
// distance with the class that signs it (the ep overlay may pick a distance
// from a different line than the base class).
type nodeResult struct {
	wdl    wdlv
	dtz    uint16
	dtzW   wdlv
	hasDTZ bool
	dtzErr error
	dtm    uint16
	dtmW   wdlv
	hasDTM bool
	dtmErr error
}

// probeWithEP answers the class of n and the distances want selects, read
// from the dtz/ and dtm/ tables alone (no pack), the en-passant overlay
// included; deriveDTM asks it for a child that has an en-passant square.
// The class must be known; a distance that is not is reported in its err
// field.
func (p *prober) probeWithEP(n *node, want metricMask, depth int) (nodeResult, error) {
	var r nodeResult
	w, err := p.wdlNoEP(n, depth)
	if err != nil {
		return r, err
	}
	if w == wIllegal {
		return r, fmt.Errorf("%w: the table holds no value for %s", ErrUnresolved, n.pos.FEN())
	}
	r.wdl, r.dtzW, r.dtmW = w, w, w.foldDTM()
	if w == wDraw {
		r.hasDTZ, r.hasDTM = true, true
	} else {
		if want&wantDTZ != 0 {
			if d, err := p.distance(KindDTZ, n, w, depth); err == nil {
				r.dtz, r.hasDTZ = d, true
			} else {
				r.dtzErr = err
			}
		}
		if want&wantDTM != 0 {
			if d, err := p.distance(KindDTM, n, w, depth); err == nil {
				r.dtm, r.hasDTM = d, true
			} else {
				r.dtmErr = err
			}
		}
	}
	eps := epCaptures(&n.pos)
	if len(eps) == 0 {
		return r, nil
	}
	best := r
	bestDTZ := r.dtz
	bestDTM := r.dtm
	for _, m := range eps {
		child := n.pos.Play(m)
		cn := p.childSlot(depth)
		*cn = p.nodeOf(&child)
		var cr nodeResult
		if cn.mat.bareKings() {
			cr = nodeResult{wdl: wDraw, hasDTZ: best.hasDTZ, hasDTM: best.hasDTM}
		} else if cr, err = p.probeWithEP(cn, want, depth+1); err != nil {
			return nodeResult{}, err
		}
		my := cr.wdl.invert()
		if my.rank() > best.wdl.rank() {
			best.wdl = my
		}
		// An ep capture zeroes, so it converts at distance 1 whatever the
		// child holds; the base distance only breaks a tie in class.
		if my.rank() > best.dtzW.rank() || (best.hasDTZ && preferNew(my, 1, best.dtzW, bestDTZ)) {
			best.dtzW, bestDTZ = my, 1
			best.dtz = 1
			if my == wDraw {
				best.dtz = 0
			}
			best.hasDTZ, best.dtzErr = true, nil
		}
		if best.hasDTM && cr.hasDTM {
			myW, myD := my.foldDTM(), 1+cr.dtm
			if preferNew(myW, myD, best.dtmW, bestDTM) {
				best.dtmW, bestDTM = myW, myD
				best.dtm = 0
				if myW == wWin || myW == wLose {
					best.dtm = myD
				}
			}
		}
	}
	return best, nil
}

// signed attaches the sign of class w to distance d.
func signed(d uint16, w wdlv) int {
	switch w {
	case wWin, wCursed:
		return int(d)
	case wLose, wBlessed:
		return -int(d)
	}
	return 0
}

// root validates pos and answers what the board alone settles: checkmate,
// stalemate, bare kings. done is true when res is complete.
func (tb *Tablebase) root(ctx context.Context, pos *chess.Position) (n node, res Result, done bool, err error) {
	if pos.Castling() != 0 {
		return n, res, false, fmt.Errorf("%w: castling rights %s (tables hold no castling)", ErrBadPosition, pos.Castling())
	}
	n = tb.nodeOf(ctx, pos)
	res.Material = n.mat.name()
	// IsCheckmate and IsStalemate, with the check test made once.
	inCheck := pos.InCheck()
	stuck := pos.CountLegalMoves() == 0
	switch {
	case stuck && inCheck:
		res.Checkmate = true
		res.WDL = Loss.int()
	case stuck:
		res.Stalemate = true
	case n.mat.bareKings():
	default:
		return n, res, false, nil
	}
	res.HasWDL, res.HasDTZ, res.HasDTM = true, true, true
	res.HasDTM50, res.HasDTC = true, true
	if res.Checkmate {
		res.DTM50Class, res.DTCClass = Loss, Loss
	}
	return n, res, true, nil
}

func (c Category) int() int { return int(c) }

// Probe returns every metric the tables answer for pos. It fails only when
// the WDL class itself cannot be found; a missing distance is reported in
// Result.Unavailable.
func (tb *Tablebase) Probe(ctx context.Context, pos *chess.Position) (Result, error) {
	leave, err := tb.enter()
	if err != nil {
		return Result{}, err
	}
	defer leave()
	n, res, done, err := tb.root(ctx, pos)
	if err != nil || done {
		return res, err
	}
	tb.openAhead(ctx, &n, everyKind)
	p := tb.getProber(ctx)
	defer putProber(p)
	r, err := p.probeNode(&n, pos.HalfmoveClock(), 0)
	if err == nil {
		err = r.checkRoot(&n)
	}
	if err != nil {
		return res, err
	}
	r.fill(&res)
	return res, nil
}

// WDL returns the class of pos for the side to move, -2..+2 (see Category).
// It reads only WDL tables.
func (tb *Tablebase) WDL(ctx context.Context, pos *chess.Position) (int, error) {
	res, err := tb.ProbeWDL(ctx, pos)
	if err != nil {
		return 0, err
	}
	return res.WDL, nil
}

// ProbeWDL is Probe for a caller that wants the class alone: it reads only
// WDL tables, as WDL does, and returns the class with the rest of what
// Probe reports without a distance (the material, checkmate, stalemate).
// The distances are missing, and not listed in Unavailable, but for a
// position the board alone settles, whose Result is whole.
func (tb *Tablebase) ProbeWDL(ctx context.Context, pos *chess.Position) (Result, error) {
	leave, err := tb.enter()
	if err != nil {
		return Result{}, err
	}
	defer leave()
	n, res, done, err := tb.root(ctx, pos)
	if err != nil || done {
		return res, err
	}
	tb.openAhead(ctx, &n, wdlKind)
	p := tb.getProber(ctx)
	defer putProber(p)
	w, err := p.wdlWithEP(&n, 0)
	if err != nil {
		return res, err
	}
	if w == wIllegal {
		return res, fmt.Errorf("%w: the table holds no value for %s", ErrUnresolved, pos.FEN())
	}
	res.WDL, res.HasWDL = w.category(), true
	return res, nil
}

// DTZ returns the signed number of plies to the next zeroing move.
func (tb *Tablebase) DTZ(ctx context.Context, pos *chess.Position) (int, error) {
	return tb.metric(ctx, pos, MetricDTZ)
}

// DTM returns the signed number of plies to mate, ignoring the 50-move rule.
func (tb *Tablebase) DTM(ctx context.Context, pos *chess.Position) (int, error) {
	return tb.metric(ctx, pos, MetricDTM)
}

// metric answers one distance the way Probe does, reading the same tables
// in the same order (the DTM50 pack before dtm/ for DTM; the DTC pack, then
// the DTM50 pack's draw flip, then dtz/ for DTZ), so a metric's own entry
// point never answers from a table Probe would not trust first.
func (tb *Tablebase) metric(ctx context.Context, pos *chess.Position, m Metric) (int, error) {
	res, err := tb.probeOnly(ctx, pos, m)
	if err != nil {
		return 0, err
	}
	switch {
	case m == MetricDTZ && res.HasDTZ:
		return res.DTZ, nil
	case m == MetricDTM && res.HasDTM:
		return res.DTM, nil
	}
	return 0, metricMissing(&res, m)
}
