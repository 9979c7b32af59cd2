package chesstb

import (
	"context"
	"errors"
	"fmt"

	"github.com/tbfs/tbfs/chess"
)

// wdlv is the generator's class code: the five classes in rank order and
// ILLEGAL, which stands for "no answer" inside the derive.
type wdlv int8

const (
	wLose    wdlv = 0
	wBlessed wdlv = 1
	wDraw    wdlv = 2
	wCursed  wdlv = 3
	wWin     wdlv = 4
	wIllegal wdlv = 7
	dtzMax50      = 100 // the last distance inside the 50-move window
	maxDepth      = 16  // derive recursion bound, as the reference's
)

func (w wdlv) rank() int {
	if w > wWin || w < 0 {
		return -1
	}
	return int(w)
}

func (w wdlv) invert() wdlv {
	if w > wWin || w < 0 {
		return w
	}
	return wWin - w
}

// foldDTM merges cursed into win and blessed into loss: DTM ignores the
// 50-move rule.
func (w wdlv) foldDTM() wdlv {
	switch w {
	case wCursed:
		return wWin
	case wBlessed:
		return wLose
	}
	return w
}

// liftDTZ is the class a loss takes when its zeroing distance runs past the
// 50-move window.
func (w wdlv) liftDTZ() wdlv {
	if w == wLose {
		return wBlessed
	}
	return w
}

// category maps to the public -2..+2 scale.
func (w wdlv) category() int { return int(w) - 2 }

// fromStored folds a stored 4-bit code into a class; the boundary markers
// are plain wins and losses for everyone but the dropped-frame derive.
func fromStored(s uint8) (wdlv, error) {
	switch {
	case s <= storedWin:
		return wdlv(s), nil
	case s == storedBoundaryLoss:
		return wLose, nil
	case s == storedBoundaryWin:
		return wWin, nil
	case s == storedIllegal:
		return wIllegal, nil
	}
	return wIllegal, corruptf("WDL code %d", s)
}

// invertStored turns a quiet child's stored code into the mover's class. A
// boundary marker sits at the last in-rule ply, so one more ply tips the
// mover past the 50-move edge.
func invertStored(s uint8) (wdlv, error) {
	switch s {
	case storedBoundaryLoss:
		return wCursed, nil
	case storedBoundaryWin:
		return wBlessed, nil
	}
	w, err := fromStored(s)
	return w.invert(), err
}

// preferNew is the minimax order on (class, distance): a better class wins;
// in a winning class the shorter distance, in a losing one the longer.
func preferNew(nw wdlv, nd uint16, ow wdlv, od uint16) bool {
	if nw.rank() != ow.rank() {
		return nw.rank() > ow.rank()
	}
	switch nw {
	case wWin, wCursed:
		return nd < od
	case wLose, wBlessed:
		return nd > od
	}
	return false
}

// belowPinned reports whether a child offering class offer can never win a
// minimax whose result class is already known to be pinned.
func belowPinned(pinned, offer wdlv) bool {
	return pinned != wIllegal && offer.rank() < pinned.rank()
}

// skipped tracks children a derive could not price. An unknown class unpins
// the minimax outright; a known class only if it could have beaten the best.
type skipped struct {
	bestRank int
	blind    bool
}

func newSkipped() skipped                { return skipped{bestRank: -1} }
func (s *skipped) ofClass(w wdlv)        { s.bestRank = max(s.bestRank, w.rank()) }
func (s *skipped) unknown()              { s.blind = true }
func (s *skipped) unpins(best wdlv) bool { return s.blind || s.bestRank >= best.rank() }
func (s *skipped) ofDTZClass(my wdlv)    { s.ofClass(my.liftDTZ()) }

// unknownErr reports whether err only means "no answer here" (a missing
// table or a derive that could not settle), which a minimax may absorb.
func unknownErr(err error) bool {
	return errors.Is(err, ErrNoTable) || errors.Is(err, ErrUnresolved)
}

// answered reports whether a question about a position got an answer: a
// value (err nil) or a settled "unknown" (unknownErr), which a minimax may
// absorb and which the same question gives again, so a probe may remember
// it. Transport failures and corrupt data are neither.
func answered(err error) bool { return err == nil || unknownErr(err) }

var errUnresolved = fmt.Errorf("%w: a child position has no known value", ErrUnresolved)

// node is a position in its table's stored colour orientation together with
// that table's material.
type node struct {
	pos chess.Position
	mat material
}

// canonicalNode flips colours when the stronger side is Black, as the
// stored tables always have the stronger side White.
func canonicalNode(p *chess.Position) node {
	ps := pieceSetOf(p)
	m := materialOf(&ps)
	if cm, flip := m.canonical(); flip {
		return node{pos: p.Mirror(), mat: cm}
	}
	return node{pos: *p, mat: m}
}

// childNode is the node of child, reached from n by one move. A quiet move
// (no capture, no pawn move) keeps the material, the pawn structure and so
// the table and orientation of the parent; anything else is worked out
// afresh.
func (p *prober) childNode(n *node, child *chess.Position, zeroing bool) node {
	if !zeroing {
		return node{pos: *child, mat: n.mat}
	}
	return p.nodeOf(child)
}

