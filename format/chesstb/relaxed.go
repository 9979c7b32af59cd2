package chesstb

// This file reads relaxed WDL frames. A relaxed cell stores a bound rather
// than its class: the probe answers the better of the stored code and the
// best class a capture or promotion reaches. Captures and promotions leave
// the material, so the bound never re-enters the frame it resolves.

// relaxBound is the best class for the side to move among the captures and
// promotions of n, wIllegal when none has a known value.
func (p *prober) relaxBound(n *node, depth int) (wdlv, error) {
	if depth >= maxDepth {
		return wIllegal, nil
	}
	best := wIllegal
	ks := p.kidsOf(n, depth)
	for i := range ks.kids {
		k := &ks.kids[i]
		if !isConversion(&n.pos, k.move) {
			continue
		}
		cn, memo := p.canonical(ks, k, p.childSlot(depth))
		cw := wDraw
		if !cn.mat.bareKings() {
			var err error
			cw, err = p.childWithEP(k, memo, cn, depth+1)
			if !answered(err) {
				return wIllegal, err
			}
			if err != nil || cw == wIllegal {
				continue
			}
		}
		if mine := cw.invert(); mine.rank() > best.rank() {
			best = mine
		}
	}
	return best, nil
}

// raiseByBound applies frame c's relaxation, if any, to the stored class of
// n: the max of the stored class and the capture/promotion bound.
func (p *prober) raiseByBound(t *tableFile, c int, stored wdlv, n *node, depth int) (wdlv, error) {
	if !t.hdr.frames[c].relaxed || stored == wIllegal {
		return stored, nil
	}
	b, err := p.relaxBound(n, depth)
	if err != nil {
		return wIllegal, err
	}
	if b.rank() > stored.rank() {
		return b, nil
	}
	return stored, nil
}

// raiseStored is raiseByBound for a raw stored code, as a quiet child is
// read in a dropped-frame rebuild: the boundary markers never relax, the
// rebuild reading them as they are.
func (p *prober) raiseStored(t *tableFile, c int, s uint8, n *node, depth int) (uint8, error) {
	if !t.hdr.frames[c].relaxed || s == storedIllegal || s == storedBoundaryWin || s == storedBoundaryLoss {
		return s, nil
	}
	w, err := fromStored(s)
	if err != nil {
		return s, err
	}
	r, err := p.raiseByBound(t, c, w, n, depth)
	if err != nil || r == wIllegal {
		return s, err
	}
	return uint8(r), nil
}
