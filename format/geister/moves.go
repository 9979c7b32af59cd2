package geister

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/tbfs/tbfs/geister"
)

// MoveValue is a legal move with what it leads to.
type MoveValue struct {
	geister.Move
	// Child is the position after the move, from the new side to move's
	// point of view (see geister.Position.Play).
	Child geister.Position
	// Value is the child's stored byte from the child's side to move, as
	// DTW answers it (terminal children by the rules).
	Value uint8
	// Result is the outcome for the side that makes the move: a child
	// loss in t plies is a win in t+1, a child win in t a loss in t+1, and
	// capturing the opponent's last blue wins in 1.
	Result Result
	// Best marks the moves that keep the position's value.
	Best bool
}

// Moves is a position's value and the values of its moves.
type Moves struct {
	// Value is the position's stored byte (see DTW).
	Value uint8
	// Terminal reports that the game is decided before any move. When an
	// own blue stands on an exit its escape wins at once: List still has
	// every move, none marked best. When a side has run out of a colour
	// the game is over and List is empty.
	Terminal bool
	// List has every legal move, best first: wins by increasing distance,
	// then draws, then losses by decreasing distance; moves of equal worth
	// keep the order of geister.Position.Moves.
	List []MoveValue
}

// Best returns the moves marked best.
func (ms *Moves) Best() []MoveValue {
	var out []MoveValue
	for _, m := range ms.List {
		if m.Best {
			out = append(out, m)
		}
	}
	return out
}

// moverResult turns a child's value into the outcome for the mover.
func moverResult(t uint8, lastBlue bool) Result {
	switch {
	case lastBlue:
		return Result{Value: 1, Outcome: Win, Plies: 1}
	case t == 0:
		return Result{}
	case t%2 == 0:
		return Result{Value: t + 1, Outcome: Win, Plies: int(t) + 1}
	}
	return Result{Value: t + 1, Outcome: Loss, Plies: int(t) + 1}
}

// worth orders results for the mover: higher is better.
func worth(r Result) int {
	switch r.Outcome {
	case Win:
		return 1000 - r.Plies
	case Loss:
		return -1000 + r.Plies
	}
	return 0
}

// Moves returns p's value and every legal move with the value of the
// position it leads to. The best moves are those whose outcome equals the
// position's value; the position's value is checked against its children
// by the rule of FORMAT.md §2, and a table that breaks the rule gives an
// error matching ErrCorrupt. A child whose table is missing makes the
// whole answer fail with ErrNoTable.
func (tb *Tablebase) Moves(ctx context.Context, p geister.Position) (*Moves, error) {
	v, err := tb.DTW(ctx, p)
	if err != nil {
		return nil, err
	}
	out := &Moves{Value: v}
	_, terminal := p.Terminal()
	if terminal {
		out.Terminal = true
		if !MaterialOf(p).Valid() {
			// The game is over: there is nothing left to play.
			return out, nil
		}
	}
	moves := p.Moves(make([]geister.Move, 0, 32))
	out.List = make([]MoveValue, len(moves))
	children := make([]uint8, len(moves))
	lastBlue := false
	for i, mv := range moves {
		c := p.Play(mv)
		t, err := tb.DTW(ctx, c)
		if err != nil {
			return nil, fmt.Errorf("geister: move %v of %s: %w", mv, p, err)
		}
		lb := p.CapturesLastBlue(mv)
		lastBlue = lastBlue || lb
		children[i] = t
		out.List[i] = MoveValue{Move: mv, Child: c, Value: t, Result: moverResult(t, lb)}
	}
	sort.SliceStable(out.List, func(i, j int) bool { return worth(out.List[i].Result) > worth(out.List[j].Result) })
	if terminal {
		// The escape wins at once and beats every move.
		return out, nil
	}
	if want := Backup(children, lastBlue); want != v {
		return nil, fmt.Errorf("%w: %s holds %d but its moves give %d", ErrCorrupt, p, v, want)
	}
	if len(out.List) > 0 {
		top := worth(out.List[0].Result)
		for i := range out.List {
			out.List[i].Best = worth(out.List[i].Result) == top
		}
	}
	return out, nil
}

