package geister

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sync"

	"github.com/tbfs/tbfs/geister"
)

// The obsblk index (FORMAT.md §4). A position's index is
//
//	outer * BlockSize + inner
//
// where outer numbers the observation (own blues, own reds, opponent squares)
// up to left-right mirror and inner numbers which opponent pieces are red, so
// every colouring of one observation sits in one contiguous run of bytes.
//
// outer is built from the two half boards (columns A..C, and D..F mirrored
// onto them), each ranked as three nested colex-ranked sets. The reference
// finds the canonical orientation by ranking and unranking; here both halves
// are ranked once and compared directly, which gives the same numbering.

// mirror reverses the bits inside each byte of a bitboard, i.e. the
// columns within each row: the left-right mirror image (see
// geister.Position.Mirror).
func mirror(b uint64) uint64 { return bits.ReverseBytes64(bits.Reverse64(b)) }

// halfSquares is the number of squares on one half board.
const halfSquares = 18

// binom[n][k] is the binomial coefficient C(n, k) for n, k <= 36.
var binom [37][37]uint64

// halfW[a][b][c] = C(18,a) C(18-a,b) C(18-a-b,c): the placements of a, b
// and c pieces of three kinds on one half board.
var halfW [5][5][9]uint64

// layouts holds the per-material index constants, by material id, and
// legacyLayouts those of the legacy order. They are built on first use
// (buildLayouts, a few milliseconds), not at start-up: a process that
// probes only chess never needs them.
var (
	layoutsOnce   sync.Once
	layouts       *[NumMaterials]layout
	legacyLayouts *[NumMaterials]legacyLayout
)

// layoutOf returns the index constants of material m.
func layoutOf(m Material) *layout {
	layoutsOnce.Do(buildLayouts)
	return &layouts[m.ID()]
}

// legacyLayoutOf returns the legacy-order index constants of material m.
func legacyLayoutOf(m Material) *legacyLayout {
	layoutsOnce.Do(buildLayouts)
	return &legacyLayouts[m.ID()]
}

// buildLayouts fills layouts and legacyLayouts.
func buildLayouts() {
	ls := new([NumMaterials]layout)
	for i, m := range materials {
		ls[i] = newLayout(m)
	}
	layouts = ls
	legacyLayouts = buildLegacy()
}

func init() {
	for n := 0; n <= 36; n++ {
		binom[n][0] = 1
		for k := 1; k <= n; k++ {
			binom[n][k] = binom[n-1][k-1] + binom[n-1][k]
		}
	}
	for a := 0; a <= 4; a++ {
		for b := 0; b <= 4; b++ {
			for c := 0; c <= 8; c++ {
				if a+b+c <= halfSquares {
					halfW[a][b][c] = binom[18][a] * binom[18-a][b] * binom[18-a-b][c]
				}
			}
		}
	}
}

// split is one way to share a material's three piece sets between the left
// half (a, b, c) and the right half (the complement), with the entries it
// owns in outer order.
type split struct {
	a, b, c int    // left-half counts of own blue, own red, opponent pieces
	base    uint64 // first outer number of this split
	size    uint64 // number of outer numbers it owns
	wl, wr  uint64 // placements on the left and on the right half
	equal   bool   // left counts equal right counts
}

// layout holds a material's index constants.
type layout struct {
	k       int    // opponent pieces, OB+OR
	or      int    // opponent reds
	block   uint64 // C(k, or), entries per observation
	outer   uint64 // observations up to mirror
	entries uint64
	// base of each split (a, b, c) at a*45 + b*9 + c; only splits whose
	// counts are at most their complement's are used.
	base   [5 * 5 * 9]uint64
	splits []split // in outer order, empty splits left out
	// reds[i] is the pattern of red opponent pieces (bit j: the j-th
	// opponent square in increasing order) of inner number i.
	reds []uint8
}

