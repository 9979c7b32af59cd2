package chesstb

import "github.com/tbfs/tbfs/chess"

// This file reads and rebuilds the two rank-table distance metrics, DTZ and
// DTM. Both store per cell a frequency rank whose value is the distance in
// a compact form: DTZ halves cursed/blessed distances in the 1-byte tier,
// DTM halves every distance using its parity (wins odd, losses even). The
// class always comes from the material's own WDL companion.

// dtzFromStored undoes the DTZ storage transform for class w.
func dtzFromStored(s uint16, w wdlv, entryBytes int) (uint16, error) {
	switch w {
	case wDraw:
		return 0, nil
	case wCursed, wBlessed:
		if entryBytes == 1 {
			if s == 0 {
				return 0, corruptf("cursed-band DTZ stored as 0")
			}
			return 2*s - 1, nil
		}
	}
	return s, nil
}

// dtmFromStored undoes the DTM parity halving for class w.
func dtmFromStored(s uint16, w wdlv) uint16 {
	switch w {
	case wWin, wCursed:
		return 2*s + 1
	case wLose, wBlessed:
		return 2 * s
	}
	return 0
}

// distance reads the kind-k (DTZ or DTM) distance of n, whose class is w,
// rebuilding it when n's frame was dropped. ok is false when the value is
// unknown (missing table, unresolved derive); err reports real failures.
func (p *prober) distance(k Kind, n *node, w wdlv, depth int) (uint16, error) {
	if w == wDraw {
		return 0, nil
	}
	t, err := p.table(k, n.mat)
	if err != nil {
		return 0, err
	}
	c, ps, derive, err := frameFor(t, n)
	if err != nil {
		return 0, err
	}
	if t.hdr.frames[c].lossOnly && (w == wWin || w == wCursed) {
		derive = true // a loss-only frame prices losses only
	}
	if derive {
		if k == KindDTZ {
			return p.deriveDTZ(n, w, depth)
		}
		return p.deriveDTM(n, w, depth)
	}
	if err := unsupportedFrame(t, c); err != nil {
		return 0, err
	}
	idx, err := cellIndex(t, c, &ps)
	if err != nil {
		return 0, err
	}
	f := &t.hdr.frames[c]
	s, skip, err := t.readRank(p.ctx, c, idx)
	if err != nil {
		return 0, err
	}
	if skip {
		// A skipped block holds only draws and illegal cells, which the
		// class has already ruled out (the reference answers 0 here): the
		// two tables disagree.
		return 0, t.fileErr(-1, invariantf("a class-%d cell in a block stored empty", w))
	}
	var v uint16
	if k == KindDTM {
		v = dtmFromStored(s, w)
	} else {
		eb := f.entryBytes
		if f.singular {
			eb = 1
		}
		if v, err = dtzFromStored(s, w, eb); err != nil {
			return 0, t.fileErr(-1, err)
		}
	}
	if err := checkDistanceCell(k, s, v, w, n); err != nil {
		return 0, t.fileErr(-1, err)
	}
	return v, nil
}

