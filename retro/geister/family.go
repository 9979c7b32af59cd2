package geister

import (
	"math/bits"

	geistertb "github.com/tbfs/tbfs/format/geister"
	"github.com/tbfs/tbfs/geister"
)

// family holds the boards shared by the positions one move away from a
// position p, without a capture: p's board turned round (bits reversed)
// with the roles swapped, before the moving piece moves. For p's children
// the moving piece is one of the family's opponent pieces (p's own), for
// p's parents one of the family's own pieces (p's opponent's). Keeping the
// half boards of the three piece sets lets each neighbour be ranked after
// toggling two squares, where Play or Unmoves and Rank would rebuild every
// board and half board, and the builder ranks tens of billions of them.
type family struct {
	m                            geistertb.Material // the neighbours' material
	ownBlue, ownRed, opp, oppRed uint64
	a, b, u                      geistertb.Halves // halves of ownBlue, ownRed, opp
}

// turn returns the family of p's neighbours.
func turn(p geister.Position) family {
	f := family{
		m:       geistertb.Material{PB: bits.OnesCount64(p.OppBlue), PR: bits.OnesCount64(p.OppRed), OB: bits.OnesCount64(p.OwnBlue), OR: bits.OnesCount64(p.OwnRed)},
		ownBlue: bits.Reverse64(p.OppBlue),
		ownRed:  bits.Reverse64(p.OppRed),
		opp:     bits.Reverse64(p.OwnBlue | p.OwnRed),
		oppRed:  bits.Reverse64(p.OwnRed),
	}
	f.a, f.b, f.u = geistertb.HalvesOf(f.ownBlue), geistertb.HalvesOf(f.ownRed), geistertb.HalvesOf(f.opp)
	return f
}

// child returns the index of p.Play(mv) for a move mv of p that captures
// nothing (red says whether the moving piece is red), where f is turn(p).
func (f *family) child(rk *geistertb.Ranker, mv geister.Move, red bool) uint64 {
	// Turning the board maps bit s to bit 63-s.
	from, to := 63-mv.From, 63-mv.To
	flip := uint64(1)<<from | uint64(1)<<to
	oppRed := f.oppRed
	if red {
		oppRed ^= flip
	}
	idx, _ := rk.RankHalves(f.m, f.a, f.b, f.u.Toggle(from).Toggle(to), f.opp^flip, oppRed)
	return idx
}

// parent returns the parent of x, where f is turn(x), in which the piece
// of the parent's side to move on square to came from square from (empty
// in x), with its index and whether the index stands for its mirror image.
func (f *family) parent(rk *geistertb.Ranker, to, from geister.Square) (q geister.Position, idx uint64, mirrored bool) {
	q = f.parentPosition(to, from)
	a, b := f.a, f.b
	if f.ownBlue&(1<<to) != 0 {
		a = a.Toggle(to).Toggle(from)
	} else {
		b = b.Toggle(to).Toggle(from)
	}
	idx, mirrored = rk.RankHalves(f.m, a, b, f.u, f.opp, f.oppRed)
	return q, idx, mirrored
}

// parentPosition is the position of parent without its index.
func (f *family) parentPosition(to, from geister.Square) geister.Position {
	flip := uint64(1)<<to | uint64(1)<<from
	q := geister.Position{OwnBlue: f.ownBlue, OwnRed: f.ownRed, OppBlue: f.opp &^ f.oppRed, OppRed: f.oppRed}
	if f.ownBlue&(1<<to) != 0 {
		q.OwnBlue ^= flip
	} else {
		q.OwnRed ^= flip
	}
	return q
}

// step is a move of a piece from one square to another.
type step struct{ from, to geister.Square }

// parentSteps appends to buf every move without a capture that leads to x,
// where f is turn(x): a piece of the parent's side to move now on square
// to stepped there from the empty square from. These are the parents
// Unmoves gives that have as many pieces as x.
func (f *family) parentSteps(buf []step) []step {
	own := f.ownBlue | f.ownRed
	empty := geister.BoardMask &^ (own | f.opp)
	for pieces := own; pieces != 0; pieces &= pieces - 1 {
		to := geister.Square(bits.TrailingZeros64(pieces))
		b := uint64(1) << to
		// The board mask leaves a border on every side, so a step never
		// wraps to a valid square.
		for froms := (b<<8 | b>>8 | b<<1 | b>>1) & empty; froms != 0; froms &= froms - 1 {
			buf = append(buf, step{from: geister.Square(bits.TrailingZeros64(froms)), to: to})
		}
	}
	return buf
}
