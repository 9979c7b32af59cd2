package chesstb

import (
	"context"
	"fmt"
	"sort"

	"github.com/tbfs/tbfs/chess"
)

// This file ranks the legal moves of a root position the way the reference
// prober does, with Fathom's rank and score scales (tbRank/tbScore), so an
// engine can use the answer as it would use Fathom's root probe.

// Ranker selects the metric RankMoves orders moves by.
type Ranker uint8

// The rankers.
const (
	// RankDTZ orders by distance to zeroing, as Fathom's DTZ root probe
	// does. Where the material carries DTC, a move is priced on DTC's line:
	// the plies to its next zeroing move, with the pawn pushes still owed
	// folded into the rank (1000 minus the pushes for a clean win, -1000
	// plus them for a clean loss; Fathom leaves those bands unused).
	RankDTZ Ranker = iota
	// RankWDL orders by class only (Fathom's WDL root probe). The class
	// ignores the clock, so this order is rule-true only right after a
	// zeroing move; RankDTZ and RankDTM with the 50-move rule read it.
	RankWDL
	// RankDTM orders by distance to mate: with the 50-move rule, by the
	// rule-true DTM50 verdict and distance, a mate the rule draws falling
	// in a band between draws and clean mates; without it, by plain DTM
	// (cursed wins count as wins, blessed losses as losses).
	RankDTM
)

// String names the ranker.
func (r Ranker) String() string {
	switch r {
	case RankDTZ:
		return "dtz"
	case RankWDL:
		return "wdl"
	case RankDTM:
		return "dtm"
	}
	return fmt.Sprintf("Ranker(%d)", uint8(r))
}

// RankOptions tune RankMoves.
type RankOptions struct {
	Ranker Ranker
	// Rule50 honours the 50-move rule (Fathom's useRule50): the half-move
	// clock of the root is threaded into every child.
	Rule50 bool
	// Repeated says the root has occurred before since the last zeroing
	// move (Fathom's hasRepeated); only RankDTZ reads it.
	Repeated bool
}

// RootMove is one legal move of the root with what the tables say of it.
type RootMove struct {
	Move chess.Move
	// After is the probe of the position after the move, from the point of
	// view of the side to move there, at the half-move clock the move
	// leaves (0 after a capture or a pawn move, one more otherwise).
	After Result
	// Category is the move's outcome for the mover as the ranker sees it.
	// With the 50-move rule it is the rule-true result, the child's class
	// at the clock the move leaves (RankDTZ and RankDTM report a win the
	// rule draws as CursedWin, a loss it saves as BlessedLoss); RankWDL
	// and the rankers without the rule report the clock-blind class.
	Category Category
	// Distance is the ranker's signed distance in plies, positive when the
	// mover wins: to the next zeroing move for RankDTZ (on DTC's line where
	// it prices the move), to mate for RankDTM, 0 for RankWDL.
	Distance int
	// Rank and Score are Fathom's tbRank and tbScore of the move.
	Rank, Score int
	// Best marks the moves ranked first (ties included).
	Best bool
}

// Fathom's value scale.
const (
	tbValuePawn   = 100
	tbValueDraw   = 0
	tbValueMate   = 32000
	tbMaxMatePly  = 255
	tbWinScore    = tbValueMate - tbMaxMatePly - 1
	rankWinBand   = 1000
	rankCursedTop = 899
)

