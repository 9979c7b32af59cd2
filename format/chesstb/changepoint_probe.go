package chesstb

import (
	"context"
	"errors"
	"fmt"

	"github.com/tbfs/tbfs/chess"
)

// fullResult is probeNode's answer for one node: the class, and every
// metric with the class that signs it. DTM50 and DTC carry the class the
// clock leaves (win, loss or draw); each err field says why a metric is
// missing.
type fullResult struct {
	wdl wdlv

	hasDTZ bool
	dtz    uint16
	dtzW   wdlv
	dtzErr error

	hasDTM bool
	dtm    uint16
	dtmW   wdlv
	dtmErr error

	hasDTM50 bool
	dtm50    uint16
	dtm50W   wdlv
	dtm50Err error

	hasDTC   bool
	dtcOrder uint16
	dtc      uint16
	dtcW     wdlv
	dtcErr   error
}

// probeNode answers every metric of n at half-move clock rule50 (noClock:
// the 50-move rule ignored, so no DTM50), with the en-passant overlay. The
// order of the reads is the reference prober's, because it decides which
// table answers a metric that two tables carry: DTM from the DTM50 pack
// before dtm/, DTZ from the DTC pack before the DTM50 pack's draw flip
// before dtz/.
func (p *prober) probeNode(n *node, rule50, depth int) (fullResult, error) {
	return p.probeNodeOnly(n, rule50, depth, 0)
}

// probeNodeOnly is probeNode for a caller that wants one metric (only is
// MetricDTM50, MetricDTC, MetricDTM or MetricDTZ; 0 asks for every metric):
// it skips the reads that cannot change that metric, so the other fields
// may be missing. DTM and DTZ are read at noClock.
func (p *prober) probeNodeOnly(n *node, rule50, depth int, only Metric) (fullResult, error) {
	var r fullResult
	w, err := p.wdlNoEP(n, depth)
	if err != nil {
		return r, err
	}
	if w == wIllegal {
		return r, fmt.Errorf("%w: the table holds no value for %s", ErrUnresolved, n.pos.FEN())
	}
	r.wdl, r.dtzW, r.dtmW = w, w, w.foldDTM()
	flat := rule50 == noClock
	if w == wDraw {
		// A draw is priced without opening a distance table.
		r.hasDTZ, r.hasDTM, r.hasDTC = true, true, true
		r.dtcW = wDraw
		if !flat {
			r.hasDTM50, r.dtm50W = true, wDraw
		}
	} else {
		// A DTC call on pawnful material reads only the DTC pack, whose
		// answer nothing else changes; a DTM50 call stops after the DTM50
		// pack, which no later read feeds.
		if only != MetricDTC || !n.mat.hasPawns() {
			if err := p.packedMates(n, w, rule50, depth, &r, only); err != nil {
				return r, err
			}
		}
		if only == MetricDTM50 || only == MetricDTM {
			return p.overlay(n, r, depth, only)
		}
		if n.mat.hasPawns() {
			cell, err := p.dtcNoEP(n, w, rule50, depth)
			switch {
			case err == nil:
				r.hasDTC = true
				r.dtcW = wDraw
				if cell.priced() {
					r.dtcW, r.dtcOrder, r.dtc = w, cell.order, cell.value
				}
				if cell.dtz != dtcDrawn {
					// Both packs pin DTZ (the DTC pack's unbounded row, the
					// DTM50 pack's draw flip): they must agree.
					if r.hasDTZ && r.dtz != cell.dtz {
						return r, invariantf("%s: the DTC pack gives DTZ %d, the DTM50 pack %d", n.mat.name(), cell.dtz, r.dtz)
					}
					r.hasDTZ, r.dtz = true, cell.dtz
				}
			case unknownErr(err):
				r.dtcErr = err
			default:
				return r, err
			}
		}
		if !r.hasDTZ {
			d, err := p.distance(KindDTZ, n, w, depth)
			switch {
			case err == nil:
				r.hasDTZ, r.dtz, r.dtzErr = true, d, nil
			case unknownErr(err):
				r.dtzErr = err
			default:
				return r, err
			}
		}
		if !n.mat.hasPawns() {
			// Pawnless material carries no DTC pack: every zeroing move is a
			// conversion, so DTC is DTZ at no pushes, drawn where the clock
			// or the class does not allow it.
			switch {
			case !w.decisive50():
				r.hasDTC, r.dtcW = true, wDraw
			case r.hasDTZ:
				r.hasDTC, r.dtcW, r.dtc = true, w, r.dtz
				if !flat && int(r.dtz)+rule50 > dtzMax50 {
					r.dtcW, r.dtc = wDraw, 0
				}
			default:
				r.dtcErr = r.dtzErr
			}
		}
	}
	return p.overlay(n, r, depth, only)
}