// Colouring is one position consistent with an observation, with its value.
type Colouring struct {
	Position geister.Position
	Value    uint8
	Result   Result
}

// MoveSummary is one move of an observation judged over every colouring.
type MoveSummary struct {
	geister.Move
	// Wins, Draws and Losses count the colourings by the move's outcome
	// for the mover; Missing counts those whose child has no table.
	Wins, Draws, Losses, Missing int
	// MaxWin is the longest win and MinLoss the quickest loss, in plies,
	// over the colourings (0 when there is none).
	MaxWin, MinLoss int
	// BestInAll reports that the move is best in every colouring.
	BestInAll bool
}

// ObservationValues is what the tables say about an observation.
type ObservationValues struct {
	Material Material
	// First is the table index of the first colouring; colouring i is at
	// First+i, so all were read from one run of bytes.
	First      uint64
	Colourings []Colouring
	// Escape reports an own blue on an exit: the escape wins at once in
	// every colouring, and no move is judged.
	Escape bool
	// Moves judges each legal move over all colourings, in the order of
	// geister.Position.Moves.
	Moves []MoveSummary
	// BestInAll lists the moves best in every colouring; empty when no
	// move is.
	BestInAll []geister.Move
	// Confident lists the moves the reference's "confident" policy picks
	// among the moves whose children are all in tables: fewest losing
	// colourings; if every such move loses somewhere, the longest
	// quickest loss; otherwise the most winning colourings, then the
	// shortest longest win. Distances are the mover's plies (a capture of
	// the last blue wins in 1). Empty when no move is fully covered.
	Confident []geister.Move
}

// ColouringValues returns every colouring of o with its value, read from
// the observation's one run of table bytes: colouring i is at index
// first+i of material m's obsblk table. (A table in the legacy layout has
// no such runs and is read one colouring at a time.) It fails with
// ErrNoTable when the table is missing.
func (tb *Tablebase) ColouringValues(ctx context.Context, o geister.Observation) (m Material, first uint64, colourings []Colouring, err error) {
	m, first, n, colouring, err := observationRun(o)
	if err != nil {
		return m, 0, nil, err
	}
	st, err := tb.table(ctx, m)
	if err != nil {
		return m, 0, nil, err
	}
	colourings = make([]Colouring, n)
	for i := range colourings {
		colourings[i].Position = colouring(i)
	}
	var buf [70]byte // C(8,4), the largest run
	run := buf[:n]
	if st.legacy {
		// The legacy layout has no observation runs: one read each.
		for i, c := range colourings {
			idx, err := st.index(c.Position)
			if err != nil {
				return m, 0, nil, err
			}
			if err := st.read(ctx, run[i:i+1], idx); err != nil {
				return m, 0, nil, err
			}
		}
	} else if err := st.read(ctx, run, first); err != nil {
		return m, 0, nil, err
	}
	for i := range colourings {
		c := &colourings[i]
		v := run[i]
		if err := checkValue(v, m, first+uint64(i)); err != nil {
			return m, 0, nil, err
		}
		if tv, ok := c.Position.Terminal(); ok && tv != v {
			return m, 0, nil, fmt.Errorf("%w: %v entry %d holds %d for a position the rules decide as %d", ErrCorrupt, m, first+uint64(i), v, tv)
		}
		if err := checkWinsInOne(v, c.Position, m, first+uint64(i)); err != nil {
			return m, 0, nil, err
		}
		c.Value, c.Result = v, ResultOf(v)
	}
	return m, first, colourings, nil
}