func newLayout(m Material) layout {
	l := layout{k: m.OB + m.OR, or: m.OR}
	l.block = binom[l.k][m.OR]
	for i := uint64(0); i < l.block; i++ {
		l.reds = append(l.reds, uint8(colexUnrank(i, m.OR, l.k)))
	}
	var next uint64
	for a := 0; a <= m.PB; a++ {
		for b := 0; b <= m.PR; b++ {
			for c := 0; c <= l.k; c++ {
				ra, rb, rc := m.PB-a, m.PR-b, l.k-c
				cmp := compare3(a, b, c, ra, rb, rc)
				if cmp > 0 {
					continue
				}
				s := split{a: a, b: b, c: c, base: next, wl: halfW[a][b][c], wr: halfW[ra][rb][rc], equal: cmp == 0}
				if s.equal {
					s.size = s.wl * (s.wl + 1) / 2
				} else {
					s.size = s.wl * s.wr
				}
				l.base[a*45+b*9+c] = next
				next += s.size
				if s.size > 0 {
					l.splits = append(l.splits, s)
				}
			}
		}
	}
	l.outer = next
	l.entries = next * l.block
	// Burnside's count of observations up to mirror must agree with the sum
	// of the split blocks; a mismatch would mean the layout is wrong.
	full := binom[36][m.PB] * binom[36-m.PB][m.PR] * binom[36-m.PB-m.PR][l.k]
	var fixed uint64
	if m.PB%2 == 0 && m.PR%2 == 0 && l.k%2 == 0 {
		fixed = halfW[m.PB/2][m.PR/2][l.k/2]
	}
	if (full+fixed)/2 != l.outer {
		panic(fmt.Sprintf("geister: index layout of %v counts %d observations, Burnside %d", m, l.outer, (full+fixed)/2))
	}
	return l
}

// compare3 compares (a, b, c) with (x, y, z) lexicographically.
func compare3(a, b, c, x, y, z int) int {
	switch {
	case a != x:
		return sign(a - x)
	case b != y:
		return sign(b - y)
	}
	return sign(c - z)
}

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}

// leftHalf gathers columns A..C of b into 18 bits, half square 3*row+col.
func leftHalf(b uint64) uint32 {
	return uint32(b>>9&7) | uint32(b>>17&7)<<3 | uint32(b>>25&7)<<6 |
		uint32(b>>33&7)<<9 | uint32(b>>41&7)<<12 | uint32(b>>49&7)<<15
}

// rev3 reverses the three low bits.
var rev3 = [8]uint32{0, 4, 2, 6, 1, 5, 3, 7}

// rightHalf gathers columns D..F of b mirrored onto A..C (F->A, E->B, D->C),
// which is leftHalf of the mirror image.
func rightHalf(b uint64) uint32 {
	return rev3[b>>12&7] | rev3[b>>20&7]<<3 | rev3[b>>28&7]<<6 |
		rev3[b>>36&7]<<9 | rev3[b>>44&7]<<12 | rev3[b>>52&7]<<15
}

// fromLeft places an 18-bit half pattern on columns A..C.
func fromLeft(h uint32) uint64 {
	x := uint64(h)
	return (x&7)<<9 | (x>>3&7)<<17 | (x>>6&7)<<25 | (x>>9&7)<<33 | (x>>12&7)<<41 | (x>>15&7)<<49
}

// fromRight places an 18-bit half pattern on columns D..F, mirrored.
func fromRight(h uint32) uint64 {
	x := uint64(h)
	r := func(v uint64) uint64 { return uint64(rev3[v&7]) }
	return r(x)<<12 | r(x>>3)<<20 | r(x>>6)<<28 | r(x>>9)<<36 | r(x>>12)<<44 | r(x>>15)<<52
}

// colexRank ranks an 18-bit set: its members p1 < p2 < ... rank as
// sum C(p_i, i). It adds three table entries, one per 6-bit chunk, each
// chunk's entry depending on how many members lie below the chunk; this
// avoids a data-dependent loop.
func colexRank(set uint32) uint64 {
	x0, x1, x2 := set&63, set>>6&63, set>>12&63
	c0 := bits.OnesCount32(x0)
	c1 := c0 + bits.OnesCount32(x1)
	return colexChunk[0][0][x0] + colexChunk[1][c0&15][x1] + colexChunk[2][c1&15][x2]
}

