package chesstb

import (
	"context"
	"fmt"

	"github.com/tbfs/tbfs/chess"
)

// This file reads and rebuilds DTM50, the distance to mate under the 50-move
// rule at a given half-move clock. The .lzdtm50 pack stores 101 layers per
// cell: layer 0 is the unbounded DTM, layer hmc+1 the distance at clock hmc.
// A cell's value only grows along the layers and ends, where no winning line
// fits the clock any more, in DRAW. That draw flip also pins DTZ: a win or
// loss still decisive at clock 100-dtz turns one tick later, so the flip
// layer is 102-dtz (see dtzFromDrawFlip).

// noClock asks for the unbounded (50-move-rule-free) layer.
const noClock = -1

// dtm50Result is a DTM50 answer: the class the clock leaves (wIllegal when
// unknown, with why saying why) and the mate distance, plus the DTZ a
// layer-0 read or rebuild pins on the way.
type dtm50Result struct {
	wdl    wdlv
	dtm    uint16
	hasDTZ bool
	dtz    uint16
	why    error
}

func unknownDTM50(why error) dtm50Result { return dtm50Result{wdl: wIllegal, why: why} }

// fold50 folds the classes a clocked metric cannot hold: cursed wins and
// blessed losses are draws under the 50-move rule.
func (w wdlv) fold50() wdlv {
	if w == wCursed || w == wBlessed {
		return wDraw
	}
	return w
}

// decisive50 reports a plain win or loss.
func (w wdlv) decisive50() bool { return w == wWin || w == wLose }

// dtm50FromStored undoes the parity halving for a layer read under the clock,
// where only plain wins and losses are priced.
func dtm50FromStored(s uint16, w wdlv) uint16 {
	switch w {
	case wWin:
		return 2*s + 1
	case wLose:
		return 2 * s
	}
	return 0
}

// dtzFromDrawFlip is the DTZ a cell's draw flip pins (see the file comment).
// Flip 0 (never drawn) means dtz 0 or 1, which only a mate on the board tells
// apart; flip 1 (drawn at a fresh clock) is the cursed band, which pins
// nothing.
func dtzFromDrawFlip(flip int, w wdlv, n *node) (uint16, bool) {
	switch {
	case w == wDraw || w == wIllegal:
		return 0, true
	case !w.decisive50():
		return 0, false
	case flip == 0:
		if w == wLose && n.pos.IsCheckmate() {
			return 0, true
		}
		return 1, true
	case flip == 1:
		return 0, false
	}
	return uint16(dtzMax50 + 2 - flip), true
}

// packFrame is frameFor for the distance packs, which may also be loss-only:
// a win in a loss-only frame is rebuilt rather than read.
func packFrame(t *tableFile, n *node, w wdlv) (c int, ps pieceSet, derive bool, err error) {
	c, ps, derive, err = frameFor(t, n)
	if err != nil || derive {
		return c, ps, derive, err
	}
	if t.hdr.frames[c].lossOnly && (w == wWin || w == wCursed) {
		return c, ps, true, nil
	}
	return c, ps, false, nil
}

// dtm50NoEP answers the DTM50 of n (class w, ep rights ignored) at clock
// rule50, or the unbounded layer for noClock, reading the pack or rebuilding
// the cell. Only hard failures (corrupt data, transport) are errors; an
// unknown value is a result with class wIllegal.
func (p *prober) dtm50NoEP(n *node, w wdlv, rule50, depth int) (dtm50Result, error) {
	flat := rule50 == noClock
	if !flat && rule50 >= dtzMax50 {
		return dtm50Result{wdl: wDraw}, nil
	}
	t, err := p.table(KindDTM50, n.mat)
	if err != nil {
		if unknownErr(err) {
			return unknownDTM50(err), nil
		}
		return dtm50Result{}, err
	}
	c, ps, derive, err := packFrame(t, n, w)
	if err != nil {
		return dtm50Result{}, err
	}
	if derive {
		if flat {
			return p.deriveDTM50Flat(n, w, depth)
		}
		return p.deriveDTM50(n, w, rule50, depth)
	}
	var r dtm50Result
	value, drawn, flip, err := p.readDTM50(t, c, &ps, w, rule50)
	if err != nil {
		return dtm50Result{}, err
	}
	switch {
	case drawn:
		r = dtm50Result{wdl: wDraw}
	case flat:
		r = dtm50Result{wdl: w, dtm: value}
	default:
		r = dtm50Result{wdl: w.fold50(), dtm: value}
	}
	if flat {
		r.dtz, r.hasDTZ = dtzFromDrawFlip(flip, w, n)
	}
	return r, nil
}