// prober carries one probe's context and scratch move lists.
type prober struct {
	ctx   context.Context
	tb    *Tablebase
	moves [maxDepth + 2][]chess.Move
	// tabs remembers the last tables this probe opened: a rebuild asks for
	// the same few tables once per child.
	tabs    [8]proberTable
	tabNext int
	// wdlBlocks and packBlocks remember the WDL and pack blocks this
	// probe read last.
	wdlBlocks  blockMemo
	packBlocks packMemo
	// nodes holds the child a rebuild at each depth is looking at, like
	// moves: a local node whose address goes into the recursive probe
	// would be moved to the heap, one allocation per child.
	nodes [maxDepth + 2]node
	// kids holds, per depth, the children of the node rebuilt there
	// (kids.go).
	kids [maxDepth + 2]kidSet
	// kidsTop bounds the depths whose sets were built since the last
	// reset, which is all reset has to clear.
	kidsTop int
}

// childSlot is where a rebuild at depth keeps its current child. A loop at
// depth d owns slot d+1 for one child at a time; everything it hands the
// child to works at depth d+1 or deeper, so writes only slots past d+1.
// Past the last slot (never, with the depth bound) a fresh node is handed
// out rather than one shared.
func (p *prober) childSlot(depth int) *node {
	if depth+1 < len(p.nodes) {
		return &p.nodes[depth+1]
	}
	return new(node)
}

type proberTable struct {
	kind Kind
	mat  material
	t    *tableFile
}

// table is Tablebase.table with the probe's own memory in front.
func (p *prober) table(k Kind, m material) (*tableFile, error) {
	for i := range p.tabs {
		if e := &p.tabs[i]; e.t != nil && e.kind == k && e.mat == m {
			return e.t, nil
		}
	}
	t, err := p.tb.table(p.ctx, k, m)
	if err == nil {
		// No answer is read from a table before it is trusted.
		err = t.trusted(p.ctx)
	}
	if err != nil {
		return nil, err
	}
	p.tabs[p.tabNext] = proberTable{k, m, t}
	p.tabNext = (p.tabNext + 1) % len(p.tabs)
	return t, nil
}

// epCaptures returns the legal en-passant captures of pos.
func epCaptures(pos *chess.Position) []chess.Move {
	if pos.EnPassant() == chess.NoSquare {
		return nil
	}
	var out []chess.Move
	for _, m := range pos.LegalMoves(nil) {
		if m.IsEnPassant() {
			out = append(out, m)
		}
	}
	return out
}

// frameFor picks which stored frame answers n and with which piece set: the
// side to move's own frame, or for a symmetric material the other frame
// through the colour flip. derive is true when the frame was dropped and
// must be rebuilt.
func frameFor(t *tableFile, n *node) (c int, ps pieceSet, derive bool, err error) {
	stm := int(n.pos.SideToMove())
	f := &t.hdr.frames[stm]
	ps = pieceSetOf(&n.pos)
	if !f.dropped && !f.mirrored {
		return stm, ps, false, nil
	}
	if !n.mat.symmetric() {
		return stm, ps, true, nil
	}
	kept := 1 - stm
	if kf := &t.hdr.frames[kept]; kf.dropped || kf.mirrored {
		return 0, ps, false, t.fileErr(-1, corruptf("both frames dropped"))
	}
	return kept, ps.mirrored(), false, nil
}

// cellIndex is the index of ps in frame c of t (0 for a singular frame).
func cellIndex(t *tableFile, c int, ps *pieceSet) (uint64, error) {
	f := &t.hdr.frames[c]
	if f.singular {
		return 0, nil
	}
	idx, err := t.cfg.index(ps, &f.layout)
	if err != nil {
		return 0, err
	}
	if idx >= t.cfg.positions {
		return 0, t.fileErr(-1, corruptf("cell %d outside %d positions", idx, t.cfg.positions))
	}
	return idx, nil
}

// unsupportedFrame refuses the frame forms the format does not define: a
// relaxed distance frame and a loss-only WDL frame (WDL carries the class
// every derive reads). Relaxed WDL frames are raised by their bound
// (relaxed.go); loss-only distance frames rebuild their wins (packFrame,
// distance).
func unsupportedFrame(t *tableFile, c int) error {
	f := &t.hdr.frames[c]
	switch {
	case f.relaxed && t.kind != KindWDL:
		return t.fileErr(-1, fmt.Errorf("%w: relaxed %s frame", ErrUnsupported, t.kind))
	case f.lossOnly && t.kind == KindWDL:
		return t.fileErr(-1, fmt.Errorf("%w: loss-only WDL frame", ErrUnsupported))
	}
	return nil
}

// wdlNoEP is the class of n from its WDL table, ep rights ignored:
// read, read through the mirror, or rebuilt.
func (p *prober) wdlNoEP(n *node, depth int) (wdlv, error) {
	return p.wdlNoEPCell(n, depth, nil)
}