// RankMoves returns every legal move of pos with its post-move values,
// ordered best first by the chosen ranker, the best ones marked. A root with
// no legal move gives an empty list. A move whose value no table answers
// fails the whole ranking: a best over part of the moves would be wrong.
func (tb *Tablebase) RankMoves(ctx context.Context, pos *chess.Position, opts RankOptions) ([]RootMove, error) {
	if opts.Ranker > RankDTM {
		return nil, fmt.Errorf("chesstb: unknown ranker %d", opts.Ranker)
	}
	leave, err := tb.enter()
	if err != nil {
		return nil, err
	}
	defer leave()
	if _, _, _, err := tb.root(ctx, pos); err != nil {
		return nil, err
	}
	clock := pos.HalfmoveClock()
	var out []RootMove
	for _, m := range pos.LegalMoves(nil) {
		child := pos.Play(m)
		rm := RootMove{Move: m}
		// The post-move probe, at the clock the move leaves; with the
		// 50-move rule that is also the clock the ranker threads, so the
		// ranking reuses it.
		n, after, done, err := tb.root(ctx, &child)
		var cr *fullResult
		if err == nil && !done {
			p := tb.getProber(ctx)
			var r fullResult
			r, err = p.probeNode(&n, child.HalfmoveClock(), 0)
			putProber(p)
			if err == nil {
				r.fill(&after)
				if opts.Rule50 && child.HalfmoveClock() == threadedClock(pos, m, clock) {
					cr = &r
				}
			}
		}
		if err != nil {
			return nil, fmt.Errorf("chesstb: ranking %s: %w", m.UCI(), err)
		}
		rm.After = after
		if err := tb.rankMove(ctx, pos, m, &child, clock, opts, cr, &rm); err != nil {
			return nil, fmt.Errorf("chesstb: ranking %s: %w", m.UCI(), err)
		}
		out = append(out, rm)
	}
	less := func(a, b *RootMove) bool {
		if a.Rank != b.Rank {
			return a.Rank > b.Rank
		}
		if opts.Ranker != RankDTZ || a.Rank == 0 {
			return false
		}
		return a.Distance < b.Distance
	}
	sort.SliceStable(out, func(i, j int) bool { return less(&out[i], &out[j]) })
	for i := range out {
		out[i].Best = !less(&out[0], &out[i])
	}
	return out, nil
}

// rankMove fills the ranker's fields of one move, probing the child at the
// clock the ranker threads into it.
// known, when set, is the child's answer at that clock already.
func (tb *Tablebase) rankMove(ctx context.Context, root *chess.Position, m chess.Move, child *chess.Position, clock int, opts RankOptions, known *fullResult, rm *RootMove) error {
	var err error
	p := tb.getProber(ctx)
	defer putProber(p)
	cn := p.nodeOf(child)
	zeroing := root.IsZeroing(m)
	if opts.Ranker == RankWDL {
		cw := wDraw
		if !cn.mat.bareKings() {
			if cw, err = p.wdlWithEP(&cn, 0); err != nil {
				return err
			}
			if cw == wIllegal {
				return errUnresolved
			}
		}
		v := cw.invert().category()
		if !opts.Rule50 {
			v = 2 * sign(v)
		}
		rm.Category = Category(v)
		rm.Rank = [...]int{-rankWinBand, -rankCursedTop, 0, rankCursedTop, rankWinBand}[v+2]
		rm.Score = [...]int{-tbWinScore, tbValueDraw - 2, tbValueDraw, tbValueDraw + 2, tbWinScore}[v+2]
		return nil
	}
	childClock := noClock
	if opts.Rule50 {
		childClock = clock + 1
		if zeroing {
			childClock = 0
		}
	}
	var cr fullResult
	if known != nil {
		cr = *known
	} else if cn.mat.bareKings() {
		cr = fullResult{wdl: wDraw, hasDTZ: true, hasDTM: true, hasDTM50: true, dtm50W: wDraw}
	} else if cr, err = p.probeNode(&cn, childClock, 0); err != nil {
		return err
	}
	if opts.Ranker == RankDTM {
		return rankDTM(&cr, opts.Rule50, rm)
	}
	return rankDTZ(root, m, child, &cr, clock, zeroing, opts, rm)
}

// threadedClock is the clock a move leaves: 0 after a capture or a pawn
// move, one more otherwise.
func threadedClock(pos *chess.Position, m chess.Move, clock int) int {
	if pos.IsZeroing(m) {
		return 0
	}
	return clock + 1
}

func sign(v int) int {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}