// readDTM50 reads one pack cell at the layer rule50 selects. drawn reports a
// layer the cell's trailing DRAW run covers; flip is where that run starts.
func (p *prober) readDTM50(t *tableFile, c int, ps *pieceSet, w wdlv, rule50 int) (value uint16, drawn bool, flip int, err error) {
	flat := rule50 == noClock
	if !flat && (w == wCursed || w == wBlessed) {
		return 0, true, 0, nil
	}
	idx, err := cellIndex(t, c, ps)
	if err != nil {
		return 0, false, 0, err
	}
	rec, found, err := t.packRecord(p.ctx, c, idx, &p.packBlocks)
	if err != nil || !found {
		return 0, true, 0, err
	}
	notePackVisit(KindDTM50, rec.State)
	layer := 0
	if !flat {
		layer = rule50 + 1
	}
	rank, draw := rec.At(layer)
	flip = rec.DrawFlip()
	if draw {
		return 0, true, flip, nil
	}
	s := packValue(&t.hdr.frames[c], rank)
	if flat {
		return dtmFromStored(s, w), false, flip, nil
	}
	return dtm50FromStored(s, w), false, flip, nil
}

// deriveDTM50 rebuilds a DTM50 cell at clock rule50 by one-ply minimax, each
// child at its own clock: a zeroing move opens a fresh window, a quiet one
// spends a ply. Past the window a quiet move draws unless it mates.
func (p *prober) deriveDTM50(n *node, w wdlv, rule50, depth int) (dtm50Result, error) {
	if depth >= maxDepth {
		return unknownDTM50(errUnresolved), nil
	}
	anyLegal, have := false, false
	bestW, bestD := wLose, uint16(0)
	sk := newSkipped()
	ks := p.kidsOf(n, depth)
	for i := range ks.kids {
		k := &ks.kids[i]
		anyLegal = true
		zeroing := k.zeroing
		cn, memo := p.canonical(ks, k, p.childSlot(depth))
		childClock := rule50 + 1
		if zeroing {
			childClock = 0
		}
		var cd dtm50Result
		switch {
		case cn.mat.bareKings():
			cd = dtm50Result{wdl: wDraw}
		case childClock >= dtzMax50:
			cd = dtm50Result{wdl: wDraw}
			if cn.pos.IsCheckmate() {
				cd.wdl = wLose
			}
		case cn.pos.EnPassant() != chess.NoSquare:
			cr, err := p.probeNode(cn, childClock, depth+1)
			if err != nil {
				if !unknownErr(err) {
					return dtm50Result{}, err
				}
				sk.unknown()
				continue
			}
			if !cr.hasDTM50 {
				sk.ofClass(cr.wdl.fold50().invert())
				continue
			}
			cd = dtm50Result{wdl: cr.dtm50W, dtm: cr.dtm50}
		default:
			cw := wWin
			if w != wLose {
				var err error
				cw, err = p.childWDL(k, memo, cn, depth+1)
				if !answered(err) {
					return dtm50Result{}, err
				}
				if err != nil || cw == wIllegal {
					sk.unknown()
					continue
				}
				if belowPinned(w, cw.invert()) {
					continue
				}
			}
			var err error
			cd, err = p.dtm50NoEP(cn, cw, childClock, depth+1)
			if err != nil {
				return dtm50Result{}, err
			}
			if cd.wdl == wIllegal {
				sk.ofClass(cw.fold50().invert())
				continue
			}
		}
		myW := cd.wdl.fold50().invert()
		myD := 1 + cd.dtm
		if !have || preferNew(myW, myD, bestW, bestD) {
			bestW, bestD, have = myW, myD, true
		}
	}
	if !anyLegal {
		if n.pos.InCheck() {
			return dtm50Result{wdl: wLose}, nil
		}
		return dtm50Result{wdl: wDraw}, nil
	}
	if !have || sk.unpins(bestW) {
		return unknownDTM50(errUnresolved), nil
	}
	if bestW.decisive50() {
		return dtm50Result{wdl: bestW, dtm: bestD}, nil
	}
	return dtm50Result{wdl: wDraw}, nil
}

// dtzMinimax is the DTZ half of a layer-0 rebuild: zeroing distance ranks
// moves its own way, so it runs beside the mate minimax over the same
// children.
type dtzMinimax struct {
	have  bool
	bestW wdlv
	bestD uint16
	sk    skipped
}

func newDTZMinimax() dtzMinimax { return dtzMinimax{bestW: wLose, sk: newSkipped()} }

// zeroing: a zeroing move ends the count at this ply whatever the child is.
func (z *dtzMinimax) zeroing(childW wdlv) { z.offer(childW, 1) }

func (z *dtzMinimax) quiet(childW wdlv, child dtm50Result) {
	if child.hasDTZ {
		z.offer(childW, 1+child.dtz)
	} else {
		z.sk.ofDTZClass(childW.invert())
	}
}