// colexChunk[j][c][x] is the colex contribution of the members x of chunk
// j (positions 6j..6j+5) when c members lie below the chunk;
// pdepChunk[m][s] deposits the low bits of s onto the set bits of the
// 6-bit mask m (bits of s beyond the mask's count are ignored), and
// pextChunk[m][s] gathers the bits of s selected by m into the low bits.
// They are data in chunk_tables.go, written by internal/chunktables (go
// generate), not computed at start-up: every run of every binary that
// links this package would pay ~0.15 ms for them.
//
//go:generate go run gen_tables.go

// pext18 gathers the bits of src selected by the 18-bit mask into the low
// bits: the members of src renumbered among the squares of mask.
func pext18(src, mask uint32) uint32 {
	m0, m1, m2 := mask&63, mask>>6&63, mask>>12&63
	n0 := bits.OnesCount32(m0)
	n1 := n0 + bits.OnesCount32(m1)
	return uint32(pextChunk[m0][src&63]) | uint32(pextChunk[m1][src>>6&63])<<n0 | uint32(pextChunk[m2][src>>12&63])<<n1
}

// colexUnrank returns the s-element set of positions with colex rank r.
func colexUnrank(r uint64, s, n int) uint32 {
	var set uint32
	p := n - 1
	for i := s; i >= 1; i-- {
		for binom[p][i] > r {
			p--
		}
		set |= 1 << p
		r -= binom[p][i]
		p--
	}
	return set
}

// pdep64 deposits the low bits of src onto the set bits of mask, in order.
func pdep64(src, mask uint64) uint64 {
	var out uint64
	for ; mask != 0; src >>= 1 {
		low := mask & -mask
		if src&1 != 0 {
			out |= low
		}
		mask &= mask - 1
	}
	return out
}

// halfRank ranks one half board with na own blues a, nb own reds b and nc
// opponent pieces c as a mixed radix of three nested colex ranks.
func halfRank(a, b, c uint32, na, nb, nc int) uint64 {
	free := uint32(1<<halfSquares-1) &^ a
	ra := colexRank(a)
	rb := colexRank(pext18(b, free))
	rc := colexRank(pext18(c, free&^b))
	return (ra*binom[18-na][nb]+rb)*binom[18-na-nb][nc] + rc
}

// pdep18 deposits the low bits of src onto the set bits of the 18-bit
// mask, in order: the inverse of pext18.
func pdep18(src, mask uint32) uint32 {
	m0, m1, m2 := mask&63, mask>>6&63, mask>>12&63
	n0 := bits.OnesCount32(m0)
	n1 := n0 + bits.OnesCount32(m1)
	return uint32(pdepChunk[m0][src&63]) | uint32(pdepChunk[m1][src>>n0&63])<<6 | uint32(pdepChunk[m2][src>>n1&63])<<12
}

// halfUnrank is the inverse of halfRank.
func halfUnrank(r uint64, na, nb, nc int) (a, b, c uint32) {
	wc := binom[18-na-nb][nc]
	wb := binom[18-na][nb]
	rc := r % wc
	r /= wc
	rb := r % wb
	ra := r / wb
	a = colexUnrank(ra, na, 18)
	free := uint32(1<<halfSquares-1) &^ a
	b = pdep18(colexUnrank(rb, nb, 18-na), free)
	free &^= b
	c = pdep18(colexUnrank(rc, nc, 18-na-nb), free)
	return a, b, c
}

// orient ranks an observation: own blues a, own reds b, opponent squares u.
// It returns the outer number within the layout and whether the canonical
// orientation is the mirror image (FORMAT.md §4.2: the half with the
// lexicographically smaller counts, then the smaller half rank, goes left;
// a symmetric observation is never mirrored).
// r, when not nil, caches the half ranks.
func (l *layout) orient(a, b, u uint64, r *Ranker) (outer uint64, mirrored bool) {
	return l.orientHalves(leftHalf(a), leftHalf(b), leftHalf(u), rightHalf(a), rightHalf(b), rightHalf(u), r)
}

