package chesstb

import "fmt"

// This file checks every answer against the invariants the reference's own
// table checker (tools/check_tables) holds the tables to, using only what
// the probe has already read: a damaged value map or block that still
// decodes tends to break one of them, and then the answer is an error,
// never a value.

// invariantf builds the error for an answer that breaks an invariant.
func invariantf(format string, args ...any) error {
	return fmt.Errorf("%w: %w: %s", ErrCorrupt, errInvariant, fmt.Sprintf(format, args...))
}

// checkRoot checks the answer for a root position, which is neither
// checkmate nor stalemate (Tablebase.root settles those without a table),
// so no distance of a decisive class may be 0.
func (r *fullResult) checkRoot(n *node) error {
	err := r.check()
	if err != nil {
		return fmt.Errorf("%s tables, %s: %w", n.mat.name(), n.pos.FEN(), err)
	}
	return nil
}

func (r *fullResult) check() error {
	w := r.wdl
	if w.rank() < 0 {
		return invariantf("class %d", w)
	}
	if r.hasDTZ {
		switch {
		case r.dtzW != w:
			return invariantf("DTZ signed as class %d, the position is %d", r.dtzW, w)
		case w == wDraw && r.dtz != 0:
			return invariantf("a draw with DTZ %d", r.dtz)
		case w != wDraw && r.dtz == 0:
			return invariantf("a decisive position (class %d) with DTZ 0 and no mate on the board", w)
		case w.decisive50() && r.dtz > dtzMax50:
			return invariantf("DTZ %d past the 50-move window for a class-%d position that is not cursed or blessed", r.dtz, w)
		}
	}
	if r.hasDTM {
		switch {
		case r.dtmW != w.foldDTM():
			return invariantf("DTM signed as class %d, the position is %d", r.dtmW, w)
		case w == wDraw && r.dtm != 0:
			return invariantf("a draw with DTM %d", r.dtm)
		case w != wDraw && r.dtm == 0:
			return invariantf("a decisive position with DTM 0 and no mate on the board")
		case r.dtmW == wWin && r.dtm%2 == 0:
			return invariantf("a win with the even DTM %d", r.dtm)
		case r.dtmW == wLose && r.dtm%2 == 1:
			return invariantf("a loss with the odd DTM %d", r.dtm)
		case r.hasDTZ && w != wDraw && r.dtz > r.dtm:
			return invariantf("DTZ %d beyond DTM %d (a mate zeroes the count)", r.dtz, r.dtm)
		}
	}
	if r.hasDTM50 {
		if err := checkClocked("DTM50", r.dtm50W, w, r.dtm50); err != nil {
			return err
		}
		switch {
		case r.dtm50W == wWin && r.dtm50%2 == 0:
			return invariantf("a win with the even DTM50 %d", r.dtm50)
		case r.dtm50W == wLose && r.dtm50%2 == 1:
			return invariantf("a loss with the odd DTM50 %d", r.dtm50)
		case r.hasDTM && r.dtm50W != wDraw && r.dtm50 < r.dtm:
			return invariantf("DTM50 %d shorter than DTM %d (the 50-move rule only lengthens a mate)", r.dtm50, r.dtm)
		}
	}
	if r.hasDTC {
		if err := checkClocked("DTC", r.dtcW, w, r.dtc); err != nil {
			return err
		}
		switch {
		case r.dtcW == wDraw && r.dtcOrder != 0:
			return invariantf("a drawn DTC owing %d pushes", r.dtcOrder)
		case r.dtcOrder > dtcBudgets:
			return invariantf("DTC owing %d pushes, past the %d budgets built", r.dtcOrder, dtcBudgets)
		case r.dtc > dtzMax50:
			return invariantf("DTC wait %d past the 50-move window", r.dtc)
		}
	}
	return nil
}

// checkClocked checks a metric answered at the clock (DTM50, DTC): its
// class is a plain win or loss of the position's own class, or a draw, and
// its distance is 0 exactly for a draw.
func checkClocked(m string, cw, w wdlv, d uint16) error {
	switch {
	case cw != wWin && cw != wLose && cw != wDraw:
		return invariantf("%s class %d", m, cw)
	case cw != wDraw && cw != w:
		return invariantf("%s class %d for a class-%d position", m, cw, w)
	case cw == wDraw && d != 0:
		return invariantf("a drawn %s with distance %d", m, d)
	case cw != wDraw && d == 0:
		return invariantf("a decisive %s of 0 with no mate on the board", m)
	}
	return nil
}

// checkDistanceCell checks a DTZ or DTM cell read for class w: the storage
// value the generator gives cells whose distance does not matter may not
// stand for a decisive one, a win is never 0, a loss is 0 only at mate, and
// a plain win or loss zeroes inside the 50-move window.
func checkDistanceCell(k Kind, s, d uint16, w wdlv, n *node) error {
	switch {
	case s == storedNone:
		return invariantf("a class-%d cell holds the no-value marker", w)
	case d == 0 && (w == wWin || w == wCursed):
		return invariantf("a win with %s 0", k)
	case d == 0 && !n.pos.IsCheckmate():
		return invariantf("a loss with %s 0 and no mate on the board", k)
	case k == KindDTZ && w.decisive50() && d > dtzMax50:
		return invariantf("DTZ %d past the 50-move window for a class-%d cell", d, w)
	}
	return nil
}
