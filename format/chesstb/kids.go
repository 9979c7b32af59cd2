package chesstb

import (
	"context"
	"sync"

	"github.com/tbfs/tbfs/chess"
)

// This file holds a probe's memory of the children it has walked. One probe
// of a dropped-frame cell rebuilds the same node several times over the
// same children: the WDL class first, then the flat DTM50 layer, the layer
// at the clock, DTZ, DTC. Without a memory each rebuild would generate the
// legal moves again, play every move, work out every child's node and read
// every child's class again. A kidSet keeps the moves, the child nodes and
// the child classes of one node, so the later rebuilds reuse what the first
// one found.
//
// Correctness rests on three points. A set is valid for exactly one node:
// it is looked up by comparing the whole parent node (board, side, castling,
// en-passant square, clocks and material), never a hash. A child's answers
// are remembered only as answers of one function of that exact child node at
// one depth (every rebuild at depth d asks its children at depth d+1), and
// those functions depend on nothing else for the length of one probe. And a
// prober, with its sets, is emptied before every probe (getProber), so no
// answer outlives the probe that found it.

// kidSet is one node's legal moves, en passant left out as legal leaves it,
// and what the probe has learnt about the children they lead to.
type kidSet struct {
	valid  bool
	parent node
	// parentCanon says whether parent is what nodeOf gives for its own
	// position (canonUnknown until a rebuild asks for nodeOf's nodes).
	parentCanon uint8
	kids        []kid
}

// kid is one child of a kidSet's parent. node is the child as childNode
// gives it (the parent's material unchanged after a quiet move, worked out
// afresh after a zeroing one); every remembered answer is an answer for
// that node.
type kid struct {
	move    chess.Move
	zeroing bool
	node    node

	// canon says whether nodeOf of the child is node too (canonUnknown
	// until asked). A zeroing move's node is nodeOf's by construction. A
	// quiet move keeps the parent's material and pawns, so when the parent
	// is nodeOf's own node, nodeOf finds the same material (the same pair
	// table or none) in the same colour orientation for the child, which
	// is then node; otherwise the rebuilds that want nodeOf's node get it
	// without memory.
	canon uint8

	have      kidFacts
	wdl       wdlv  // wdlNoEP(node)
	wdlErr    error // an unknownErr, or nil
	withEP    wdlv  // wdlWithEP(node), for a child with an en-passant square
	withEPErr error
	stored    uint8 // wdlStored(node)
	stErr     error
	// cellT and cellS are the child's own-frame cell as read from its WDL
	// table (frame = side to move, neither dropped nor mirrored), before
	// any relaxation: wdlNoEP and wdlStored both start from it.
	cellT *tableFile
	cellS uint8
}

const (
	canonUnknown uint8 = iota
	canonSame
	canonOther
)

// kidFacts says which of a kid's answers are known.
type kidFacts uint8

const (
	haveWDL kidFacts = 1 << iota
	haveWithEP
	haveStored
	haveCell
)

// kidsOf returns the children of n for a rebuild at depth, built on first
// use and reused while n stays the node at that depth. The set must not be
// kept past the rebuild's loop: another node at the same depth replaces it.
func (p *prober) kidsOf(n *node, depth int) *kidSet {
	var ks *kidSet
	if depth < len(p.kids) {
		ks = &p.kids[depth]
		if ks.valid && ks.parent == *n {
			return ks
		}
	} else {
		ks = new(kidSet)
	}
	ks.valid = false
	p.kidsTop = max(p.kidsTop, min(depth+1, len(p.kids)))
	d := min(depth, len(p.moves)-1)
	ms := n.pos.LegalMoves(p.moves[d][:0])
	p.moves[d] = ms
	kids := ks.kids[:0]
	for _, m := range ms {
		if m.IsEnPassant() {
			continue // priced by the ep overlay, never by a rebuild
		}
		// Fill the next slot in place: a kid is large, and what it
		// remembers is cleared by have alone.
		if len(kids) < cap(kids) {
			kids = kids[:len(kids)+1]
		} else {
			kids = append(kids, kid{})
		}
		k := &kids[len(kids)-1]
		k.move = m
		k.zeroing = n.pos.IsZeroing(m)
		child := n.pos.Play(m)
		k.node = p.childNode(n, &child, k.zeroing)
		k.canon = canonUnknown
		if k.zeroing {
			k.canon = canonSame
		}
		k.have = 0
	}
	ks.kids = kids
	ks.parent = *n
	ks.parentCanon = canonUnknown
	ks.valid = true
	return ks
}