// RuleCategory is the class of the probed position under the 50-move rule
// with the count at clock (the position's half-move clock), for the side
// to move: Win or Loss where the result still stands, CursedWin or
// BlessedLoss where the tables' class is decisive but the clock draws it,
// Draw otherwise. The verdict is DTC's where the material has DTC, else
// DTM50's, else the zeroing distance against the clock; a side already
// checkmated has lost at any clock. ok is false when no answered metric
// prices the clock.
func (r *Result) RuleCategory(clock int) (c Category, ok bool) {
	dtz := r.DTZ
	if dtz < 0 {
		dtz = -dtz
	}
	switch {
	case r.Checkmate:
		return Loss, true
	case !r.HasWDL:
		return 0, false
	case r.HasDTC:
		return ruleClass(r.Category(), r.DTCClass, true, 0, false, clock), true
	case r.HasDTM50:
		return ruleClass(r.Category(), r.DTM50Class, true, 0, false, clock), true
	case r.HasDTZ:
		return ruleClass(r.Category(), 0, false, dtz, true, clock), true
	}
	return 0, false
}

// ruleClass is the class of the probed position under the 50-move rule at
// the clock it was probed at (see Result.RuleCategory); ok is false when
// no answered metric prices the clock.
func (r *fullResult) ruleClass(clock int) (w wdlv, ok bool) {
	var c Category
	switch {
	case r.hasDTC:
		c = ruleClass(Category(r.wdl.category()), Category(r.dtcW.category()), true, 0, false, clock)
	case r.hasDTM50:
		c = ruleClass(Category(r.wdl.category()), Category(r.dtm50W.category()), true, 0, false, clock)
	case r.hasDTZ:
		c = ruleClass(Category(r.wdl.category()), 0, false, int(r.dtz), true, clock)
	default:
		return wIllegal, false
	}
	return wdlv(c + 2), true
}

// ruleClass combines a clock-blind class with what prices the clock: a
// clocked verdict (DTC or DTM50: Win, Loss or Draw at the clock), or else
// the unsigned zeroing distance, which must fit into the plies the clock
// leaves. A decisive class the clock draws stays a try (CursedWin,
// BlessedLoss), as lichess reports it.
func ruleClass(flat, clocked Category, hasClocked bool, dtz int, hasDTZ bool, clock int) Category {
	if flat == Draw {
		return Draw
	}
	stands := false
	switch {
	case hasClocked:
		stands = clocked == Win || clocked == Loss
	case hasDTZ:
		stands = (flat == Win || flat == Loss) && dtz+clock <= dtzMax50
	}
	switch {
	case flat > 0 && stands:
		return Win
	case flat > 0:
		return CursedWin
	case stands:
		return Loss
	}
	return BlessedLoss
}

