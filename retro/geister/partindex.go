package geister

import (
	"math/bits"

	geistertb "github.com/tbfs/tbfs/format/geister"
	"github.com/tbfs/tbfs/geister"
)

// The partitioned build's index, for a material with one red a side. A
// position is split by where the two red ghosts stand: the side to move's
// red on one of the 18 squares of the left half (columns A..C; a position
// with its red on the right is stored as its mirror image, which folds the
// left-right symmetry, and no such position is its own mirror image), the
// opponent's red on one of the 35 other squares. That makes NumParts parts;
// inside a part the entries number the side to move's blues, then the
// opponent's blues, each set colex-ranked among the squares still free.
// Positions and entries correspond one to one, as in the obsblk index (a
// material with one own red is never mirror-fixed), so a table built part
// by part is put into obsblk order entry by entry (repack).

// NumParts is the number of parts of a material with one red a side:
// 18 squares for the side to move's red, 35 for the opponent's.
const NumParts = 18 * 35

// squares lists the 36 board squares in increasing bit order, and
// squareNum numbers them back (0..35 on the board).
var (
	squares   [36]geister.Square
	squareNum [64]int8
	// leftSquares are the 18 squares of columns A..C in increasing order,
	// and leftNum numbers them back (-1 off the left half).
	leftSquares [18]geister.Square
	leftNum     [64]int8
	// choose[n][k] is C(n, k) for n <= 36, k <= 4.
	choose [37][5]uint64
)

func init() {
	for i := range squareNum {
		squareNum[i], leftNum[i] = -1, -1
	}
	n, l := 0, 0
	for s := 0; s < 64; s++ {
		if geister.BoardMask&(1<<s) == 0 {
			continue
		}
		squares[n], squareNum[s] = geister.Square(s), int8(n)
		n++
		if s%8 <= 3 {
			leftSquares[l], leftNum[s] = geister.Square(s), int8(l)
			l++
		}
	}
	for n := 0; n <= 36; n++ {
		choose[n][0] = 1
		for k := 1; k <= 4 && k <= n; k++ {
			choose[n][k] = choose[n-1][k-1] + choose[n-1][k]
		}
	}
}

// Partitionable reports whether the pair of m and its twin can be built in
// parts: each side has exactly one red. With two or more reds a side the
// reds alone can stand symmetrically, and such a part would need the blues
// to break the mirror tie, which this layout does not do.
func Partitionable(m geistertb.Material) bool {
	return m.Valid() && m.PR == 1 && m.OR == 1
}

// partLayout numbers the entries of one partitionable material.
type partLayout struct {
	m        geistertb.Material
	size     uint64 // entries per part
	oppBlues uint64 // C(34-PB, OB): opponent blue placements per own one
}

func newPartLayout(m geistertb.Material) partLayout {
	nb := choose[34-m.PB][m.OB]
	return partLayout{m: m, size: choose[34][m.PB] * nb, oppBlues: nb}
}

// part returns the part of the position with own red r and opponent red s,
// r on the left half.
func partOf(r, s geister.Square) int {
	sn := int(squareNum[s])
	if squareNum[s] > squareNum[r] {
		sn--
	}
	return int(leftNum[r])*35 + sn
}

// partReds returns the squares of the two reds of part p.
func partReds(p int) (r, s geister.Square) {
	r = leftSquares[p/35]
	sn := p % 35
	if sn >= int(squareNum[r]) {
		sn++
	}
	return r, squares[sn]
}

// ordinalRank returns the colex rank of the set set among the squares of
// free: its members' positions in free (counted from the low end) ranked
// as sum C(position, i).
func ordinalRank(set, free uint64) uint64 {
	var r uint64
	i := 1
	for ; set != 0; set &= set - 1 {
		pos := bits.OnesCount64(free & (set&-set - 1))
		r += choose[pos][i]
		i++
	}
	return r
}

// canonical returns p or its mirror image, whichever has its own red on
// the left half, with its part and its entry inside the part. p must have
// one red a side.
func (l *partLayout) canonical(p geister.Position) (geister.Position, int, uint64) {
	r := geister.Square(bits.TrailingZeros64(p.OwnRed))
	if leftNum[r] < 0 {
		p = p.Mirror()
		r = geister.Square(bits.TrailingZeros64(p.OwnRed))
	}
	s := geister.Square(bits.TrailingZeros64(p.OppRed))
	free := geister.BoardMask &^ (p.OwnRed | p.OppRed)
	within := ordinalRank(p.OwnBlue, free)*l.oppBlues + ordinalRank(p.OppBlue, free&^p.OwnBlue)
	return p, partOf(r, s), within
}