func (z *dtzMinimax) unwalked() { z.sk.unknown() }

func (z *dtzMinimax) offer(childW wdlv, d uint16) {
	my := childW.invert()
	if d > dtzMax50 {
		switch my {
		case wWin:
			my = wCursed
		case wLose:
			my = wBlessed
		}
	}
	if !z.have || preferNew(my, d, z.bestW, z.bestD) {
		z.bestW, z.bestD, z.have = my, d, true
	}
}

func (z *dtzMinimax) finish(out *dtm50Result, anyLegal bool) {
	if !anyLegal {
		out.hasDTZ, out.dtz = true, 0
		return
	}
	if !z.have || z.sk.unpins(z.bestW) {
		return
	}
	out.hasDTZ = true
	if z.bestW != wDraw {
		out.dtz = z.bestD
	}
}

// deriveDTM50Flat rebuilds a pack's layer 0 (the unbounded DTM) by one-ply
// minimax, pricing DTZ alongside as a read cell does from its flip.
func (p *prober) deriveDTM50Flat(n *node, w wdlv, depth int) (dtm50Result, error) {
	if depth >= maxDepth {
		return unknownDTM50(errUnresolved), nil
	}
	pinned := w.foldDTM()
	anyLegal, have := false, false
	bestW, bestD := wLose, uint16(0)
	z := newDTZMinimax()
	sk := newSkipped()
	ks := p.kidsOf(n, depth)
	for i := range ks.kids {
		k := &ks.kids[i]
		anyLegal = true
		zeroing := k.zeroing
		cn, memo := p.canonical(ks, k, p.childSlot(depth))
		var cw wdlv
		var cd uint16
		switch {
		case cn.mat.bareKings():
			cw, cd = wDraw, 0
			z.zeroing(wDraw)
		case cn.pos.EnPassant() != chess.NoSquare:
			cr, err := p.probeNode(cn, noClock, depth+1)
			if err != nil {
				if !unknownErr(err) {
					return dtm50Result{}, err
				}
				sk.unknown()
				z.unwalked()
				continue
			}
			z.zeroing(cr.wdl) // a double push zeroes the clock
			if !cr.hasDTM {
				sk.ofClass(cr.wdl.foldDTM().invert())
				continue
			}
			cw, cd = cr.wdl, cr.dtm
		default:
			raw := wWin
			if w != wLose {
				var err error
				raw, err = p.childWDL(k, memo, cn, depth+1)
				if !answered(err) {
					return dtm50Result{}, err
				}
				if err != nil || raw == wIllegal {
					sk.unknown()
					z.unwalked()
					continue
				}
				if belowPinned(pinned, raw.foldDTM().invert()) {
					continue
				}
			}
			cr, err := p.dtm50NoEP(cn, raw, noClock, depth+1)
			if err != nil {
				return dtm50Result{}, err
			}
			if zeroing {
				z.zeroing(raw)
			} else {
				z.quiet(raw, cr)
			}
			if cr.wdl == wIllegal {
				sk.ofClass(raw.foldDTM().invert())
				continue
			}
			cw, cd = cr.wdl, cr.dtm
		}
		myW := cw.foldDTM().invert()
		myD := 1 + cd
		if !have || preferNew(myW, myD, bestW, bestD) {
			bestW, bestD, have = myW, myD, true
		}
	}
	out := unknownDTM50(errUnresolved)
	switch {
	case !anyLegal:
		out = dtm50Result{wdl: wDraw}
		if n.pos.InCheck() {
			out.wdl = wLose
		}
	case have && !sk.unpins(bestW):
		out = dtm50Result{wdl: wDraw}
		if bestW.decisive50() {
			out = dtm50Result{wdl: bestW, dtm: bestD}
		}
	}
	z.finish(&out, anyLegal)
	return out, nil
}

// DTM50 returns the signed number of plies to mate under the 50-move rule,
// the count starting at pos's half-move clock: positive when the side to
// move mates, 0 where the clock has taken the win (a draw), for cursed and
// blessed positions and for a side already checkmated (Result tells that
// one apart). At clock 100 or more every position is a draw except a mate
// on the board (or an en-passant capture that resets the count).
func (tb *Tablebase) DTM50(ctx context.Context, pos *chess.Position) (int, error) {
	res, err := tb.probeOnly(ctx, pos, MetricDTM50)
	if err != nil {
		return 0, err
	}
	if res.HasDTM50 {
		return res.DTM50, nil
	}
	return 0, metricMissing(&res, MetricDTM50)
}

// metricMissing is the error for a metric a probe left unanswered.
func metricMissing(res *Result, m Metric) error {
	if err := res.Unavailable[m]; err != nil {
		return err
	}
	return fmt.Errorf("%w: %s not answered", ErrUnresolved, m)
}
