package chesstb

import (
	"context"
	"fmt"
	"math/bits"
	"sync"

	"github.com/tbfs/tbfs/chess"
)

// This file inverts index.go: from a cell number back to the men it stands
// for, and how many board placements the cell represents. The generator
// counts real positions (its .info totals) by giving every cell the size of
// the symmetry orbit it is the canonical member of, and zero when two men
// share a square or when the cell is the unused twin of a diagonal-symmetric
// placement; orbitWeight reproduces that so a table can be recounted.

// kingPairs lists, per king slice, the canonical (white king, black king)
// pair: the one stored with the identity transform.
var kingPairs = [2]func() []uint16{
	sync.OnceValue(func() []uint16 { return canonicalKingPairs(kingTables[fileMirror]()) }),
	sync.OnceValue(func() []uint16 { return canonicalKingPairs(kingTables[dihedral]()) }),
}

func canonicalKingPairs(ks *kingSlices) []uint16 {
	out := make([]uint16, ks.n)
	for i, e := range ks.lookup {
		if e.slice >= 0 && e.t == 0 {
			out[e.slice] = uint16(i)
		}
	}
	return out
}

// colexUnrank returns the k-square set whose colex rank (squares counted
// from base) is r; it inverts colexRank.
func colexUnrank(r uint64, k, base int) uint64 {
	var b uint64
	top := 63 - base
	for i := k; i >= 1; i-- {
		c := top
		if i == 1 {
			c = int(r) // C(c, 1) = c
		}
		for binomial[c][i] > r {
			c--
		}
		r -= binomial[c][i]
		b |= 1 << uint(c+base)
		top = c - 1
	}
	return b
}

// unrank returns the men of cell idx in the stored colour orientation
// (ps.stm is left White; the caller knows the frame) and the number of real
// placements the generator credits the cell with: 0 for a cell whose men
// collide or that is the non-canonical twin of a diagonal-symmetric
// placement, else the orbit size (2 with pawns; 8, or 4 when the diagonal
// flip fixes the placement, without).
func (cfg *indexConfig) unrank(idx uint64, l *layout) (ps pieceSet, weight int, err error) {
	if idx >= cfg.positions {
		return ps, 0, fmt.Errorf("cell %d outside the %d-cell index of %s", idx, cfg.positions, cfg.mat.name())
	}
	if cfg.pairs != nil {
		return ps, 0, fmt.Errorf("%w: recounting opposing-pair material %s", ErrUnsupported, cfg.mat.name())
	}
	pawnSlice, rem := idx/cfg.pawnStride, idx%cfg.pawnStride
	kingSlice, within := rem/cfg.withinSize, rem%cfg.withinSize
	pair := kingPairs[cfg.sym]()[kingSlice]
	wk, bk := int(pair>>6), int(pair&63)
	ps.bb[0][chess.King] = 1 << uint(wk)
	ps.bb[1][chess.King] = 1 << uint(bk)
	occ := ps.bb[0][chess.King] | ps.bb[1][chess.King]
	collide := false
	place := func(c int, pt chess.PieceType, b uint64) {
		ps.bb[c][pt] = b
		if occ&b != 0 {
			collide = true
		}
		occ |= b
	}
	if cfg.nw+cfg.nb > 0 {
		bp := colexUnrank(pawnSlice/cfg.perBlack, cfg.nb, 8)
		reduced := colexUnrank(pawnSlice%cfg.perBlack, cfg.nw, 0)
		place(1, chess.Pawn, bp)
		place(0, chess.Pawn, expandReduced(reduced, bp))
	}
	var cls [8]uint64
	for i := range l.n {
		ci := l.order[i]
		c := cfg.classes[ci]
		cls[ci] = colexUnrank(within%l.radix[i], c.count, 0)
		within /= l.radix[i]
		place(c.color, c.pt, cls[ci])
	}
	switch {
	case collide:
		return ps, 0, nil
	case cfg.sym == fileMirror:
		return ps, 2, nil
	case !cfg.kings.lookup[wk*64+bk].stab:
		return ps, 8, nil
	}
	var cur, alt uint64
	for i, c := range cfg.classes {
		cur += c.weight * colexRank(cls[i], 0)
		alt += c.weight * colexRank(diagTransform.applyBB(cls[i]), 0)
	}
	switch {
	case alt > cur:
		return ps, 8, nil
	case alt == cur:
		return ps, 4, nil
	}
	return ps, 0, nil
}