// packedMates fills DTM (and the DTZ a layer-0 read pins) and, under the
// clock, DTM50: from the DTM50 pack when the material has one, else DTM from
// dtm/.
func (p *prober) packedMates(n *node, w wdlv, rule50, depth int, r *fullResult, only Metric) error {
	flat := rule50 == noClock
	if _, err := p.table(KindDTM50, n.mat); err != nil {
		if !errors.Is(err, ErrNoTable) {
			return err
		}
		r.dtm50Err = err
		if only == MetricDTZ {
			return nil // dtm/ holds no DTZ
		}
		d, err := p.distance(KindDTM, n, w, depth)
		switch {
		case err == nil:
			r.hasDTM, r.dtm = true, d
		case unknownErr(err):
			r.dtmErr = err
		default:
			return err
		}
		return nil
	}
	d50, err := p.dtm50NoEP(n, w, noClock, depth)
	if err != nil {
		return err
	}
	r.hasDTM, r.dtm = d50.wdl != wIllegal, d50.dtm
	if !r.hasDTM {
		r.dtmErr = d50.why
	}
	r.hasDTZ, r.dtz = d50.hasDTZ, d50.dtz
	if !r.hasDTZ {
		r.dtzErr = errUnresolved
	}
	switch {
	case flat:
	case rule50 >= dtzMax50:
		// Only a mate already on the board outruns the claim, and an
		// unpriced distance cannot tell one apart.
		if r.hasDTM || w != wLose {
			r.hasDTM50, r.dtm50W = true, wDraw
			if w == wLose && r.dtm == 0 {
				r.dtm50W = wLose
			}
		}
	case w.fold50() == wDraw:
		r.hasDTM50, r.dtm50W = true, wDraw
	case r.hasDTM && rule50+int(r.dtm) <= dtzMax50:
		// The whole mating line fits the window.
		r.hasDTM50, r.dtm50W, r.dtm50 = true, w, r.dtm
	case w.decisive50() && rule50+int(r.dtz) > dtzMax50:
		// No line resets the count in time.
		r.hasDTM50, r.dtm50W = true, wDraw
	default:
		d, err := p.dtm50NoEP(n, w, rule50, depth)
		if err != nil {
			return err
		}
		if d.wdl == wIllegal {
			r.dtm50Err = d.why
		} else {
			r.hasDTM50, r.dtm50W, r.dtm50 = true, d.wdl, d.dtm
		}
	}
	return nil
}

