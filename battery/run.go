package battery

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/uci"
)

// Config says how to run the battery.
type Config struct {
	// Engine is the engine's executable, Args its arguments.
	Engine string
	Args   []string
	// Nodes is the budget N; every row also runs at 4N.
	Nodes int64
	// Repetitions is how often everything runs (at least 2: two
	// repetitions that disagree are a test error).
	Repetitions int
	// Timeout bounds each exchange with the engine: the handshake, each
	// isready, each search. An engine that does not answer in time fails
	// the row.
	Timeout time.Duration
	// StartTimeout, when set, bounds the engine's start and handshake
	// instead of Timeout, for an engine slow to start but quick to answer
	// (or a test that times only the exchanges after the handshake).
	StartTimeout time.Duration
	// Progress, when set, is called after each row of each pass.
	Progress func(pass Pass, row *Row, a Attempt)
}

// DefaultNodes is the budget N the shipped quotas were calibrated at.
const DefaultNodes = 40000

// DefaultTimeout bounds one exchange with the engine.
const DefaultTimeout = 10 * time.Second

// Pass is one run over every row: a repetition at one budget.
type Pass struct {
	Repetition int
	Nodes      int64
}

// Attempt is one row's answer in one pass.
type Attempt struct {
	Pass     Pass
	BestMove string
	// Score is the final exact score as UCI prints it, "" when none.
	Score string
	// Failure says why the row failed, "" when it passed.
	Failure string
	// Log is the complete UCI exchange of the row, and of the engine
	// start when the row began one.
	Log string
}

// Passed reports whether the attempt met every property.
func (a *Attempt) Passed() bool { return a.Failure == "" }

// BudgetResult is a row's outcome at one budget over the repetitions.
type BudgetResult struct {
	Nodes int64
	// Pass is set when every repetition passed and all agree.
	Pass bool
	// Disagree describes repetitions that answered differently (a test
	// error), "" when they agree.
	Disagree string
}

// RowResult is one row's outcome.
type RowResult struct {
	Row      *Row
	Attempts []Attempt // in pass order
	Budgets  []BudgetResult
	// Pass: every budget passed with agreeing repetitions.
	Pass bool
}

// GroupResult is a group's pass rate over its Q rows at one budget.
type GroupResult struct {
	Group  string
	Nodes  int64
	Passed int
	Rows   int
	Quota  float64
	Met    bool
}

// Report is the battery's outcome.
type Report struct {
	Engine       string // the engine's id name
	Rows         []RowResult
	Groups       []GroupResult
	QuotaVersion int
	// MandatoryFailed counts P rows that failed; TestErrors counts
	// budgets whose repetitions disagreed.
	MandatoryFailed, TestErrors int
}

// OK reports whether the battery passed: every P row in every repetition,
// every Q group at its quota, and no disagreeing repetitions.
func (r *Report) OK() bool {
	if r.MandatoryFailed > 0 || r.TestErrors > 0 {
		return false
	}
	for _, g := range r.Groups {
		if !g.Met {
			return false
		}
	}
	return true
}

// Run plays every row against the engine at N and 4N, each Repetitions
// times, and judges the answers. It fails only for a bad configuration;
// whatever the engine does is reported per row.
func Run(ctx context.Context, cfg Config, rows []Row, q *Quotas) (*Report, error) {
	if cfg.Nodes < 1 {
		return nil, fmt.Errorf("battery: node budget %d is not positive", cfg.Nodes)
	}
	if cfg.Repetitions < 2 {
		return nil, fmt.Errorf("battery: %d repetitions; at least 2 are needed to see disagreement", cfg.Repetitions)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = cfg.Timeout
	}
	for i := range rows {
		if _, ok := q.Rate[rows[i].Group]; !ok {
			return nil, fmt.Errorf("battery: %s: row %s: group %q has no quota", rows[i].Where, rows[i].ID, rows[i].Group)
		}
	}
	rep := &Report{QuotaVersion: q.Version, Rows: make([]RowResult, len(rows))}
	for i := range rows {
		rep.Rows[i].Row = &rows[i]
	}
	budgets := []int64{cfg.Nodes, 4 * cfg.Nodes}
	for r := 1; r <= cfg.Repetitions; r++ {
		for _, n := range budgets {
			p := Pass{Repetition: r, Nodes: n}
			d := &driver{cfg: cfg}
			for i := range rows {
				if err := ctx.Err(); err != nil {
					d.close()
					return nil, err
				}
				a := d.attempt(ctx, p, &rows[i])
				rep.Rows[i].Attempts = append(rep.Rows[i].Attempts, a)
				if cfg.Progress != nil {
					cfg.Progress(p, &rows[i], a)
				}
			}
			if rep.Engine == "" {
				rep.Engine = d.name
			}
			d.close()
		}
	}
	rep.judge(budgets, q)
	return rep, nil
}

