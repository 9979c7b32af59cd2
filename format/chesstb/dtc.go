package chesstb

import (
	"context"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/format/chesstb/internal/changepoint"
)

// This file reads and rebuilds DTC, distance to conversion priced in pawn
// pushes. The .lzdtc pack stacks 30 rows per cell: row 0 is the embedded
// DTZ table (the unbounded row), row j the answer when the winning side may
// spend at most 29-j more pushes before a capture or promotion. Fewer pushes
// cost a longer wait, so the values grow with j; a probe takes the fewest
// pushes whose wait still fits the plies the clock leaves.

// DTC is a distance-to-conversion answer at a half-move clock: Pushes is the
// number of pawn pushes the winning side still owes before the next capture
// or promotion, Plies the signed number of plies to the next zeroing move on
// that line (positive when the side to move wins). Both are 0 where no push
// budget fits the clock (a draw under the 50-move rule) and for a side to
// move already checkmated.
type DTC struct {
	Pushes int
	Plies  int
}

// dtcBudgets is the number of finite push budgets (rows 1..29); the curve
// index dtcBudgets is the unbounded row.
const dtcBudgets = changepoint.DTCLayers - 1

// dtcDrawn marks a DTC value that is not priced: no budget fits the clock,
// or the unbounded row could not be rebuilt.
const dtcDrawn = 0xffff

// dtcCell is one DTC answer: pushes owed and plies to the next zeroing move
// at the budget the clock picks, and the unbounded row (DTZ).
type dtcCell struct {
	order, value, dtz uint16
}

func drawnDTC() dtcCell { return dtcCell{value: dtcDrawn, dtz: dtcDrawn} }

func (c dtcCell) priced() bool { return c.value != dtcDrawn }

// dtcCurve is a cell's value per push budget (index k = at most k pushes),
// dtcDrawn where a budget settles nothing; index dtcBudgets is the
// unbounded row.
type dtcCurve [changepoint.DTCLayers]uint16

// dtcBudgetPlies is how many plies a DTC answer may still spend: the whole
// window when the clock is ignored, none once it has reached the claim.
func dtcBudgetPlies(rule50 int) uint16 {
	switch {
	case rule50 == noClock:
		return dtzMax50
	case rule50 >= dtzMax50:
		return 0
	}
	return uint16(dtzMax50 - rule50)
}

// dtcSegments reads a cell's record as runs of pack rows: start[i] is the
// first row of run i, value[i] its stored plies; a draw-ended record's last
// run has no value.
type dtcSegments struct {
	n       int
	drawEnd bool
	start   [changepoint.DTCLayers]uint16
	value   [changepoint.DTCLayers]uint16
}

// readDTCSegments reads cell ps of frame c; found is false where nothing is
// stored, which reads as drawn at every budget.
func (p *prober) readDTCSegments(t *tableFile, c int, ps *pieceSet, seg *dtcSegments) (found bool, err error) {
	idx, err := cellIndex(t, c, ps)
	if err != nil {
		return false, err
	}
	rec, found, err := t.packRecord(p.ctx, c, idx, &p.packBlocks)
	if err != nil || !found {
		return false, err
	}
	notePackVisit(KindDTC, rec.State)
	f := &t.hdr.frames[c]
	seg.n, seg.drawEnd = rec.Segments(), rec.DrawEnd
	for i := 0; i < seg.n; i++ {
		start, rank, draw := rec.Segment(i)
		seg.start[i] = uint16(start)
		if !draw {
			seg.value[i] = packValue(f, rank)
		}
	}
	return true, nil
}

