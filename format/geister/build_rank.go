package geister

// RankOriented is Rank that also reports whether p's index stands for the
// mirror image of p (the index's tie-break picked the other orientation).
// A retrograde builder needs it: the entry at an index is computed from the
// canonical position (Unrank), so a predecessor found by Unmoves is one of
// that entry's parents only in the orientation Unrank returns.
func RankOriented(p Position) (m Material, idx uint64, mirrored bool, err error) {
	m, err = checkTablePosition(p)
	if err != nil {
		return m, 0, false, err
	}
	l := &layouts[m.ID()]
	u := p.OppBlue | p.OppRed
	outer, mirrored := l.orient(p.OwnBlue, p.OwnRed, u)
	red := p.OppRed
	if mirrored {
		u, red = mirror(u), mirror(red)
	}
	return m, outer*l.block + redRank(u, red), mirrored, nil
}