// ObservationValues returns the values of every colouring of o, read from
// the observation's one run of table bytes, and judges each legal move over
// all colourings (needing the children's tables too). It fails with
// ErrNoTable when the observation's own table is missing; a move whose
// children lack tables is only counted as Missing.
func (tb *Tablebase) ObservationValues(ctx context.Context, o geister.Observation) (*ObservationValues, error) {
	m, first, colourings, err := tb.ColouringValues(ctx, o)
	if err != nil {
		return nil, err
	}
	out := &ObservationValues{Material: m, First: first, Colourings: colourings}
	cols := make([]geister.Position, len(colourings))
	for i, c := range colourings {
		cols[i] = c.Position
	}
	if o.OwnBlue&geister.ExitMask != 0 {
		out.Escape = true
		return out, nil
	}
	legal := cols[0].Moves(nil)
	out.Moves = make([]MoveSummary, len(legal))
	for i, mv := range legal {
		out.Moves[i] = MoveSummary{Move: geister.Move{From: mv.From, To: mv.To, Dir: mv.Dir}, BestInAll: true}
	}
	for _, p := range cols {
		ms, err := tb.Moves(ctx, p)
		if err != nil && !errors.Is(err, ErrNoTable) {
			return nil, err
		}
		for i := range out.Moves {
			s := &out.Moves[i]
			if ms == nil {
				s.BestInAll = false
				if err := tb.countOne(ctx, p, s); err != nil {
					return nil, err
				}
				continue
			}
			for _, mv := range ms.List {
				if mv.From != s.From || mv.To != s.To {
					continue
				}
				s.add(mv.Result)
				s.BestInAll = s.BestInAll && mv.Best
			}
		}
	}
	for _, s := range out.Moves {
		if s.BestInAll {
			out.BestInAll = append(out.BestInAll, s.Move)
		}
	}
	out.Confident = confident(out.Moves)
	return out, nil
}

// countOne judges one move in one colouring when the colouring's full move
// list could not be had (some child lacks a table).
func (tb *Tablebase) countOne(ctx context.Context, p geister.Position, s *MoveSummary) error {
	mv := geister.Move{From: s.From, To: s.To, Dir: s.Dir}
	if p.OppBlue&s.To.Bit() != 0 {
		mv.Capture = geister.OppBlue
	} else if p.OppRed&s.To.Bit() != 0 {
		mv.Capture = geister.OppRed
	}
	t, err := tb.DTW(ctx, p.Play(mv))
	if errors.Is(err, ErrNoTable) {
		s.Missing++
		return nil
	}
	if err != nil {
		return err
	}
	s.add(moverResult(t, p.CapturesLastBlue(mv)))
	return nil
}

func (s *MoveSummary) add(r Result) {
	switch r.Outcome {
	case Win:
		s.Wins++
		s.MaxWin = max(s.MaxWin, r.Plies)
	case Loss:
		if s.Losses == 0 || r.Plies < s.MinLoss {
			s.MinLoss = r.Plies
		}
		s.Losses++
	default:
		s.Draws++
	}
}

// confident applies the reference confident player's ranking to the moves
// whose children all have tables.
func confident(ms []MoveSummary) []geister.Move {
	var covered []MoveSummary
	for _, s := range ms {
		if s.Missing == 0 {
			covered = append(covered, s)
		}
	}
	if len(covered) == 0 {
		return nil
	}
	minLoss := covered[0].Losses
	for _, s := range covered {
		minLoss = min(minLoss, s.Losses)
	}
	var out []geister.Move
	if minLoss > 0 {
		longest := 0
		for _, s := range covered {
			if s.Losses == minLoss {
				longest = max(longest, s.MinLoss)
			}
		}
		for _, s := range covered {
			if s.Losses == minLoss && s.MinLoss == longest {
				out = append(out, s.Move)
			}
		}
		return out
	}
	mostWins := 0
	for _, s := range covered {
		if s.Losses == 0 {
			mostWins = max(mostWins, s.Wins)
		}
	}
	shortest := -1
	for _, s := range covered {
		if s.Losses == 0 && s.Wins == mostWins && (shortest < 0 || s.MaxWin < shortest) {
			shortest = s.MaxWin
		}
	}
	for _, s := range covered {
		if s.Losses == 0 && s.Wins == mostWins && (mostWins == 0 || s.MaxWin == shortest) {
			out = append(out, s.Move)
		}
	}
	return out
}