// expandReduced maps reduced white-pawn coordinates (the order among pawn
// squares a2..h7 left free by the black pawns) back to squares; it inverts
// reducedRank.
func expandReduced(reduced, bp uint64) uint64 {
	var out uint64
	for reduced != 0 {
		sq := 8 + bits.TrailingZeros64(reduced)
		reduced &= reduced - 1
		// Every black pawn at or below the candidate square pushes it up
		// one; black pawns come out in ascending order.
		for b := bp; b != 0; b &= b - 1 {
			if bits.TrailingZeros64(b) <= sq {
				sq++
			}
		}
		out |= 1 << uint(sq)
	}
	return out
}

// kingAttacked reports whether side's king in ps stands attacked by the
// other side's men. The generator marks a placement illegal exactly when
// the side not to move is in check: it could be captured.
func (ps *pieceSet) kingAttacked(side int) bool {
	them := 1 - side
	var occ uint64
	for c := range 2 {
		for pt := chess.Pawn; pt <= chess.King; pt++ {
			occ |= ps.bb[c][pt]
		}
	}
	k := chess.Square(bits.TrailingZeros64(ps.bb[side][chess.King]))
	o := chess.Bitboard(occ)
	b := &ps.bb[them]
	return uint64(chess.KnightAttacks(k))&b[chess.Knight] != 0 ||
		uint64(chess.KingAttacks(k))&b[chess.King] != 0 ||
		uint64(chess.PawnAttacks(chess.Color(side), k))&b[chess.Pawn] != 0 ||
		uint64(chess.BishopAttacks(k, o))&(b[chess.Bishop]|b[chess.Queen]) != 0 ||
		uint64(chess.RookAttacks(k, o))&(b[chess.Rook]|b[chess.Queen]) != 0
}

// errNotRecountable marks a WDL frame whose cells do not say the class of
// every position: relaxed bounds, or boundary markers.
var errNotRecountable = fmt.Errorf("%w: WDL frame holds bounds, not classes", ErrUnsupported)

// recountWDL counts the real positions of stored WDL frame c by class, the
// way the generator's .info totals count them. Illegal placements are told
// by the generator's rule (the side not to move is in check), not by the
// stored code: the generator fills many illegal cells with whatever value
// compresses best, and skipped blocks and singular frames do not store
// them at all. A legal placement must hold a class; one stored ILLEGAL is
// reported as corrupt.
func (t *tableFile) recountWDL(ctx context.Context, c int) (ColorCounts, error) {
	var n ColorCounts
	f := &t.hdr.frames[c]
	if t.kind != KindWDL || (!f.stored() && !f.singular) {
		return n, fmt.Errorf("%w: recounting a %s frame that is not stored", ErrUnsupported, t.name)
	}
	if f.relaxed {
		return n, errNotRecountable
	}
	cfg := t.cfg
	total := cfg.positions
	// A singular frame stores no index permutation; every cell holds the
	// same value, so any layout visits the same placements.
	l := f.layout
	if f.singular {
		var err error
		if l, err = cfg.layoutFor(0); err != nil {
			return n, t.fileErr(-1, corruptf("%v", err))
		}
	}
	var cells uint64 = 2 * f.blockSize
	if f.singular {
		cells = total
	}
	for start := uint64(0); start < total; start += cells {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		var data []byte
		known := f.singular
		b := start / cells
		if !f.singular && !f.skipBlock(b) {
			comp, err := t.readCompressed(ctx, c, b)
			if err != nil {
				return n, t.fileErr(int64(b), err)
			}
			if data, err = decodeLZ4(comp, f.dict, f.blockBytes(b)); err != nil {
				return n, t.fileErr(int64(b), err)
			}
			known = true
		}
		end := min(start+cells, total)
		for idx := start; idx < end; idx++ {
			ps, w, err := cfg.unrank(idx, &l)
			if err != nil {
				return n, err
			}
			if w == 0 {
				continue
			}
			if ps.kingAttacked(1 - c) {
				n.Illegal += uint64(w)
				continue
			}
			code := uint8(storedDraw)
			switch {
			case f.singular:
				code = f.single
			case known:
				off := (idx - start) / 2
				if off >= uint64(len(data)) {
					return n, t.fileErr(int64(b), corruptf("cell %d past the decoded block", idx))
				}
				code = data[off] >> (4 * (idx & 1)) & 0xF
			}
			switch code {
			case storedWin, storedCursedWin:
				n.Win += uint64(w)
			case storedDraw:
				n.Draw += uint64(w)
			case storedLose, storedBlessedLoss:
				n.Lose += uint64(w)
			case storedIllegal:
				return n, t.fileErr(int64(b), corruptf("cell %d of a legal placement stores ILLEGAL", idx))
			default:
				return n, errNotRecountable
			}
		}
	}
	return n, nil
}