// readDTC answers a stored cell at clock rule50.
func (p *prober) readDTC(t *tableFile, c int, ps *pieceSet, w wdlv, rule50 int) (dtcCell, error) {
	var seg dtcSegments
	found, err := p.readDTCSegments(t, c, ps, &seg)
	if err != nil || !found {
		return drawnDTC(), err
	}
	out := drawnDTC()
	out.dtz = seg.value[0]
	// The budgets hold only what the 50-move rule settles; a cursed class
	// has the unbounded row and nothing else.
	if w == wCursed || w == wBlessed {
		return out, nil
	}
	budget := dtcBudgetPlies(rule50)
	decisive := seg.n
	if seg.drawEnd {
		decisive--
	}
	// Values rise with the row, so the runs that fit are a prefix and the
	// last of them owes the fewest pushes.
	for s := decisive - 1; s >= 0; s-- {
		if seg.value[s] > budget {
			continue
		}
		last := dtcBudgets
		if s+1 < seg.n {
			last = int(seg.start[s+1]) - 1
		}
		out.order = uint16(dtcBudgets - last)
		out.value = seg.value[s]
		break
	}
	return out, nil
}

// readDTCCurve spreads a stored cell over the budgets.
func (p *prober) readDTCCurve(t *tableFile, c int, ps *pieceSet, w wdlv, curve *dtcCurve) error {
	for k := range curve {
		curve[k] = dtcDrawn
	}
	if w == wCursed || w == wBlessed {
		return nil
	}
	var seg dtcSegments
	found, err := p.readDTCSegments(t, c, ps, &seg)
	if err != nil || !found {
		return err
	}
	decisive := seg.n
	if seg.drawEnd {
		decisive--
	}
	for s := 0; s < decisive; s++ {
		end := changepoint.DTCLayers
		if s+1 < seg.n {
			end = int(seg.start[s+1])
		}
		for j := int(seg.start[s]); j < end; j++ {
			curve[dtcBudgets-j] = seg.value[s]
		}
	}
	return nil
}

// dtcNoEP answers the DTC of n (class w, ep rights ignored) at clock
// rule50, reading its pack or rebuilding the cell. An unknown value is an
// error matching unknownErr.
func (p *prober) dtcNoEP(n *node, w wdlv, rule50, depth int) (dtcCell, error) {
	t, err := p.table(KindDTC, n.mat)
	if err != nil {
		return dtcCell{}, err
	}
	c, ps, derive, err := packFrame(t, n, w)
	if err != nil {
		return dtcCell{}, err
	}
	if derive {
		return p.deriveDTC(n, w, rule50, depth)
	}
	return p.readDTC(t, c, &ps, w, rule50)
}

// dtcCurveOf is the stored curve of n, which must be readable (the loss
// derive reads children that sit in a kept frame).
func (p *prober) dtcCurveOf(n *node, w wdlv, curve *dtcCurve) error {
	t, err := p.table(KindDTC, n.mat)
	if err != nil {
		return err
	}
	c, ps, derive, err := packFrame(t, n, w)
	if err != nil {
		return err
	}
	if derive {
		return errUnresolved
	}
	return p.readDTCCurve(t, c, &ps, w, curve)
}

// unboundedFold rebuilds the unbounded row a pack carries: a zeroing move
// ends the count one ply out, a quiet move waits a ply longer than its
// child, and the mover's class says whether the shortest or longest stands.
type unboundedFold struct {
	winning, have, blind bool
	best                 uint16
}

func (u *unboundedFold) zeroing() { u.offer(1) }

func (u *unboundedFold) quiet(childDTZ uint16) {
	if childDTZ == dtcDrawn {
		u.blind = true
		return
	}
	u.offer(childDTZ + 1)
}

func (u *unboundedFold) offer(v uint16) {
	if !u.have || (u.winning && v < u.best) || (!u.winning && v > u.best) {
		u.best = v
	}
	u.have = true
}

func (u *unboundedFold) value() uint16 {
	if u.have && !u.blind {
		return u.best
	}
	return dtcDrawn
}

// isConversion reports a capture or promotion, the moves that end a DTC
// count.
func isConversion(pos *chess.Position, m chess.Move) bool {
	return m.Promotion() != chess.NoPieceType || pos.IsCapture(m)
}

func isPawnMove(pos *chess.Position, m chess.Move) bool {
	return pos.PieceAt(m.From()).Type() == chess.Pawn
}