// judge combines the attempts into budget, row and group results.
func (rep *Report) judge(budgets []int64, q *Quotas) {
	type key struct {
		group string
		nodes int64
	}
	passed, total := map[key]int{}, map[key]int{}
	for i := range rep.Rows {
		rr := &rep.Rows[i]
		rr.Pass = true
		for _, n := range budgets {
			var at []Attempt
			for _, a := range rr.Attempts {
				if a.Pass.Nodes == n {
					at = append(at, a)
				}
			}
			b := BudgetResult{Nodes: n, Pass: true}
			for _, a := range at {
				b.Pass = b.Pass && a.Passed()
				if a.BestMove != at[0].BestMove || a.Score != at[0].Score || a.Failure != at[0].Failure {
					b.Disagree = fmt.Sprintf("repetition %d answered %s, repetition %d answered %s",
						at[0].Pass.Repetition, at[0].summary(), a.Pass.Repetition, a.summary())
				}
			}
			if b.Disagree != "" {
				b.Pass = false
				rep.TestErrors++
			}
			rr.Budgets = append(rr.Budgets, b)
			rr.Pass = rr.Pass && b.Pass
			if rr.Row.Tier == Quota {
				k := key{rr.Row.Group, n}
				total[k]++
				if b.Pass {
					passed[k]++
				}
			}
		}
		if rr.Row.Tier == Mandatory && !rr.Pass {
			rep.MandatoryFailed++
		}
	}
	var groups []string
	for k := range total {
		groups = append(groups, k.group)
	}
	slices.Sort(groups)
	groups = slices.Compact(groups)
	for _, g := range groups {
		for _, n := range budgets {
			k := key{g, n}
			gr := GroupResult{Group: g, Nodes: n, Passed: passed[k], Rows: total[k], Quota: q.Rate[g]}
			// Integer comparison, so a rate of exactly the quota meets it
			// whatever the float rounding.
			gr.Met = float64(gr.Passed) >= gr.Quota*float64(gr.Rows)-1e-9
			rep.Groups = append(rep.Groups, gr)
		}
	}
}

func (a *Attempt) summary() string {
	s := "bestmove " + a.BestMove
	if a.Score != "" {
		s += ", score " + a.Score
	}
	if a.Failure != "" {
		s += " (" + a.Failure + ")"
	}
	return s
}

// driver keeps one engine process for a pass, starting a fresh one after
// any failure so one bad answer cannot leak into the next row.
type driver struct {
	cfg    Config
	engine *uci.Engine
	name   string
	logAt  int
}

func (d *driver) close() {
	if d.engine != nil {
		d.engine.Close()
		d.engine = nil
	}
}

// attempt runs one row and judges the answer.
func (d *driver) attempt(ctx context.Context, p Pass, row *Row) Attempt {
	a := Attempt{Pass: p}
	if d.engine == nil {
		sctx, cancel := context.WithTimeout(ctx, d.cfg.StartTimeout)
		e, err := uci.Start(sctx, d.cfg.Engine, d.cfg.Args...)
		cancel()
		if err != nil {
			a.Failure = "engine did not start: " + err.Error()
			if e != nil {
				a.Log = e.Log()
			}
			return a
		}
		// Reproducible searches: one thread, whatever the engine's default.
		_, _ = e.SetOption("Threads", "1")
		d.engine, d.logAt = e, 0
		if d.name == "" {
			d.name = e.Name
		}
	}
	e := d.engine
	from := d.logAt // 0 after a start: the handshake is part of this row's log
	search, err := func() (uci.Search, error) {
		sctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
		defer cancel()
		if err := e.NewGame(sctx); err != nil {
			return uci.Search{}, err
		}
		return e.GoNodes(sctx, row.FEN, p.Nodes)
	}()
	a.BestMove = search.BestMove
	if search.HasScore {
		a.Score = search.Final.String()
	}
	if err != nil {
		a.Failure = err.Error()
		d.close() // a fresh process for the next row
	} else {
		a.Failure = Judge(row, &search)
	}
	log := e.Log()
	a.Log = log[from:]
	d.logAt = len(log)
	return a
}

// Judge returns why search fails row, "" when it meets every property.
// Every row demands a legal best move (or, where the position has none,
// the answer that there is none).
func Judge(row *Row, search *uci.Search) string {
	pos, err := chess.ParseFEN(row.FEN)
	if err != nil {
		return "row: " + err.Error()
	}
	noMove := search.BestMove == "(none)" || search.BestMove == "0000"
	wantNone := slices.ContainsFunc(row.Props, func(p Property) bool { return p.Kind == "no-move" })
	switch {
	case wantNone && !noMove:
		return fmt.Sprintf("bestmove %s in a position with no legal move", search.BestMove)
	case !wantNone && noMove:
		return fmt.Sprintf("bestmove %s, but the position has legal moves", search.BestMove)
	case !wantNone:
		m, err := pos.ParseMove(search.BestMove)
		if err != nil || m.UCI() != search.BestMove {
			return fmt.Sprintf("illegal best move %q", search.BestMove)
		}
	}
	var fails []string
	for _, p := range row.Props {
		switch p.Kind {
		case "best-in":
			if !slices.Contains(p.Moves, search.BestMove) {
				fails = append(fails, fmt.Sprintf("best move %s not in {%s}", search.BestMove, strings.Join(p.Moves, ",")))
			}
		case "mate":
			if !search.HasScore || !search.Final.Mate || search.Final.MateIn != p.Mate {
				got := "no score"
				if search.HasScore {
					got = search.Final.String()
				}
				fails = append(fails, fmt.Sprintf("final score %s, want mate %d", got, p.Mate))
			}
		case "no-mate":
			for _, s := range search.Scores {
				if s.Mate {
					fails = append(fails, fmt.Sprintf("reported %s where no mate exists", s))
					break
				}
			}
		}
	}
	return strings.Join(fails, "; ")
}