// orientHalves is orient given the half patterns: al, bl, ul of columns
// A..C and ar, br, ur of columns D..F mirrored onto A..C.
func (l *layout) orientHalves(al, bl, ul, ar, br, ur uint32, r *Ranker) (outer uint64, mirrored bool) {
	nal, nbl, nul := bits.OnesCount32(al), bits.OnesCount32(bl), bits.OnesCount32(ul)
	nar, nbr, nur := bits.OnesCount32(ar), bits.OnesCount32(br), bits.OnesCount32(ur)
	cmp := compare3(nal, nbl, nul, nar, nbr, nur)
	var rl, rr uint64
	if r != nil {
		rl = r.halfRank(al, bl, ul, nal, nbl, nul)
		rr = r.halfRank(ar, br, ur, nar, nbr, nur)
	} else {
		rl = halfRank(al, bl, ul, nal, nbl, nul)
		rr = halfRank(ar, br, ur, nar, nbr, nur)
	}
	if cmp > 0 || cmp == 0 && rl > rr {
		mirrored = true
		rl, rr = rr, rl
		nal, nbl, nul, nar, nbr, nur = nar, nbr, nur, nal, nbl, nul
	}
	base := l.base[nal*45+nbl*9+nul]
	if cmp == 0 {
		m := halfW[nal][nbl][nul]
		return base + rl*(2*m-rl+1)/2 + (rr - rl), mirrored
	}
	return base + rl*halfW[nar][nbr][nur] + rr, mirrored
}

// redRank numbers which of the opponent squares u (in increasing square
// order) hold the reds red: the colex rank of their positions.
func redRank(u, red uint64) uint64 {
	var r uint64
	for i := 1; red != 0; i++ {
		s := bits.TrailingZeros64(red)
		r += binom[bits.OnesCount64(u&(1<<s-1))][i]
		red &= red - 1
	}
	return r
}

// checkTablePosition returns an error unless p is a valid position of a
// table material; it is the cheap test Rank runs on every call.
func checkTablePosition(p geister.Position) (Material, error) {
	m := MaterialOf(p)
	all := p.OwnBlue | p.OwnRed | p.OppBlue | p.OppRed
	if all&^geister.BoardMask != 0 || bits.OnesCount64(all) != m.Total() {
		if err := p.Validate(); err != nil {
			return m, err
		}
	}
	if !m.Valid() {
		if err := p.Validate(); err != nil {
			return m, err
		}
		return m, fmt.Errorf("%w: %v (every count must be 1..4)", ErrNoMaterial, m)
	}
	return m, nil
}

// Rank returns the material of p and p's index in that material's table: the
// byte offset in its raw file. p must be a valid position whose counts are
// all 1..4; otherwise the error matches geister.ErrInvalidPosition or ErrNoMaterial.
// Rank does not look at whether p is terminal: terminal positions have
// entries too (an own blue on an exit is stored as 1).
func Rank(p geister.Position) (Material, uint64, error) {
	m, err := checkTablePosition(p)
	if err != nil {
		return m, 0, err
	}
	idx, _ := layoutOf(m).index(p, nil)
	return m, idx, nil
}

// Canonical returns the representative of p's mirror class that its table
// index stands for: p itself, or its mirror image when the tie-break of the
// index picks that orientation. Unrank(Rank(p)) returns the same position.
func Canonical(p geister.Position) (geister.Position, error) {
	m, err := checkTablePosition(p)
	if err != nil {
		return p, err
	}
	if _, mirrored := layoutOf(m).orient(p.OwnBlue, p.OwnRed, p.OppBlue|p.OppRed, nil); mirrored {
		return p.Mirror(), nil
	}
	return p, nil
}

// ErrIndexRange is matched by errors about an index at or beyond a
// material's Entries.
var ErrIndexRange = errors.New("geister: index out of range")

