package geister

import (
	"fmt"

	"github.com/tbfs/tbfs/geister"
)

// RankOriented is Rank that also reports whether p's index stands for the
// mirror image of p (the index's tie-break picked the other orientation).
// A retrograde builder needs it: the entry at an index is computed from the
// canonical position (Unrank), so a predecessor found by Unmoves is one of
// that entry's parents only in the orientation Unrank returns.
func RankOriented(p geister.Position) (m Material, idx uint64, mirrored bool, err error) {
	m, err = checkTablePosition(p)
	if err != nil {
		return m, 0, false, err
	}
	idx, mirrored = layoutOf(m).index(p, nil)
	return m, idx, mirrored, nil
}

// index returns p's index in layout l and whether it stands for p's mirror
// image; r, when not nil, caches half-board ranks.
func (l *layout) index(p geister.Position, r *Ranker) (uint64, bool) {
	u := p.OppBlue | p.OppRed
	outer, mirrored := l.orient(p.OwnBlue, p.OwnRed, u, r)
	red := p.OppRed
	if mirrored {
		u, red = mirror(u), mirror(red)
	}
	return outer*l.block + redRank(u, red), mirrored
}

// rankerSlots is the number of half boards a Ranker remembers. Two
// positions a move apart share at least one half board, and a builder
// walking a table in index order meets the same halves again and again, so
// a small cache that stays in the first-level data cache answers most
// lookups.
const rankerSlots = 1 << 11

// unrankSlots is the number of half-board unranks a Ranker remembers.
// Consecutive observations mostly share their left half.
const unrankSlots = 1 << 8

// Ranker computes RankOriented and Unrank for a table builder, which ranks
// billions of positions that differ from the previous ones by a single
// move. It remembers recently seen half boards, the costly part of the
// index, and skips the board checks Rank makes: the positions must be
// valid (as Moves, Play, Unmoves and Unrank produce them from valid
// positions). The zero value is ready to use; a Ranker must not be used by
// two goroutines at once.
type Ranker struct {
	// halves maps a half board (own blues, own reds, opponent squares as
	// three 18-bit patterns in one key) to its half rank. The zero entry
	// is the empty half, whose rank is 0, so no slot needs a valid flag.
	halves [rankerSlots]struct{ key, rank uint64 }
	// unranks maps a half rank and its three counts (key) to the half
	// board; an entry is valid when ok is set.
	unranks [unrankSlots]struct {
		key     uint64
		a, b, c uint32
		ok      bool
	}
}

// halfRank is the package's halfRank through the cache.
func (r *Ranker) halfRank(a, b, c uint32, na, nb, nc int) uint64 {
	key := uint64(a) | uint64(b)<<18 | uint64(c)<<36
	s := &r.halves[(key*0x9e3779b97f4a7c15)>>(64-11)]
	if s.key == key {
		return s.rank
	}
	rank := halfRank(a, b, c, na, nb, nc)
	s.key, s.rank = key, rank
	return rank
}

// halfUnrank is the package's halfUnrank through the cache.
func (r *Ranker) halfUnrank(rank uint64, na, nb, nc int) (a, b, c uint32) {
	key := rank<<12 | uint64(na)<<8 | uint64(nb)<<4 | uint64(nc)
	s := &r.unranks[(key*0x9e3779b97f4a7c15)>>(64-8)]
	if s.ok && s.key == key {
		return s.a, s.b, s.c
	}
	a, b, c = halfUnrank(rank, na, nb, nc)
	s.key, s.a, s.b, s.c, s.ok = key, a, b, c, true
	return a, b, c
}

// Rank is RankOriented for a valid position: the error only reports a
// material without a table (a count of 0 or above 4).
func (r *Ranker) Rank(p geister.Position) (m Material, idx uint64, mirrored bool, err error) {
	m = MaterialOf(p)
	if !m.Valid() {
		return m, 0, false, fmt.Errorf("%w: %v (every count must be 1..4)", ErrNoMaterial, m)
	}
	idx, mirrored = layoutOf(m).index(p, r)
	return m, idx, mirrored, nil
}

// Halves is a board as the index reads it: L holds columns A..C and R
// columns D..F mirrored onto A..C, each as an 18-bit pattern (half square
// 3*row+column). A builder that moves one piece at a time updates the
// halves with Toggle instead of extracting them again.
type Halves struct{ L, R uint32 }

// HalvesOf returns the halves of board b.
func HalvesOf(b uint64) Halves { return Halves{leftHalf(b), rightHalf(b)} }

// squareHalves[s] is HalvesOf(1 << s).
var squareHalves [64]Halves

func init() {
	for s := range squareHalves {
		squareHalves[s] = HalvesOf(1 << s)
	}
}

// Toggle returns h with square s (0..63) added or removed: the halves of
// the board with bit s flipped.
func (h Halves) Toggle(s geister.Square) Halves {
	t := squareHalves[s&63]
	return Halves{h.L ^ t.L, h.R ^ t.R}
}

// RankHalves is Ranker.Rank for a position of material m given as the
// halves of its own blues a, own reds b and opponent squares u, with the
// opponent squares opp and the opponent reds oppRed as boards. m must be
// the position's material and a valid table material; the halves must be
// those of the position's boards (HalvesOf or Toggle); RankHalves does not
// check either.
func (r *Ranker) RankHalves(m Material, a, b, u Halves, opp, oppRed uint64) (idx uint64, mirrored bool) {
	l := layoutOf(m)
	outer, mirrored := l.orientHalves(a.L, b.L, u.L, a.R, b.R, u.R, r)
	if mirrored {
		opp, oppRed = mirror(opp), mirror(oppRed)
	}
	return outer*l.block + redRank(opp, oppRed), mirrored
}

// UnrankBlock appends to dst the BlockSize positions of m stored at
// indices outer*BlockSize up to (outer+1)*BlockSize-1, in index order: the
// colourings of one canonical observation, as Unrank returns them one by
// one. A builder walking a table in order unranks each observation once
// instead of once per colouring.
func UnrankBlock(m Material, outer uint64, dst []geister.Position) ([]geister.Position, error) {
	return unrankBlock(m, outer, dst, nil)
}

// UnrankBlock is the package's UnrankBlock through the Ranker's cache.
func (r *Ranker) UnrankBlock(m Material, outer uint64, dst []geister.Position) ([]geister.Position, error) {
	return unrankBlock(m, outer, dst, r)
}

func unrankBlock(m Material, outer uint64, dst []geister.Position, r *Ranker) ([]geister.Position, error) {
	if !m.Valid() {
		return dst, fmt.Errorf("%w: %v", ErrNoMaterial, m)
	}
	l := layoutOf(m)
	if outer >= l.outer {
		return dst, fmt.Errorf("%w: observation %d >= %d of %v", ErrIndexRange, outer, l.outer, m)
	}
	a, b, u := l.unrankOuter(m, outer, r)
	for _, pat := range l.reds {
		red := pdep64(uint64(pat), u)
		dst = append(dst, geister.Position{OwnBlue: a, OwnRed: b, OppBlue: u &^ red, OppRed: red})
	}
	return dst, nil
}