// deriveDTC rebuilds a DTC cell by one-ply minimax. A win takes the cheapest
// budget any move offers; a loss settles on the budget its most stubborn
// defence forces; a cursed class has only its unbounded row.
func (p *prober) deriveDTC(n *node, w wdlv, rule50, depth int) (dtcCell, error) {
	if depth >= maxDepth {
		return dtcCell{}, errUnresolved
	}
	switch w {
	case wWin:
		return p.deriveDTCWin(n, rule50, depth)
	case wLose:
		return p.deriveDTCLoss(n, rule50, depth)
	}
	return p.deriveDTCCursed(n, w, depth)
}

// childDTC is a quiet child's or a push's DTC at its own clock. A child with
// ep rights answers through the full probe, whose overlay prices the
// capture its own record cannot express.
func (p *prober) childDTC(cn *node, cw wdlv, clock, depth int) (dtcCell, error) {
	if cn.pos.EnPassant() == chess.NoSquare {
		return p.dtcNoEP(cn, cw, clock, depth)
	}
	cr, err := p.probeNode(cn, clock, depth)
	if err != nil {
		return dtcCell{}, err
	}
	if !cr.hasDTC || !cr.hasDTZ {
		return dtcCell{}, errUnresolved
	}
	cell := drawnDTC()
	cell.dtz = cr.dtz
	if cr.dtcW != wDraw {
		cell.order, cell.value = cr.dtcOrder, cr.dtc
	}
	return cell, nil
}

func (p *prober) deriveDTCWin(n *node, rule50, depth int) (dtcCell, error) {
	have := false
	var bestOrder, bestValue uint16
	budget := dtcBudgetPlies(rule50)
	unb := unboundedFold{winning: true}
	ks := p.kidsOf(n, depth)
	for i := range ks.kids {
		kd := &ks.kids[i]
		m := kd.move
		conversion := isConversion(&n.pos, m)
		push := !conversion && isPawnMove(&n.pos, m)
		cn, memo := p.canonical(ks, kd, p.childSlot(depth))
		if cn.mat.bareKings() {
			continue
		}
		cw, err := p.childWithEP(kd, memo, cn, depth+1)
		if err != nil {
			return dtcCell{}, err
		}
		if cw == wIllegal {
			return dtcCell{}, errUnresolved
		}
		// Only a clean loss for the opponent carries a clean win.
		if cw != wLose {
			continue
		}
		order, value := uint16(0), uint16(1)
		if conversion {
			unb.zeroing()
		} else {
			clock := 0
			if !push {
				clock = rule50 + 1
				if rule50 == noClock {
					clock = noClock
				}
			}
			cell, err := p.childDTC(cn, cw, clock, depth+1)
			if err != nil {
				return dtcCell{}, err
			}
			if push {
				unb.zeroing()
			} else {
				unb.quiet(cell.dtz)
			}
			if !cell.priced() {
				continue
			}
			order = cell.order
			value = cell.value + 1
			if push {
				order++
				value = 1
			}
		}
		if value > budget {
			continue
		}
		if !have || order < bestOrder || (order == bestOrder && value < bestValue) {
			bestOrder, bestValue, have = order, value, true
		}
	}
	out := drawnDTC()
	out.dtz = unb.value()
	if have {
		out.order, out.value = bestOrder, bestValue
	}
	return out, nil
}

// epConversionWins reports whether an en-passant capture out of cn wins for
// the side holding it; ok is false when a capture's value is unknown and
// none wins.
func (p *prober) epConversionWins(cn *node, depth int) (wins, ok bool, err error) {
	unknown := false
	for _, m := range epCaptures(&cn.pos) {
		child := cn.pos.Play(m)
		gc := p.nodeOf(&child)
		gw := wDraw
		if !gc.mat.bareKings() {
			gw, err = p.wdlWithEP(&gc, depth+1)
			if !answered(err) {
				return false, false, err
			}
			if err != nil || gw == wIllegal {
				unknown = true
				continue
			}
		}
		if gw.invert().fold50() == wWin {
			return true, true, nil
		}
	}
	return false, !unknown, nil
}

