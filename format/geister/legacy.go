package geister

import (
	"fmt"
	"math/bits"

	"github.com/tbfs/tbfs/geister"
)

// The legacy index (FORMAT.md §4.7) is the reference builder's in-memory
// order, also used by table files named without "_obsblk". It ranks the
// four piece kinds as four sets on the two half boards, with the same
// mirror tie-break as the obsblk index, and has no per-observation runs.

// legacyLayout holds a material's legacy index constants.
type legacyLayout struct {
	entries uint64
	// base of each split (a, b, c, d) at a*125 + b*25 + c*5 + d.
	base [5 * 5 * 5 * 5]uint64
}

// quarterW returns C(18,a) C(18-a,b) C(18-a-b,c) C(18-a-b-c,d).
func quarterW(a, b, c, d int) uint64 {
	return binom[18][a] * binom[18-a][b] * binom[18-a-b][c] * binom[18-a-b-c][d]
}

// buildLegacy returns the legacy layouts, by material id.
func buildLegacy() *[NumMaterials]legacyLayout {
	ls := new([NumMaterials]legacyLayout)
	for i, m := range materials {
		l := &ls[i]
		var next uint64
		for a := 0; a <= m.PB; a++ {
			for b := 0; b <= m.PR; b++ {
				for c := 0; c <= m.OB; c++ {
					for d := 0; d <= m.OR; d++ {
						cmp := compare4(a, b, c, d, m.PB-a, m.PR-b, m.OB-c, m.OR-d)
						if cmp > 0 {
							continue
						}
						wl := quarterW(a, b, c, d)
						l.base[a*125+b*25+c*5+d] = next
						if cmp == 0 {
							next += wl * (wl + 1) / 2
						} else {
							next += wl * quarterW(m.PB-a, m.PR-b, m.OB-c, m.OR-d)
						}
					}
				}
			}
		}
		l.entries = next
		if next != m.LegacyEntries() {
			panic(fmt.Sprintf("geister: legacy layout of %v counts %d, Burnside %d", m, next, m.LegacyEntries()))
		}
	}
	return ls
}

func compare4(a, b, c, d, w, x, y, z int) int {
	if a != w {
		return sign(a - w)
	}
	return compare3(b, c, d, x, y, z)
}

// quarterRank ranks one half board holding four sets.
func quarterRank(a, b, c, d uint32) uint64 {
	na, nb, nc, nd := bits.OnesCount32(a), bits.OnesCount32(b), bits.OnesCount32(c), bits.OnesCount32(d)
	free := uint32(1<<halfSquares-1) &^ a
	ra := colexRank(a)
	rb := colexRank(pext18(b, free))
	free &^= b
	rc := colexRank(pext18(c, free))
	rd := colexRank(pext18(d, free&^c))
	r := ra*binom[18-na][nb] + rb
	r = r*binom[18-na-nb][nc] + rc
	return r*binom[18-na-nb-nc][nd] + rd
}

// LegacyRank returns p's index in the legacy layout of its material (the
// reference builder's in-memory order and the order of table files named
// without "_obsblk"). p must be a valid table position, as for Rank.
func LegacyRank(p geister.Position) (Material, uint64, error) {
	m, err := checkTablePosition(p)
	if err != nil {
		return m, 0, err
	}
	l := legacyLayoutOf(m)
	al, bl, cl, dl := leftHalf(p.OwnBlue), leftHalf(p.OwnRed), leftHalf(p.OppBlue), leftHalf(p.OppRed)
	ar, br, cr, dr := rightHalf(p.OwnBlue), rightHalf(p.OwnRed), rightHalf(p.OppBlue), rightHalf(p.OppRed)
	nal, nbl, ncl, ndl := bits.OnesCount32(al), bits.OnesCount32(bl), bits.OnesCount32(cl), bits.OnesCount32(dl)
	nar, nbr, ncr, ndr := bits.OnesCount32(ar), bits.OnesCount32(br), bits.OnesCount32(cr), bits.OnesCount32(dr)
	cmp := compare4(nal, nbl, ncl, ndl, nar, nbr, ncr, ndr)
	rl := quarterRank(al, bl, cl, dl)
	rr := quarterRank(ar, br, cr, dr)
	if cmp > 0 || cmp == 0 && rl > rr {
		rl, rr = rr, rl
		nal, nbl, ncl, ndl, nar, nbr, ncr, ndr = nar, nbr, ncr, ndr, nal, nbl, ncl, ndl
	}
	base := l.base[nal*125+nbl*25+ncl*5+ndl]
	if cmp == 0 {
		w := quarterW(nal, nbl, ncl, ndl)
		return m, base + rl*(2*w-rl+1)/2 + (rr - rl), nil
	}
	return m, base + rl*quarterW(nar, nbr, ncr, ndr) + rr, nil
}