// Unrank returns the canonical position with index idx in material m's
// table, the inverse of Rank up to mirror image.
func Unrank(m Material, idx uint64) (geister.Position, error) {
	if !m.Valid() {
		return geister.Position{}, fmt.Errorf("%w: %v", ErrNoMaterial, m)
	}
	l := layoutOf(m)
	if idx >= l.entries {
		return geister.Position{}, fmt.Errorf("%w: %d >= %d entries of %v", ErrIndexRange, idx, l.entries, m)
	}
	a, b, u := l.unrankOuter(m, idx/l.block, nil)
	red := pdep64(uint64(l.reds[idx%l.block]), u)
	return geister.Position{OwnBlue: a, OwnRed: b, OppBlue: u &^ red, OppRed: red}, nil
}

// unrankOuter returns the canonical observation numbered outer.
// r, when not nil, caches the half boards.
func (l *layout) unrankOuter(m Material, outer uint64, r *Ranker) (a, b, u uint64) {
	// Binary search for the last split whose base is <= outer.
	lo, hi := 0, len(l.splits)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if l.splits[mid].base <= outer {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	s := &l.splits[lo]
	within := outer - s.base
	var rl, rr uint64
	if s.equal {
		rl = triangleRow(within, s.wl)
		rr = rl + within - rl*(2*s.wl-rl+1)/2
	} else {
		rl, rr = within/s.wr, within%s.wr
	}
	var al, bl, ul, ar, br, ur uint32
	if r != nil {
		al, bl, ul = r.halfUnrank(rl, s.a, s.b, s.c)
		ar, br, ur = r.halfUnrank(rr, m.PB-s.a, m.PR-s.b, l.k-s.c)
	} else {
		al, bl, ul = halfUnrank(rl, s.a, s.b, s.c)
		ar, br, ur = halfUnrank(rr, m.PB-s.a, m.PR-s.b, l.k-s.c)
	}
	return fromLeft(al) | fromRight(ar), fromLeft(bl) | fromRight(br), fromLeft(ul) | fromRight(ur)
}

// triangleRow returns the largest i < m with i(2m-i+1)/2 <= w: the row of an
// upper-triangular numbering of pairs rL <= rR < m.
func triangleRow(w, m uint64) uint64 {
	f := func(i uint64) uint64 { return i * (2*m - i + 1) / 2 }
	b := float64(2*m + 1)
	i := uint64(0)
	if d := b*b - 8*float64(w); d > 0 {
		if x := (b - math.Sqrt(d)) / 2; x > 0 {
			i = uint64(x)
		}
	}
	if i >= m {
		i = m - 1
	}
	for i > 0 && f(i) > w {
		i--
	}
	for i+1 < m && f(i+1) <= w {
		i++
	}
	return i
}

// Colourings returns every position consistent with o, in o's orientation,
// and the table index of the first: positions[i] is stored at index first+i
// of the material's table (the observation's contiguous run). The material
// must be a table material (every count 1..4).
func Colourings(o geister.Observation) (m Material, first uint64, positions []geister.Position, err error) {
	m, first, n, colouring, err := observationRun(o)
	if err != nil {
		return m, 0, nil, err
	}
	positions = make([]geister.Position, n)
	for i := range positions {
		positions[i] = colouring(i)
	}
	return m, first, positions, nil
}

// observationRun finds o's run of entries: its material, the index of the
// first colouring, their number, and a function giving colouring i in o's
// orientation.
func observationRun(o geister.Observation) (m Material, first uint64, n int, colouring func(int) geister.Position, err error) {
	if err := o.Validate(); err != nil {
		return m, 0, 0, nil, err
	}
	m = ObservationMaterial(o)
	if !m.Valid() {
		return m, 0, 0, nil, fmt.Errorf("%w: %v (every count must be 1..4)", ErrNoMaterial, m)
	}
	l := layoutOf(m)
	outer, mirrored := l.orient(o.OwnBlue, o.OwnRed, o.Opp, nil)
	u := o.Opp
	if mirrored {
		u = mirror(u)
	}
	colouring = func(i int) geister.Position {
		red := pdep64(uint64(colexUnrank(uint64(i), l.or, l.k)), u)
		if mirrored {
			red = mirror(red)
		}
		return geister.Position{OwnBlue: o.OwnBlue, OwnRed: o.OwnRed, OppBlue: o.Opp &^ red, OppRed: red}
	}
	return m, outer * l.block, int(l.block), colouring, nil
}
