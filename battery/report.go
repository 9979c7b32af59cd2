package battery

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteText prints the report as a table: one line per row (its result
// at each budget, the last answer, why it failed), then each group's pass
// rate against its quota, then the verdict.
func (r *Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "engine: %s\n", r.Engine)
	fmt.Fprint(tw, "id\ttier\tgroup")
	if len(r.Rows) > 0 {
		for _, b := range r.Rows[0].Budgets {
			fmt.Fprintf(tw, "\t%d", b.Nodes)
		}
	}
	fmt.Fprint(tw, "\tbestmove\tscore\twhy\n")
	for i := range r.Rows {
		rr := &r.Rows[i]
		fmt.Fprintf(tw, "%s\t%s\t%s", rr.Row.ID, rr.Row.Tier, rr.Row.Group)
		for _, b := range rr.Budgets {
			v := "pass"
			switch {
			case b.Disagree != "":
				v = "ERROR"
			case !b.Pass:
				v = "fail"
			}
			fmt.Fprintf(tw, "\t%s", v)
		}
		last := rr.Attempts[len(rr.Attempts)-1]
		fmt.Fprintf(tw, "\t%s\t%s\t%s\n", last.BestMove, last.Score, rr.why())
	}
	fmt.Fprintf(tw, "\ngroup\tnodes\tpassed\tquota (v%d)\tmet\n", r.QuotaVersion)
	for _, g := range r.Groups {
		fmt.Fprintf(tw, "%s\t%d\t%d/%d\t%.2f\t%v\n", g.Group, g.Nodes, g.Passed, g.Rows, g.Quota, g.Met)
	}
	verdict := "PASS"
	if !r.OK() {
		verdict = "FAIL"
	}
	fmt.Fprintf(tw, "\n%s: %d mandatory rows failed, %d test errors (disagreeing repetitions)\n", verdict, r.MandatoryFailed, r.TestErrors)
	return tw.Flush()
}

// why is the first reason the row failed, "" when it passed.
func (rr *RowResult) why() string {
	for _, b := range rr.Budgets {
		if b.Disagree != "" {
			return fmt.Sprintf("at %d nodes %s", b.Nodes, b.Disagree)
		}
	}
	for _, a := range rr.Attempts {
		if a.Failure != "" {
			return fmt.Sprintf("rep %d at %d nodes: %s", a.Pass.Repetition, a.Pass.Nodes, a.Failure)
		}
	}
	return ""
}

// rowJSON is one row of the --json output.
type rowJSON struct {
	ID         string        `json:"id"`
	Tier       string        `json:"tier"`
	Group      string        `json:"group"`
	Arbiter    string        `json:"arbiter"`
	FEN        string        `json:"fen"`
	Properties string        `json:"properties"`
	Pass       bool          `json:"pass"`
	Why        string        `json:"why,omitempty"`
	Budgets    []budgetJSON  `json:"budgets"`
	Attempts   []attemptJSON `json:"attempts"`
}

type budgetJSON struct {
	Nodes    int64  `json:"nodes"`
	Pass     bool   `json:"pass"`
	Disagree string `json:"disagree,omitempty"`
}

type attemptJSON struct {
	Repetition int      `json:"repetition"`
	Nodes      int64    `json:"nodes"`
	BestMove   string   `json:"bestmove"`
	Score      string   `json:"score,omitempty"`
	Pass       bool     `json:"pass"`
	Failure    string   `json:"failure,omitempty"`
	Log        []string `json:"log"`
}

// WriteJSON prints one JSON object per row, each with every attempt and
// its complete UCI log.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	for i := range r.Rows {
		rr := &r.Rows[i]
		o := rowJSON{ID: rr.Row.ID, Tier: string(rr.Row.Tier), Group: rr.Row.Group, Arbiter: rr.Row.Arbiter.String(),
			FEN: rr.Row.FEN, Properties: rr.Row.Properties(), Pass: rr.Pass, Why: rr.why()}
		for _, b := range rr.Budgets {
			o.Budgets = append(o.Budgets, budgetJSON{b.Nodes, b.Pass, b.Disagree})
		}
		for _, a := range rr.Attempts {
			o.Attempts = append(o.Attempts, attemptJSON{a.Pass.Repetition, a.Pass.Nodes, a.BestMove, a.Score,
				a.Passed(), a.Failure, strings.Split(strings.TrimSuffix(a.Log, "\n"), "\n")})
		}
		if err := enc.Encode(o); err != nil {
			return err
		}
	}
	return nil
}

// List prints the rows one per line as the row file writes them: id, tier,
// group, arbiter, FEN, properties, source.
func List(w io.Writer, rows []Row) error {
	return WriteRows(w, rows)
}
