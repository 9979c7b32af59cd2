package geister

// Horizon is the largest distance the tables store; longer results are
// stored as 0 (no result).
const Horizon = 210

// Backup combines the values of a non-terminal position's children into the
// position's value, the rule every table entry satisfies (FORMAT.md §2).
// Each child value is from the child's side to move (as DTW answers for the
// child, terminal children included). capturesLastBlue says whether some
// move takes the opponent's last blue: that wins at once (value 1) although
// the child, with no blue for its side to move, reads as a loss in 2.
// The rule: 1 if a move captures the last blue; else one more than the
// shortest child loss (even value) if there is one; else one more than the
// longest child win if every child is a win; else 0. Results beyond the
// Horizon are 0.
func Backup(children []uint8, capturesLastBlue bool) uint8 {
	if capturesLastBlue {
		return 1
	}
	minLoss, maxWin := 0, 0
	allWin := len(children) > 0
	for _, t := range children {
		switch {
		case t == 0:
			allWin = false
		case t%2 == 0:
			if minLoss == 0 || int(t) < minLoss {
				minLoss = int(t)
			}
			allWin = false
		default:
			maxWin = max(maxWin, int(t))
		}
	}
	v := 0
	switch {
	case minLoss > 0:
		v = minLoss + 1
	case allWin:
		v = maxWin + 1
	}
	if v > Horizon {
		return 0
	}
	return uint8(v)
}