// wdlNoEPCell is wdlNoEP that also tells note (which may be nil)
// the cell it read when that cell lies in n's own frame.
func (p *prober) wdlNoEPCell(n *node, depth int, note *kid) (wdlv, error) {
	t, err := p.table(KindWDL, n.mat)
	if err != nil {
		return wIllegal, err
	}
	c, ps, derive, err := frameFor(t, n)
	if err != nil {
		return wIllegal, err
	}
	if derive {
		return p.deriveWDL(n, depth)
	}
	if err := unsupportedFrame(t, c); err != nil {
		return wIllegal, err
	}
	idx, err := cellIndex(t, c, &ps)
	if err != nil {
		return wIllegal, err
	}
	s, err := t.readWDL(p.ctx, c, idx, &p.wdlBlocks)
	if err != nil {
		return wIllegal, err
	}
	if f := &t.hdr.frames[c]; c == int(n.pos.SideToMove()) && !f.dropped && !f.mirrored && s <= storedIllegal {
		note.noteCell(t, s)
	}
	return p.wdlFromCell(t, c, s, n, depth)
}

// wdlFromCell is the class of n whose cell in frame c of t holds code s.
func (p *prober) wdlFromCell(t *tableFile, c int, s uint8, n *node, depth int) (wdlv, error) {
	w, err := fromStored(s)
	if err != nil {
		return wIllegal, t.fileErr(-1, err)
	}
	return p.raiseByBound(t, c, w, n, depth)
}

// wdlStored is the raw code of a quiet child, which always lies in the kept
// frame of the same material; the boundary markers stay intact.
func (p *prober) wdlStored(n *node, depth int) (uint8, error) {
	return p.wdlStoredCell(n, depth, nil)
}

// wdlStoredCell is wdlStored that also tells note (which may be nil) the
// cell it read.
func (p *prober) wdlStoredCell(n *node, depth int, note *kid) (uint8, error) {
	t, err := p.table(KindWDL, n.mat)
	if err != nil {
		return storedIllegal, err
	}
	c := int(n.pos.SideToMove())
	f := &t.hdr.frames[c]
	if f.dropped || f.mirrored {
		return storedIllegal, t.fileErr(-1, corruptf("quiet child lands in a dropped frame"))
	}
	if err := unsupportedFrame(t, c); err != nil {
		return storedIllegal, err
	}
	ps := pieceSetOf(&n.pos)
	idx, err := cellIndex(t, c, &ps)
	if err != nil {
		return storedIllegal, err
	}
	s, err := t.readWDL(p.ctx, c, idx, &p.wdlBlocks)
	if err == nil && s > storedIllegal {
		err = t.fileErr(-1, corruptf("WDL code %d", s))
	}
	if err != nil {
		return s, err
	}
	note.noteCell(t, s)
	return p.raiseStored(t, c, s, n, depth)
}

// wdlWithEP is the class of n with the en-passant overlay: each legal ep
// capture is one more candidate.
func (p *prober) wdlWithEP(n *node, depth int) (wdlv, error) {
	best, err := p.wdlNoEP(n, depth)
	if err != nil || best == wIllegal {
		return best, err
	}
	for _, m := range epCaptures(&n.pos) {
		child := n.pos.Play(m)
		var cw wdlv
		if cn := p.nodeOf(&child); cn.mat.bareKings() {
			cw = wDraw
		} else {
			cw, err = p.wdlNoEP(&cn, depth+1)
			if err != nil && !unknownErr(err) {
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

// deriveWDL rebuilds a dropped WDL cell by one-ply minimax. Quiet children
// stay in this material's kept frame and are read raw so a boundary marker
// can tip the extra ply; zeroing children reset the clock and may cross
// into sub-tables.
func (p *prober) deriveWDL(n *node, depth int) (wdlv, error) {
	if depth >= maxDepth {
		return wIllegal, errUnresolved
	}
	anyLegal, have := false, false
	best := wLose
	sk := newSkipped()
	ks := p.kidsOf(n, depth)
	for i := range ks.kids {
		k := &ks.kids[i]
		anyLegal = true
		var mw wdlv
		switch {
		case k.node.mat.bareKings():
			mw = wDraw
		case k.zeroing:
			cw, err := p.kidWithEP(k, depth+1)
			if err != nil && !unknownErr(err) {
				return wIllegal, err
			}
			if err != nil || cw == wIllegal {
				sk.unknown()
				continue
			}
			mw = cw.invert()
		default:
			cs, err := p.kidStored(k, depth+1)
			if err != nil && !unknownErr(err) {
				return wIllegal, err
			}
			if err != nil || cs == storedIllegal {
				sk.unknown()
				continue
			}
			if mw, err = invertStored(cs); err != nil {
				return wIllegal, err
			}
		}
		if mw.rank() > best.rank() {
			best = mw
		}
		have = true
	}
	if !anyLegal {
		if n.pos.InCheck() {
			return wLose, nil
		}
		return wDraw, nil
	}
	if !have || sk.unpins(best) {
		return wIllegal, errUnresolved
	}
	return best, nil
}
