package chessprobe

import (
	"errors"
	"fmt"

	"github.com/tbfs/tbfs/format/chesstb"
)

// ErrDisagree means chesstb and Syzygy tables of one material give
// different answers for a position: one of them is wrong (a damaged or
// misnamed file), and neither is reported.
var ErrDisagree = errors.New("chessprobe: chesstb and Syzygy tables disagree")

// ErrCorrupt means a Syzygy answer contradicts itself (a WDL class and a
// DTZ of different classes).
var ErrCorrupt = errors.New("chessprobe: Syzygy tables contradict themselves")

// dtzBand is the 50-move limit in plies, where DTZ50″'s cursed band starts.
const dtzBand = 100

// SyzygyDTZOf writes chesstb's class c and plain zeroing distance dtz
// (signed for the side to move, as chesstb.Result gives it) as DTZ50″. For
// a win or loss that is the distance itself, which a Syzygy table holds up
// to its rounding. A cursed win or blessed loss gets 100 plus a distance
// of at most 100 plies (DTZ50″'s reading of a zeroing move into a cursed
// later phase) and keeps a longer one; the table itself may hold any value
// of DTZConsistent's range. A draw is 0.
func SyzygyDTZOf(c chesstb.Category, dtz int) int {
	d := abs(dtz)
	if (c == chesstb.CursedWin || c == chesstb.BlessedLoss) && d <= dtzBand {
		d += dtzBand
	}
	switch {
	case c > 0:
		return d
	case c < 0:
		return -d
	}
	return 0
}

// PlainDTZ converts a Syzygy DTZ50″ to chesstb's plain zeroing distance
// when it can be done exactly: a value the table stores precisely, outside
// the cursed band (where a zeroing move is n or n-100 plies away).
func PlainDTZ(s *SyzygyAnswer) (int, bool) {
	switch {
	case !s.HasDTZ:
		return 0, false
	case s.DTZ == 0:
		return 0, true
	case !s.Precise || abs(s.DTZ) > dtzBand:
		return 0, false
	}
	return s.DTZ, true
}

// Agree checks a chesstb answer against a Syzygy answer of the same
// position. They agree when the WDL classes are equal (both are the
// tables' class, -2..2, blind to the clock) and, where both have a DTZ,
// the distances are consistent (DTZConsistent).
//
// A side already checkmated is not compared: the board settles it, and the
// two conventions give it DTZ 0 (chesstb) and -1 (Syzygy).
func Agree(ctb *chesstb.Result, syz *SyzygyAnswer) error {
	if ctb.Checkmate || !ctb.HasWDL {
		return nil
	}
	if ctb.WDL != syz.WDL {
		return fmt.Errorf("%w: WDL %d (%s) in chesstb's %s, %d in Syzygy's", ErrDisagree, ctb.WDL, ctb.Category(), ctb.Material, syz.WDL)
	}
	if !ctb.HasDTZ || !syz.HasDTZ || DTZConsistent(ctb.Category(), ctb.DTZ, syz.DTZ, syz.Precise) {
		return nil
	}
	lo, hi := syzygyRange(ctb.Category(), ctb.DTZ, syz.Precise)
	allowed := fmt.Sprintf("DTZ50″ %d", lo)
	if lo != hi {
		allowed = fmt.Sprintf("DTZ50″ %d to %d", lo, hi)
	}
	return fmt.Errorf("%w: DTZ %d in chesstb's %s (%s, %s), %d in Syzygy's", ErrDisagree, ctb.DTZ, ctb.Material, allowed, rangeReason(ctb.Category(), syz.Precise), syz.DTZ)
}

// DTZConsistent reports whether a Syzygy DTZ50″ got, rounded unless
// precise, can describe the same position as chesstb's plain distance
// plain for a position of class c (both signed for the side to move).
//
// For a win or loss chesstb's distance is exact and DTZ50″ is the plain
// distance: equal, or, where the Syzygy value may be rounded (a table
// storing moves, not plies, or a value derived from such a child: n stands
// for n or n+1 plies), one ply less.
//
// For a cursed win or blessed loss the two metrics count the same lines
// differently. chesstb's is the minimax of the plies to the zeroing move
// over every line. DTZ50″ is the minimax of those plies plus 100 where
// the zeroing move leads into a later phase that is itself cursed or
// blessed (python-chess's probe_dtz: a zeroing move is n or n-100 plies
// away; the generator, syzygy1/tb's rtbgen, iterates a capture into a
// cursed win as ply 101 beside the clean wins' own 101st ply), so each
// side may steer by another line. Every line's DTZ50″ is
// its plies or 100 more, so the true values hold chesstb ≤ DTZ50″ ≤
// chesstb + 100, and nothing tighter: in 8/8/8/4K3/p7/N1N3k1/8/8 w (KNNKP)
// chesstb's 28 plies zero into a cursed phase (DTZ50″ 128) while the
// table's line reaches a clean win 104 plies away (DTZ50″ 104); in
// 2N5/6NK/8/8/k7/8/6p1/8 w White's Kg8 leaves Black a cursed win one ply
// from zeroing (DTZ50″ -102, 2 plies) where chesstb's longest line is Nb6+,
// 4 plies. Both tables round there: Syzygy stores those classes in moves,
// and chesstb's 1-byte tier halves cursed distances, rounding up on
// writing, so a value can read one ply short (chesstb's generator,
// dtz_entry_from_storage: even values decode as v-1).
func DTZConsistent(c chesstb.Category, plain, got int, precise bool) bool {
	lo, hi := syzygyRange(c, plain, precise)
	return lo <= got && got <= hi
}

// syzygyRange is the range of Syzygy DTZ50″ values DTZConsistent accepts
// beside chesstb's plain distance, signed for the side to move (lo ≤ hi).
func syzygyRange(c chesstb.Category, plain int, precise bool) (lo, hi int) {
	p, s := abs(plain), sign(int(c))
	short := 0 // how much the Syzygy value may fall short of its truth
	if !precise {
		short = 1
	}
	var near, far int // sizes, near ≤ far
	switch c {
	case chesstb.Win, chesstb.Loss:
		near, far = max(p-short, 1), p
	case chesstb.CursedWin, chesstb.BlessedLoss:
		// chesstb's truth is p or p+1; the table's is its value or, when
		// rounded, one more.
		near, far = max(p-short, dtzBand+1), p+1+dtzBand
	default:
		return 0, 0
	}
	if s < 0 {
		return -far, -near
	}
	return near, far
}

// rangeReason says why syzygyRange allows its range, for error messages.
func rangeReason(c chesstb.Category, precise bool) string {
	switch {
	case c == chesstb.CursedWin || c == chesstb.BlessedLoss:
		return "the cursed band counts a zeroing move into a cursed phase 100 plies further, and both tables may round"
	case precise:
		return "the Syzygy value being exact"
	}
	return "the Syzygy value may be rounded"
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

func sign(n int) int {
	switch {
	case n > 0:
		return 1
	case n < 0:
		return -1
	}
	return 0
}