func (p *prober) deriveDTCLoss(n *node, rule50, depth int) (dtcCell, error) {
	var worst [changepoint.DTCLayers]uint16
	var drawn [changepoint.DTCLayers]bool
	anyLegal := false
	unb := unboundedFold{}
	raise := func(k int, v uint16) {
		if v > dtzMax50 {
			drawn[k] = true
		} else if v > worst[k] {
			worst[k] = v
		}
	}
	raiseAll := func(v uint16) {
		for k := range worst {
			raise(k, v)
		}
	}
	var curve dtcCurve
	ks := p.kidsOf(n, depth)
	for i := range ks.kids {
		kd := &ks.kids[i]
		m := kd.move
		anyLegal = true
		conversion := isConversion(&n.pos, m)
		cn, _ := p.canonical(ks, kd, p.childSlot(depth))
		if conversion || cn.mat.bareKings() {
			raiseAll(1)
			unb.zeroing()
			continue
		}
		push := isPawnMove(&n.pos, m)
		if cn.pos.EnPassant() != chess.NoSquare {
			wins, ok, err := p.epConversionWins(cn, depth+1)
			if err != nil {
				return dtcCell{}, err
			}
			if !ok {
				return dtcCell{}, errUnresolved
			}
			if wins {
				raiseAll(1)
				unb.zeroing()
				continue
			}
		}
		if err := p.dtcCurveOf(cn, wWin, &curve); err != nil {
			return dtcCell{}, err
		}
		if push {
			unb.zeroing()
		} else {
			unb.quiet(curve[dtcBudgets])
		}
		for k, v := range curve {
			switch {
			case v == dtcDrawn:
				drawn[k] = true
			case push:
				raise(k, 1)
			default:
				raise(k, v+1)
			}
		}
	}
	if !anyLegal {
		return dtcCell{}, nil // mated: converted, nothing owed
	}
	out := drawnDTC()
	out.dtz = unb.value()
	budget := dtcBudgetPlies(rule50)
	for k := range worst {
		if !drawn[k] && worst[k] <= budget {
			out.order, out.value = uint16(k), worst[k]
			break
		}
	}
	return out, nil
}

func (p *prober) deriveDTCCursed(n *node, w wdlv, depth int) (dtcCell, error) {
	winning := w == wCursed
	unb := unboundedFold{winning: winning}
	anyLegal := false
	ks := p.kidsOf(n, depth)
	for i := range ks.kids {
		kd := &ks.kids[i]
		m := kd.move
		anyLegal = true
		conversion := isConversion(&n.pos, m)
		push := !conversion && isPawnMove(&n.pos, m)
		cn, memo := p.canonical(ks, kd, p.childSlot(depth))
		if cn.mat.bareKings() {
			if winning {
				continue // a draw no cursed win would take
			}
			return dtcCell{}, errUnresolved
		}
		cw, err := p.childWithEP(kd, memo, cn, depth+1)
		if err != nil {
			return dtcCell{}, err
		}
		if cw == wIllegal {
			return dtcCell{}, errUnresolved
		}
		if winning && cw != wLose && cw != wBlessed {
			continue
		}
		if conversion || push {
			unb.zeroing()
			continue
		}
		cell, err := p.dtcNoEP(cn, cw, noClock, depth+1)
		if err != nil {
			return dtcCell{}, err
		}
		unb.quiet(cell.dtz)
	}
	out := drawnDTC()
	if anyLegal {
		out.dtz = unb.value()
	}
	return out, nil
}

// DTC returns the distance to conversion of pos at its half-move clock: the
// pawn pushes the winning side still owes before the next capture or
// promotion and the signed plies to the next zeroing move on that line,
// taking the fewest pushes whose wait fits the plies the clock leaves. It is
// (0, 0) where no push budget fits the clock, for draws, cursed and blessed
// positions and a side already checkmated. Pawnless material has no DTC
// table; there the answer is DTZ at no pushes, as the reference gives it.
func (tb *Tablebase) DTC(ctx context.Context, pos *chess.Position) (DTC, error) {
	res, err := tb.probeOnly(ctx, pos, MetricDTC)
	if err != nil {
		return DTC{}, err
	}
	if res.HasDTC {
		return res.DTC, nil
	}
	return DTC{}, metricMissing(&res, MetricDTC)
}
