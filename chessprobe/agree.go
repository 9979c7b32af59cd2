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

// SyzygyDTZOf is the DTZ50″ a Syzygy DTZ table holds for a position whose
// chesstb class is c and plain zeroing distance is dtz (signed for the side
// to move, as chesstb.Result gives it). chesstb's DTZ has no cursed band:
// a cursed win whose zeroing move is at most 100 plies away (the clock runs
// out in a later phase) is 100 plus that distance in DTZ50″, one whose
// zeroing move is further away keeps the distance itself, which is past
// 100 already. A draw is 0.
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
// position. They agree when
//   - the WDL classes are equal (both are the tables' class, -2..2, blind
//     to the clock), and
//   - where both have a DTZ, Syzygy's DTZ50″ has the sign of chesstb's
//     converted to DTZ50″ (want, SyzygyDTZOf) and its size (DTZAgrees):
//     equal, or where the Syzygy value may be rounded (a table storing
//     moves, not plies: n stands for n or n+1 plies) one ply less; for a
//     blessed loss, at most want's size. chesstb's DTZ there is the
//     loser's longest line over every move, the 50-move rule aside, while
//     DTZ50″ takes the longest among the moves that keep the loss saved, so
//     chesstb's can only be longer. (In 2N5/6NK/8/8/k7/8/6p1/8 w, both
//     formats agree on every move: Kg8 and Ne7 leave Black a cursed win at
//     DTZ 1, Nb6+ a clean win at 3; DTZ50″ is -102 and chesstb's -4.)
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
	if !ctb.HasDTZ || !syz.HasDTZ {
		return nil
	}
	want := SyzygyDTZOf(ctb.Category(), ctb.DTZ)
	if DTZAgrees(ctb.Category(), want, syz.DTZ, syz.Precise) {
		return nil
	}
	allowed := ""
	switch {
	case ctb.Category() == chesstb.BlessedLoss:
		allowed = fmt.Sprintf(" or less, to %d", -dtzBand-1)
	case !syz.Precise:
		allowed = fmt.Sprintf(" or %d, the table's value being rounded", want-sign(want))
	}
	return fmt.Errorf("%w: DTZ %d in chesstb's %s (DTZ50″ %d%s), %d in Syzygy's", ErrDisagree, ctb.DTZ, ctb.Material, want, allowed, syz.DTZ)
}

// DTZAgrees reports whether a Syzygy DTZ50″ got agrees with want, the
// DTZ50″ of chesstb's distance for a position of class c (see Agree).
func DTZAgrees(c chesstb.Category, want, got int, precise bool) bool {
	switch {
	case want == got:
		return true
	case sign(want) != sign(got):
		return false
	case c == chesstb.BlessedLoss:
		return got < -dtzBand && got >= want
	}
	return !precise && abs(want) == abs(got)+1
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
