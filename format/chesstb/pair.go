package chesstb

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"sync"

	"github.com/tbfs/tbfs/chess"
)

// This file reads opposing-pair tables ('p' materials such as KpKp). An
// opposing pair is a white and a black pawn on one file, the white one
// below; neither can pass the other, so the pair takes one 120-placement
// index dimension instead of two free-pawn ones. On the board the pair's
// pawns are ordinary pawns: the pair of a position is the opposing pair
// minimal by (file, white rank, black rank), and the table holds the same
// values as the full material. A probe prefers the pair table, node by
// node, whenever the position holds an opposing pair and that table (its
// WDL file) is present.

// pairPlacements is the number of opposing-pair placements: white on ranks
// 2..6, black strictly above on 3..7 (15 rank pairs) on each of 8 files.
const pairPlacements = 120

// pairIndex maps (white square, black square) to the placement number, file
// by file, then by white rank, then black rank; -1 for a non-pair.
var pairIndex = func() (t [64 * 64]int16) {
	for i := range t {
		t[i] = -1
	}
	n := int16(0)
	for f := 0; f < 8; f++ {
		for wr := 1; wr <= 5; wr++ {
			for br := wr + 1; br <= 6; br++ {
				t[(wr*8+f)*64+br*8+f] = n
				n++
			}
		}
	}
	return t
}()

// opposingPair returns the canonical opposing pair among the pawns wp
// (white) and bp (black): minimal by file, then white rank, then black rank.
func opposingPair(wp, bp uint64) (w, b int, ok bool) {
	best := -1
	for x := wp; x != 0; x &= x - 1 {
		ws := bits.TrailingZeros64(x)
		f, wr := ws&7, ws>>3
		for y := bp; y != 0; y &= y - 1 {
			bs := bits.TrailingZeros64(y)
			if bs&7 != f || bs>>3 <= wr || wr < 1 || bs>>3 > 6 {
				continue
			}
			key := f<<8 | wr<<4 | bs>>3
			if best < 0 || key < best {
				best, w, b = key, ws, bs
			}
		}
	}
	return w, b, best >= 0
}

// pairSlices ranks the surviving pawn cells of a pair material: cells are
// numbered pair + 120*(white + W*black) over the free pawns' combinatorial
// ranks, and a cell survives when its pawns do not collide and its pair is
// the canonical one. The slice of a position is its cell's survivor rank.
type pairSlices struct {
	nw, nb   int
	wSize    uint64 // C(48, nw)
	bits     []uint64
	before   []uint32 // survivors before each 64-cell word
	survived uint64
}

// pairCells caches the survivor tables by free-pawn counts.
var pairCells sync.Map // [2]int -> *pairSlices

func pairSlicesFor(nw, nb int) (*pairSlices, error) {
	if nw+nb > 3 {
		return nil, fmt.Errorf("opposing-pair material with %d free pawns", nw+nb)
	}
	key := [2]int{nw, nb}
	if v, ok := pairCells.Load(key); ok {
		return v.(*pairSlices), nil
	}
	ps := &pairSlices{nw: nw, nb: nb, wSize: binomial[48][nw]}
	bSize := binomial[48][nb]
	cells := pairPlacements * ps.wSize * bSize
	ps.bits = make([]uint64, (cells+63)/64)
	whites := placements(nw)
	blacks := placements(nb)
	cart := uint64(0)
	for _, bp := range blacks {
		for _, wp := range whites {
			for p := 0; p < pairPlacements; p++ {
				pw, pb := pairSquares(p)
				pocc := uint64(1)<<pw | uint64(1)<<pb
				if wp&bp == 0 && pocc&(wp|bp) == 0 {
					if cw, cb, _ := opposingPair(wp|1<<pw, bp|1<<pb); cw == pw && cb == pb {
						ps.bits[cart>>6] |= 1 << (cart & 63)
					}
				}
				cart++
			}
		}
	}
	ps.before = make([]uint32, len(ps.bits))
	var run uint32
	for i, w := range ps.bits {
		ps.before[i] = run
		run += uint32(bits.OnesCount64(w))
	}
	ps.survived = uint64(run)
	v, _ := pairCells.LoadOrStore(key, ps)
	return v.(*pairSlices), nil
}

// placements lists every placement of n pawns on ranks 2..7, in
// combinatorial-rank order.
func placements(n int) []uint64 {
	out := make([]uint64, binomial[48][n])
	var rec func(start, left int, b uint64)
	rec = func(start, left int, b uint64) {
		if left == 0 {
			out[colexRank(b, 8)] = b
			return
		}
		for sq := start; sq < 56; sq++ {
			rec(sq+1, left-1, b|1<<sq)
		}
	}
	rec(8, n, 0)
	return out
}

func pairSquares(p int) (w, b int) {
	f := p / 15
	r := p % 15
	wr := 1
	for span := 5; r >= span; span-- {
		r -= span
		wr++
	}
	return wr*8 + f, (wr+1+r)*8 + f
}

// slice returns the pawn slice of the transformed pawns wp, bp.
func (ps *pairSlices) slice(wp, bp uint64) (uint64, error) {
	pw, pb, ok := opposingPair(wp, bp)
	if !ok {
		return 0, fmt.Errorf("%w: no opposing pawn pair", errOutsideDomain)
	}
	wp &^= 1 << pw
	bp &^= 1 << pb
	if popcount(wp) != ps.nw || popcount(bp) != ps.nb {
		return 0, fmt.Errorf("%w: pawns do not match the material", errOutsideDomain)
	}
	p := uint64(pairIndex[pw*64+pb])
	cart := p + pairPlacements*(colexRank(wp, 8)+ps.wSize*colexRank(bp, 8))
	if ps.bits[cart>>6]>>(cart&63)&1 == 0 {
		return 0, fmt.Errorf("%w: pawn cell has no storage", errOutsideDomain)
	}
	return uint64(ps.before[cart>>6]) + uint64(bits.OnesCount64(ps.bits[cart>>6]&(1<<(cart&63)-1))), nil
}

// pairMaterial is the 'p' material of pos when it holds an opposing pair:
// its pieces without the pair's two pawns, flagged as a pair material, in
// its stored colour orientation (flip reports a colour swap).
func pairMaterial(pos *chess.Position) (m material, flip, ok bool) {
	wp, bp := uint64(pos.Pieces(chess.White, chess.Pawn)), uint64(pos.Pieces(chess.Black, chess.Pawn))
	if _, _, ok := opposingPair(wp, bp); !ok {
		return m, false, false
	}
	ps := pieceSetOf(pos)
	m = materialOf(&ps)
	m.n[0][chess.Pawn]--
	m.n[1][chess.Pawn]--
	m.pair = true
	cm, flip := m.canonical()
	return cm, flip, true
}

// nodeOf is the node a probe reads pos from: the opposing-pair table when
// pos holds a pair and that table is present, else its full material. A
// pair table that fails to open for another reason than absence is still
// chosen, so the read that follows reports the failure.
func (p *prober) nodeOf(pos *chess.Position) node {
	return p.tb.nodeOf(p.ctx, pos)
}

func (tb *Tablebase) nodeOf(ctx context.Context, pos *chess.Position) node {
	if m, flip, ok := pairMaterial(pos); ok {
		if _, err := tb.table(ctx, KindWDL, m); !errors.Is(err, ErrNoTable) {
			if flip {
				return node{pos: pos.Mirror(), mat: m}
			}
			return node{pos: *pos, mat: m}
		}
	}
	return canonicalNode(pos)
}