// deriveDTZ rebuilds a dropped DTZ cell of class w by one-ply minimax: a
// zeroing move ends the count at one ply, a quiet move waits one ply longer
// than the child.
func (p *prober) deriveDTZ(n *node, w wdlv, depth int) (uint16, error) {
	if depth >= maxDepth {
		return 0, errUnresolved
	}
	forced := w == wLose // every child is then a clean win for the opponent
	anyLegal, have := false, false
	bestW, bestD := wLose, uint16(0)
	sk := newSkipped()
	ks := p.kidsOf(n, depth)
	for i := range ks.kids {
		k := &ks.kids[i]
		anyLegal = true
		zeroing := k.zeroing
		cn := &k.node
		var cw wdlv
		var myD uint16
		switch {
		case cn.mat.bareKings():
			cw, myD = wDraw, 1
		case zeroing:
			cw = wWin
			if !forced {
				var err error
				cw, err = p.kidWithEP(k, depth+1)
				if err != nil && !unknownErr(err) {
					return 0, err
				}
				if err != nil || cw == wIllegal {
					sk.unknown()
					continue
				}
			}
			myD = 1
		default:
			cw = wWin
			if !forced {
				var err error
				cw, err = p.kidWDL(k, depth+1)
				if err != nil && !unknownErr(err) {
					return 0, err
				}
				if err != nil || cw == wIllegal {
					sk.unknown()
					continue
				}
				if belowPinned(w, cw.invert().liftDTZ()) {
					continue
				}
			}
			cd, err := p.distance(KindDTZ, cn, cw, depth+1)
			if err != nil {
				if !unknownErr(err) {
					return 0, err
				}
				sk.ofDTZClass(cw.invert())
				continue
			}
			myD = 1 + cd
		}
		myW := cw.invert()
		if myD > dtzMax50 {
			switch myW {
			case wWin:
				myW = wCursed
			case wLose:
				myW = wBlessed
			}
		}
		if !have || preferNew(myW, myD, bestW, bestD) {
			bestW, bestD, have = myW, myD, true
		}
	}
	if !anyLegal {
		return 0, nil
	}
	if !have || sk.unpins(bestW) {
		return 0, errUnresolved
	}
	if bestW == wDraw {
		return 0, nil
	}
	return bestD, nil
}

// deriveDTM rebuilds a dropped DTM cell of class w by one-ply minimax over
// mate distances (cursed and blessed fold to win and loss).
func (p *prober) deriveDTM(n *node, w wdlv, depth int) (uint16, error) {
	if depth >= maxDepth {
		return 0, errUnresolved
	}
	pinned := w.foldDTM()
	forced := pinned == wLose
	anyLegal, have := false, false
	bestW, bestD := wLose, uint16(0)
	sk := newSkipped()
	ks := p.kidsOf(n, depth)
	for i := range ks.kids {
		k := &ks.kids[i]
		anyLegal = true
		cn := &k.node
		var cw wdlv
		var cd uint16
		switch {
		case cn.mat.bareKings():
			cw, cd = wDraw, 0
		case cn.pos.EnPassant() != chess.NoSquare:
			// The child's own cell knows nothing of the ep capture it
			// offers, so it answers through the full probe with overlay.
			cr, err := p.probeWithEP(cn, wantDTM, depth+1)
			if err != nil {
				if !unknownErr(err) {
					return 0, err
				}
				sk.unknown()
				continue
			}
			if !cr.hasDTM {
				if cr.dtmErr != nil && !unknownErr(cr.dtmErr) {
					return 0, cr.dtmErr
				}
				sk.ofClass(cr.wdl.foldDTM().invert())
				continue
			}
			cw, cd = cr.wdl, cr.dtm
		default:
			cw = wWin
			if !forced {
				var err error
				cw, err = p.kidWDL(k, depth+1)
				if err != nil && !unknownErr(err) {
					return 0, err
				}
				if err != nil || cw == wIllegal {
					sk.unknown()
					continue
				}
				if belowPinned(pinned, cw.foldDTM().invert()) {
					continue
				}
			}
			d, err := p.distance(KindDTM, cn, cw, depth+1)
			if err != nil {
				if !unknownErr(err) {
					return 0, err
				}
				sk.ofClass(cw.foldDTM().invert())
				continue
			}
			cd = d
		}
		myW := cw.foldDTM().invert()
		myD := 1 + cd
		if !have || preferNew(myW, myD, bestW, bestD) {
			bestW, bestD, have = myW, myD, true
		}
	}
	if !anyLegal {
		return 0, nil
	}
	if !have || sk.unpins(bestW) {
		return 0, errUnresolved
	}
	if bestW == wWin || bestW == wLose {
		return bestD, nil
	}
	return 0, nil
}