// deposit places the members of ord (positions among list) on their
// squares.
func deposit(ord uint64, list *[36]geister.Square) uint64 {
	var b uint64
	for ; ord != 0; ord &= ord - 1 {
		b |= 1 << list[bits.TrailingZeros64(ord)]
	}
	return b
}

// freeList lists the squares of free in increasing order.
func freeList(free uint64, list *[36]geister.Square) {
	n := 0
	for ; free != 0; free &= free - 1 {
		list[n] = geister.Square(bits.TrailingZeros64(free))
		n++
	}
}

// nextSubset returns the next larger number with as many bits set as x
// (Gosper's hack): the next set in colex order.
func nextSubset(x uint64) uint64 {
	c := x & -x
	r := x + c
	return ((r^x)>>2)/c | r
}

// walk calls fn for every entry of part p in order, with its position.
// fn returns false to stop.
func (l *partLayout) walk(p int, fn func(j uint64, pos geister.Position) bool) {
	r, s := partReds(p)
	free := geister.BoardMask &^ (1<<r | 1<<s)
	var fl, fl2 [36]geister.Square
	freeList(free, &fl)
	pb, ob := l.m.PB, l.m.OB
	j := uint64(0)
	for a := uint64(1)<<pb - 1; a < 1<<34; a = nextSubset(a) {
		own := deposit(a, &fl)
		freeList(free&^own, &fl2)
		for c := uint64(1)<<ob - 1; c < 1<<(34-pb); c = nextSubset(c) {
			if !fn(j, geister.Position{OwnBlue: own, OwnRed: 1 << r, OppBlue: deposit(c, &fl2), OppRed: 1 << s}) {
				return
			}
			j++
		}
	}
}

// at returns the position of entry j of part p, as walk gives it.
func (l *partLayout) at(p int, j uint64) geister.Position {
	r, s := partReds(p)
	free := geister.BoardMask &^ (1<<r | 1<<s)
	own := unrankAmong(j/l.oppBlues, l.m.PB, free)
	opp := unrankAmong(j%l.oppBlues, l.m.OB, free&^own)
	return geister.Position{OwnBlue: own, OwnRed: 1 << r, OppBlue: opp, OppRed: 1 << s}
}

// unrankAmong returns the set of k squares of free with colex rank rank
// among them (the inverse of ordinalRank).
func unrankAmong(rank uint64, k int, free uint64) uint64 {
	var set uint64
	n := bits.OnesCount64(free)
	for i := k; i >= 1; i-- {
		// The largest position pos with C(pos, i) <= rank.
		pos := n - 1
		for choose[pos][i] > rank {
			pos--
		}
		rank -= choose[pos][i]
		n = pos
		set |= 1 << selectBit(free, pos)
	}
	return set
}

// selectBit returns the square of the n-th (from 0) set bit of b.
func selectBit(b uint64, n int) int {
	for ; n > 0; n-- {
		b &= b - 1
	}
	return bits.TrailingZeros64(b)
}

// parentParts returns the parts of the twin material that hold the
// parents (by a move without a capture) of the positions of part p: there
// the other side is to move, its red is p's opponent red before it moved
// (or still where it is), its opponent red is p's own red, the board
// turned round and, when that puts the mover's red on the right, mirrored.
func parentParts(p int, buf []int) []int {
	r, s := partReds(p)
	buf = buf[:0]
	sb := uint64(1) << s
	for cand := (sb | sb<<8 | sb>>8 | sb<<1 | sb>>1) & geister.BoardMask &^ (1 << r); cand != 0; cand &= cand - 1 {
		ns := geister.Square(bits.TrailingZeros64(cand))
		own, opp := 63-ns, 63-r
		if leftNum[own] < 0 {
			own, opp = mirrorSquare(own), mirrorSquare(opp)
		}
		buf = append(buf, partOf(own, opp))
	}
	return buf
}

// mirrorSquare maps a square to its left-right mirror image.
func mirrorSquare(s geister.Square) geister.Square {
	return s&^7 | (7 - s&7)
}