// rankDTZ is Fathom's DTZ ranking of one move, priced on DTC's line where a
// table carries it. With the 50-move rule a move is first placed by its
// rule-true result, the child's class at the clock the move leaves: the
// reference gives a non-zeroing move into a cursed or blessed child a
// clean-win rank, because chesstb's DTZ carries no cursed band (Syzygy's
// DTZ50″ stores those as 100 plus the distance), and so trades a win for
// a 50-move draw.
func rankDTZ(root *chess.Position, m chess.Move, child *chess.Position, cr *fullResult, clock int, zeroing bool, opts RankOptions, rm *RootMove) error {
	my := cr.wdl.invert()
	rule := my
	if opts.Rule50 {
		cw, ok := cr.ruleClass(threadedClock(root, m, clock))
		if !ok {
			if cr.dtzErr != nil {
				return cr.dtzErr
			}
			return errUnresolved
		}
		rule = cw.invert()
		if child.IsCheckmate() {
			rule = wWin // a mate stands at any clock
		}
	}
	rm.Category = Category(rule.category())
	var v int
	if zeroing {
		v = [...]int{-1, -101, 0, 101, 1}[my]
	} else {
		if !cr.hasDTZ {
			if cr.dtzErr != nil {
				return cr.dtzErr
			}
			return errUnresolved
		}
		// The child's distance in Syzygy's DTZ50'' convention: a cursed
		// or blessed class lies past 100.
		d := int(cr.dtz)
		if cr.wdl == wCursed || cr.wdl == wBlessed {
			d += dtzMax50
		}
		v = -signed(uint16(d), cr.wdl)
		v += sign(v)
	}
	// Fathom reports a mate in one as 1, not the child-derived 2. A mated
	// child stores DTZ 0 here (Fathom's tables give -1), which would
	// otherwise price the mate as a draw.
	if child.IsCheckmate() {
		v = 1
	}
	rank := 0
	switch {
	case v > 0:
		rank = rankWinBand
		if v+clock > 99 || opts.Repeated {
			rank = rankWinBand - (v + clock)
		}
	case v < 0:
		rank = -rankWinBand
		if -2*v+clock >= 100 {
			rank = -rankWinBand + (-v + clock)
		}
	}
	order, wait := -1, 0
	conversion := isConversion(root, m)
	switch {
	case conversion && my.decisive50():
		order, wait = 0, 1
	case !conversion && cr.hasDTC && cr.dtcW.decisive50():
		order = int(cr.dtcOrder)
		if zeroing && my == wWin {
			order++ // a push spends one of the winner's budget
		}
		wait = int(cr.dtc) + 1
		if zeroing {
			wait = 1
		}
	}
	if order >= 0 {
		switch rank {
		case rankWinBand:
			rank, v = rankWinBand-order, wait
		case -rankWinBand:
			rank, v = -rankWinBand+order, -wait
		}
	}
	bound := 1
	if opts.Rule50 {
		bound = 900
		// The rule-true result decides the band, whatever the distances
		// say: a result the clock still allows is a win (loss) rank, one
		// it draws is not.
		switch {
		case rule == wWin && rank < bound:
			rank = bound
		case rule != wWin && rank >= bound:
			rank = bound - 1
		case rule == wLose && rank > -bound:
			rank = -bound
		case rule != wLose && rank <= -bound:
			rank = 1 - bound
		}
		if rule == wDraw {
			rank = 0
		}
	}
	rm.Distance, rm.Rank = v, rank
	switch {
	case rank >= bound:
		rm.Score = tbWinScore
	case rank > 0:
		rm.Score = max(3, rank-800) * tbValuePawn / 200
	case rank == 0:
		rm.Score = tbValueDraw
	case rank > -bound:
		rm.Score = min(-3, rank+800) * tbValuePawn / 200
	default:
		rm.Score = -tbWinScore
	}
	return nil
}

// rankDTM is the reference's mate-distance ranking of one move.
func rankDTM(cr *fullResult, rule50 bool, rm *RootMove) error {
	if !cr.hasDTM {
		if cr.dtmErr != nil {
			return cr.dtmErr
		}
		return errUnresolved
	}
	if rule50 && !cr.hasDTM50 {
		if cr.dtm50Err != nil {
			return cr.dtm50Err
		}
		return errUnresolved
	}
	flatW := cr.wdl.invert()
	flatD := int(cr.dtm) + 1
	win := flatW == wWin || flatW == wCursed
	loss := flatW == wLose || flatW == wBlessed
	rm.Category = Category(wDraw.category())
	switch {
	case !rule50 && win:
		rm.Category, rm.Distance = Win, flatD
		rm.Rank = tbValueMate - flatD
	case !rule50 && loss:
		rm.Category, rm.Distance = Loss, -flatD
		rm.Rank = -tbValueMate + flatD
	case !rule50:
	case cr.dtm50W.invert() == wWin:
		d := int(cr.dtm50) + 1
		rm.Category, rm.Distance = Win, d
		rm.Rank = tbValueMate - d
	case cr.dtm50W.invert() == wLose:
		d := int(cr.dtm50) + 1
		rm.Category, rm.Distance = Loss, -d
		rm.Rank = -tbValueMate + d
	case win:
		// A forced mate the rule draws: a try between a draw and a clean
		// mate, the shorter mate the better try.
		rm.Category, rm.Distance = CursedWin, flatD
		rm.Rank = max(1, rankCursedTop-flatD)
		rm.Score = tbValueDraw + 2
		return nil
	case loss:
		rm.Category, rm.Distance = BlessedLoss, -flatD
		rm.Rank = min(-1, flatD-rankCursedTop)
		rm.Score = tbValueDraw - 2
		return nil
	}
	rm.Score = rm.Rank
	return nil
}
