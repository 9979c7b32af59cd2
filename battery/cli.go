package battery

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"
)

// Exit statuses of the battery command.
const (
	ExitPass      = 0 // every P row passed, every Q group met its quota
	ExitFail      = 1 // a P row failed or a group missed its quota (or the checker found a row at fault)
	ExitUsage     = 2 // bad flags, or a row or quota file that does not parse
	ExitTestError = 3 // repetitions disagreed: the result means nothing
)

// Command is tbprobe battery's options, filled from its flags, so the
// command line front end only parses.
type Command struct {
	Engine  string   // --engine
	Rows    []string // --rows, further row files (a hidden part)
	Nodes   int64    // --nodes
	JSON    bool     // --json
	List    bool     // --list
	Check   bool     // --check
	Timeout time.Duration
	// Tables opens the tables for --check; nil when none are configured.
	Tables func(ctx context.Context) (Prober, func(), error)
}

// Run executes the command and returns its exit status.
func (c *Command) Run(ctx context.Context, stdout, stderr io.Writer) int {
	q, err := ShippedQuotas()
	if err != nil {
		fmt.Fprintln(stderr, "tbprobe battery:", err)
		return ExitUsage
	}
	rows, err := c.loadRows()
	if err != nil {
		fmt.Fprintln(stderr, "tbprobe battery:", err)
		return ExitUsage
	}
	switch {
	case c.List:
		if err := List(stdout, rows); err != nil {
			fmt.Fprintln(stderr, "tbprobe battery:", err)
			return ExitFail
		}
		return ExitPass
	case c.Check:
		return c.check(ctx, rows, q, stdout, stderr)
	case c.Engine == "":
		fmt.Fprintln(stderr, "tbprobe battery: --engine PATH is required (or --list, --check)")
		return ExitUsage
	}
	nodes := c.Nodes
	if nodes == 0 {
		nodes = DefaultNodes
	}
	cfg := Config{Engine: c.Engine, Nodes: nodes, Repetitions: 2, Timeout: c.Timeout}
	cfg.Progress = func(p Pass, row *Row, a Attempt) {
		if !a.Passed() {
			fmt.Fprintf(stderr, "rep %d, %d nodes: %s: %s\n", p.Repetition, p.Nodes, row.ID, a.Failure)
		}
	}
	rep, err := Run(ctx, cfg, rows, q)
	if err != nil {
		fmt.Fprintln(stderr, "tbprobe battery:", err)
		return ExitUsage
	}
	if c.JSON {
		err = rep.WriteJSON(stdout)
	} else {
		err = rep.WriteText(stdout)
	}
	if err != nil {
		fmt.Fprintln(stderr, "tbprobe battery:", err)
		return ExitFail
	}
	switch {
	case rep.TestErrors > 0:
		return ExitTestError
	case !rep.OK():
		return ExitFail
	}
	return ExitPass
}

// loadRows returns the shipped rows and every --rows file's.
func (c *Command) loadRows() ([]Row, error) {
	rows, err := Shipped()
	if err != nil {
		return nil, err
	}
	ids := map[string]string{}
	for _, r := range rows {
		ids[r.ID] = r.Where
	}
	for _, name := range c.Rows {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		more, err := ParseRows(f, name)
		f.Close()
		if err != nil {
			return nil, err
		}
		for _, r := range more {
			if prev, dup := ids[r.ID]; dup {
				return nil, fmt.Errorf("%s: row id %s already used at %s", r.Where, r.ID, prev)
			}
			ids[r.ID] = r.Where
		}
		rows = append(rows, more...)
	}
	return rows, nil
}

func (c *Command) check(ctx context.Context, rows []Row, q *Quotas, stdout, stderr io.Writer) int {
	var tb Prober
	if c.Tables != nil {
		t, closeTables, err := c.Tables(ctx)
		if err != nil {
			fmt.Fprintln(stderr, "tbprobe battery:", err)
			return ExitUsage
		}
		defer closeTables()
		tb = t
	}
	if err := Check(ctx, rows, tb, q.Groups()); err != nil {
		fmt.Fprintln(stderr, err)
		return ExitFail
	}
	fmt.Fprintf(stdout, "%d rows: every expected property is the arbiter's\n", len(rows))
	return ExitPass
}