// canonical returns the child k of ks as nodeOf gives it, and whether the
// kid's memory answers for it (the two nodes are equal). Where they differ,
// nodeOf's node is worked out into scratch on every call.
func (p *prober) canonical(ks *kidSet, k *kid, scratch *node) (*node, bool) {
	if k.canon == canonUnknown {
		if ks.parentCanon == canonUnknown {
			ks.parentCanon = canonOther
			if p.nodeOf(&ks.parent.pos) == ks.parent {
				ks.parentCanon = canonSame
			}
		}
		if ks.parentCanon == canonSame {
			k.canon = canonSame // a quiet child of nodeOf's own node
		} else if *scratch = p.nodeOf(&k.node.pos); *scratch == k.node {
			k.canon = canonSame
		} else {
			k.canon = canonOther
		}
	}
	if k.canon == canonSame {
		return &k.node, true
	}
	*scratch = p.nodeOf(&k.node.pos)
	return scratch, false
}

// kidWDL is wdlNoEP(&k.node, depth), remembered.
func (p *prober) kidWDL(k *kid, depth int) (wdlv, error) {
	if k.have&haveWDL != 0 {
		return k.wdl, k.wdlErr
	}
	var w wdlv
	var err error
	if k.have&haveCell != 0 {
		w, err = p.wdlFromCell(k.cellT, int(k.node.pos.SideToMove()), k.cellS, &k.node, depth)
	} else {
		w, err = p.wdlNoEPCell(&k.node, depth, k)
	}
	if answered(err) {
		k.wdl, k.wdlErr = w, err
		k.have |= haveWDL
	}
	return w, err
}

// kidWithEP is wdlWithEP(&k.node, depth), remembered. Without an en-passant
// square the overlay has nothing to add, so it is kidWDL.
func (p *prober) kidWithEP(k *kid, depth int) (wdlv, error) {
	if k.node.pos.EnPassant() == chess.NoSquare {
		return p.kidWDL(k, depth)
	}
	if k.have&haveWithEP != 0 {
		return k.withEP, k.withEPErr
	}
	w, err := p.wdlWithEP(&k.node, depth)
	if answered(err) {
		k.withEP, k.withEPErr = w, err
		k.have |= haveWithEP
	}
	return w, err
}

// kidStored is wdlStored(&k.node, depth), remembered.
func (p *prober) kidStored(k *kid, depth int) (uint8, error) {
	if k.have&haveStored != 0 {
		return k.stored, k.stErr
	}
	var s uint8
	var err error
	if k.have&haveCell != 0 {
		s, err = p.raiseStored(k.cellT, int(k.node.pos.SideToMove()), k.cellS, &k.node, depth)
	} else {
		s, err = p.wdlStoredCell(&k.node, depth, k)
	}
	if answered(err) {
		k.stored, k.stErr = s, err
		k.have |= haveStored
	}
	return s, err
}

// childWDL is wdlNoEP(cn, depth) for the child k, through k's memory
// when memo says it answers for cn.
func (p *prober) childWDL(k *kid, memo bool, cn *node, depth int) (wdlv, error) {
	if memo {
		return p.kidWDL(k, depth)
	}
	return p.wdlNoEP(cn, depth)
}

// childWithEP is wdlWithEP(cn, depth) for the child k, through k's memory when
// memo says it answers for cn.
func (p *prober) childWithEP(k *kid, memo bool, cn *node, depth int) (wdlv, error) {
	if memo {
		return p.kidWithEP(k, depth)
	}
	return p.wdlWithEP(cn, depth)
}

// noteCell records a child's own-frame cell; k may be nil.
func (k *kid) noteCell(t *tableFile, s uint8) {
	if k != nil {
		k.cellT, k.cellS = t, s
		k.have |= haveCell
	}
}

var proberPool = sync.Pool{New: func() any { return new(prober) }}

// getProber hands out an empty prober for one probe; putProber takes it
// back. The pool keeps the move lists and child sets grown by earlier
// probes, and reset makes them forget what they knew.
func (tb *Tablebase) getProber(ctx context.Context) *prober {
	p := proberPool.Get().(*prober)
	p.reset(ctx, tb)
	return p
}

func putProber(p *prober) {
	p.reset(nil, nil)
	proberPool.Put(p)
}

// reset readies p for a probe of tb: no table, block or child it
// remembers from an earlier probe stays valid.
func (p *prober) reset(ctx context.Context, tb *Tablebase) {
	p.ctx, p.tb = ctx, tb
	p.tabs = [len(p.tabs)]proberTable{}
	p.tabNext = 0
	p.wdlBlocks.reset()
	p.packBlocks = packMemo{}
	for i := range p.kids[:p.kidsTop] {
		p.kids[i].valid = false
	}
	p.kidsTop = 0
}