// overlay applies the en-passant overlay: each legal ep capture is probed
// as a fresh position (the capture zeroes the clock) and kept where better,
// metric by metric.
func (p *prober) overlay(n *node, r fullResult, depth int, only Metric) (fullResult, error) {
	eps := epCaptures(&n.pos)
	if len(eps) == 0 {
		return r, nil
	}
	best := r
	bestDTZ := r.dtz
	bestDTM := r.dtm
	bestDTM50W, bestDTM50 := r.wdl.fold50(), uint16(0)
	if r.hasDTM50 {
		bestDTM50W, bestDTM50 = r.dtm50W, r.dtm50
	}
	bestDTCW, bestOrder, bestDTC := r.wdl, uint16(0), uint16(0)
	if r.hasDTC {
		bestDTCW, bestOrder, bestDTC = r.dtcW, r.dtcOrder, r.dtc
	}
	for _, m := range eps {
		child := n.pos.Play(m)
		cn := p.childSlot(depth)
		*cn = p.nodeOf(&child)
		var cr fullResult
		if cn.mat.bareKings() {
			cr = fullResult{wdl: wDraw, hasDTZ: best.hasDTZ, hasDTM: best.hasDTM,
				hasDTM50: best.hasDTM50, dtm50W: wDraw}
		} else {
			var err error
			if cr, err = p.probeNodeOnly(cn, 0, depth+1, only); err != nil {
				return fullResult{}, err
			}
		}
		my := cr.wdl.invert()
		if my.rank() > best.wdl.rank() {
			best.wdl = my
		}
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
				if myW.decisive50() {
					best.dtm = myD
				}
			}
		}
		// An ep capture is a conversion: no push owed, one ply out.
		myDTC := my.fold50()
		if myDTC.rank() > bestDTCW.rank() || (best.hasDTC && preferNewDTC(myDTC, 0, 1, bestDTCW, bestOrder, bestDTC)) {
			bestDTCW, bestOrder, bestDTC = myDTC, 0, 1
			best.hasDTC, best.dtcErr = true, nil
			best.dtcW, best.dtcOrder, best.dtc = myDTC, 0, 0
			if myDTC != wDraw {
				best.dtc = 1
			}
		}
		if best.hasDTM50 && cr.hasDTM50 {
			myW, myD := cr.dtm50W.invert(), 1+cr.dtm50
			if preferNew(myW, myD, bestDTM50W, bestDTM50) {
				bestDTM50W, bestDTM50 = myW, myD
				best.dtm50W, best.dtm50 = myW, 0
				if myW.decisive50() {
					best.dtm50 = myD
				}
			}
		}
	}
	return best, nil
}

// preferNewDTC is the minimax order on DTC answers: class first, then pushes
// owed, then the wait (fewer and shorter for a win, more and longer for a
// loss).
func preferNewDTC(nw wdlv, no, nv uint16, ow wdlv, oo, ov uint16) bool {
	if nw.rank() != ow.rank() {
		return nw.rank() > ow.rank()
	}
	switch nw {
	case wWin, wCursed:
		if no != oo {
			return no < oo
		}
		return nv < ov
	case wLose, wBlessed:
		if no != oo {
			return no > oo
		}
		return nv > ov
	}
	return false
}

// publicDTC converts a node answer to the public DTC pair.
func (r *fullResult) publicDTC() DTC {
	switch r.dtcW {
	case wWin:
		return DTC{Pushes: int(r.dtcOrder), Plies: int(r.dtc)}
	case wLose:
		return DTC{Pushes: int(r.dtcOrder), Plies: -int(r.dtc)}
	}
	return DTC{}
}

// publicDTM50 converts a node answer to the signed DTM50.
func (r *fullResult) publicDTM50() int { return signed(r.dtm50, r.dtm50W) }

// fill copies a node answer into a Result, recording why each missing
// metric is missing.
func (r *fullResult) fill(res *Result) {
	res.WDL, res.HasWDL = r.wdl.category(), true
	if r.hasDTZ {
		res.DTZ, res.HasDTZ = signed(r.dtz, r.dtzW), true
	} else {
		res.unavailable(MetricDTZ, r.dtzErr)
	}
	if r.hasDTM {
		res.DTM, res.HasDTM = signed(r.dtm, r.dtmW), true
	} else {
		res.unavailable(MetricDTM, r.dtmErr)
	}
	if r.hasDTM50 {
		res.DTM50, res.HasDTM50 = r.publicDTM50(), true
		res.DTM50Class = Category(r.dtm50W.category())
	} else {
		res.unavailable(MetricDTM50, r.dtm50Err)
	}
	if r.hasDTC {
		res.DTC, res.HasDTC = r.publicDTC(), true
		res.DTCClass = Category(r.dtcW.category())
	} else {
		res.unavailable(MetricDTC, r.dtcErr)
	}
}

// probeOnly is Probe for a caller that wants one metric (MetricDTM50,
// MetricDTC, MetricDTM or MetricDTZ): the other metrics of the Result may
// be missing.
func (tb *Tablebase) probeOnly(ctx context.Context, pos *chess.Position, m Metric) (Result, error) {
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
	clock := pos.HalfmoveClock()
	if m == MetricDTZ || m == MetricDTM {
		clock = noClock // neither depends on the clock
	}
	r, err := p.probeNodeOnly(&n, clock, 0, m)
	if err == nil {
		err = r.checkRoot(&n)
	}
	if err != nil {
		return res, err
	}
	r.fill(&res)
	return res, nil
}
