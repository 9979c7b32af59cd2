package battery

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/format/chesstb"
	"github.com/tbfs/tbfs/retro"
)

// Prober answers table probes; *chesstb.Tablebase is one.
type Prober interface {
	Probe(ctx context.Context, pos *chess.Position) (chesstb.Result, error)
}

// ErrNoTables reports a tables row checked without tables to read.
var ErrNoTables = errors.New("battery: the tables arbiter needs tables")

// Outcome is a result under the 50-move rule for the side to move, the
// only thing a referee may hold a move to: a win the clock draws is a draw.
type Outcome int

// The outcomes, ordered worst first.
const (
	Lost Outcome = iota - 1
	Drawn
	Won
)

// String names the outcome.
func (o Outcome) String() string {
	return [...]string{"loss", "draw", "win"}[o+1]
}

func outcomeOf(c chesstb.Category) Outcome {
	switch c {
	case chesstb.Win:
		return Won
	case chesstb.Loss:
		return Lost
	}
	return Drawn // CursedWin and BlessedLoss are draws under the rule
}

// RuleOutcome is the tables' result of pos for the side to move under the
// 50-move rule at pos's half-move clock, and its clock-blind class.
func RuleOutcome(ctx context.Context, tb Prober, pos *chess.Position) (Outcome, chesstb.Category, error) {
	r, err := tb.Probe(ctx, pos)
	if err != nil {
		return 0, 0, err
	}
	c, ok := r.RuleCategory(pos.HalfmoveClock())
	if !ok {
		return 0, 0, fmt.Errorf("battery: no table metric prices the clock of %s", pos.FEN())
	}
	flat := r.Category()
	if r.Checkmate {
		flat = chesstb.Loss
	}
	return outcomeOf(c), flat, nil
}

// MoveOutcomes returns the tables' rule-true result for the mover of every
// legal move of pos: the negated result of the position the move leaves,
// at the clock it leaves.
func MoveOutcomes(ctx context.Context, tb Prober, pos *chess.Position) (map[string]Outcome, error) {
	out := map[string]Outcome{}
	for _, m := range pos.LegalMoves(nil) {
		child := pos.Play(m)
		o, _, err := RuleOutcome(ctx, tb, &child)
		if err != nil {
			return nil, fmt.Errorf("battery: %s after %s: %w", pos.FEN(), m.UCI(), err)
		}
		out[m.UCI()] = -o
	}
	return out, nil
}

// KeepingMoves returns the moves that keep the best rule-true result the
// mover has, sorted, and that result.
func KeepingMoves(outcomes map[string]Outcome) ([]string, Outcome) {
	best := Lost
	for _, o := range outcomes {
		best = max(best, o)
	}
	var keep []string
	for m, o := range outcomes {
		if o == best {
			keep = append(keep, m)
		}
	}
	slices.Sort(keep)
	return keep, best
}

// Expect computes the properties the arbiter gives pos. tb is read only
// by the tables arbiter. A position about which the arbiter decides
// nothing an engine could get wrong is an error: such a row tests nothing.
func Expect(ctx context.Context, a Arbiter, pos chess.Position, tb Prober) ([]Property, error) {
	switch a.Kind {
	case "rules":
		return expectRules(&pos)
	case "tables":
		if tb == nil {
			return nil, ErrNoTables
		}
		return expectTables(ctx, tb, &pos)
	case "prover":
		return expectMate(ctx, &pos, a.Bound)
	}
	return nil, fmt.Errorf("battery: unknown arbiter %q", a.Kind)
}

// expectRules reads what move generation alone decides: no legal move
// (checkmate: mated now; stalemate: a draw), a single legal move, and a
// dead position (insufficient material: never a mate).
func expectRules(pos *chess.Position) ([]Property, error) {
	legal := pos.LegalMoves(nil)
	switch {
	case len(legal) == 0 && pos.InCheck():
		return []Property{{Kind: "no-move"}, {Kind: "mate", Mate: 0}}, nil
	case len(legal) == 0:
		return []Property{{Kind: "no-move"}, {Kind: "no-mate"}}, nil
	}
	var props []Property
	if len(legal) == 1 {
		props = append(props, Property{Kind: "best-in", Moves: []string{legal[0].UCI()}})
	}
	if pos.InsufficientMaterial() {
		props = append(props, Property{Kind: "no-mate"})
	}
	if props == nil {
		return nil, fmt.Errorf("battery: the rules decide nothing in %s (more than one legal move, mating material)", pos.FEN())
	}
	return props, nil
}

// expectTables reads the tables: the moves that keep the rule-true
// result, when some move does not; and no mate score when the rule draws
// a position the clock-blind tables call decisive.
func expectTables(ctx context.Context, tb Prober, pos *chess.Position) ([]Property, error) {
	root, flat, err := RuleOutcome(ctx, tb, pos)
	if err != nil {
		return nil, err
	}
	outcomes, err := MoveOutcomes(ctx, tb, pos)
	if err != nil {
		return nil, err
	}
	keep, best := KeepingMoves(outcomes)
	if len(outcomes) > 0 && best != root {
		return nil, fmt.Errorf("battery: tables disagree in %s: the position is a %s, its best move a %s", pos.FEN(), root, best)
	}
	var props []Property
	if len(keep) < len(outcomes) {
		props = append(props, Property{Kind: "best-in", Moves: keep})
	}
	if root == Drawn && flat != chesstb.Draw {
		props = append(props, Property{Kind: "no-mate"})
	}
	if props == nil {
		return nil, fmt.Errorf("battery: the tables decide nothing in %s (every move keeps the %s)", pos.FEN(), root)
	}
	return props, nil
}

// expectMate reads the exhaustive prover (50-move rule on): the exact
// mate distance, and for the mating side the moves that mate that fast.
func expectMate(ctx context.Context, pos *chess.Position, bound int) ([]Property, error) {
	res, err := retro.ProveMate(ctx, *pos, bound, true)
	if err != nil {
		return nil, err
	}
	switch res.Kind {
	case retro.Mated:
		return []Property{{Kind: "mate", Mate: -res.Moves}}, nil
	case retro.NoMate:
		return nil, fmt.Errorf("battery: no mate within %d moves in %s", bound, pos.FEN())
	}
	var mating []string
	for _, m := range pos.LegalMoves(nil) {
		child := pos.Play(m)
		r, err := retro.ProveMate(ctx, child, res.Moves-1, true)
		if err != nil {
			return nil, err
		}
		if r.Kind == retro.Mated && r.Moves == res.Moves-1 {
			mating = append(mating, m.UCI())
		}
	}
	slices.Sort(mating)
	return []Property{{Kind: "mate", Mate: res.Moves}, {Kind: "best-in", Moves: mating}}, nil
}
