package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/tbfs/tbfs/battery"
)

// batteryUsage is printed for -h and for usage errors.
const batteryUsage = `usage: tbprobe battery --engine PATH [--rows FILE]... [--nodes N] [--json]
       tbprobe battery --list [--rows FILE]...
       tbprobe battery --check --tables URL [--rows FILE]...

Runs the referee battery against a UCI engine: every row at N and 4N
nodes, twice; expected values come only from the rules, the tables and the
exhaustive mate prover. Exit 0 when every P row passes and every Q group
meets its quota, 1 otherwise, 2 for bad input, 3 when repetitions disagree.
--check recomputes every row's expected properties from its arbiter.
`

// runBattery implements "tbprobe battery"; the logic is package battery's.
func runBattery(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("battery", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, batteryUsage)
		fs.PrintDefaults()
	}
	var c battery.Command
	var rows urlList
	var tf tableFlags
	tf.register(fs)
	fs.StringVar(&c.Engine, "engine", "", "the UCI engine's executable")
	fs.Var(&rows, "rows", "a further row file, e.g. a hidden part (repeatable)")
	fs.Int64Var(&c.Nodes, "nodes", battery.DefaultNodes, "the node budget N (each row also runs at 4N)")
	fs.BoolVar(&c.JSON, "json", false, "print one JSON object per row, with its UCI logs")
	fs.BoolVar(&c.List, "list", false, "print the rows, one per line")
	fs.BoolVar(&c.Check, "check", false, "recompute every row's expected properties from its arbiter")
	fs.DurationVar(&c.Timeout, "timeout", battery.DefaultTimeout, "longest wait for any one answer of the engine")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 || c.Nodes < 1 || c.Timeout <= 0 {
		fs.Usage()
		return battery.ExitUsage
	}
	c.Rows = rows
	c.Tables = func(ctx context.Context) (battery.Prober, func(), error) {
		ts, err := tf.open(ctx)
		if err != nil {
			return nil, nil, err
		}
		return ts.tb, func() { ts.Close() }, nil
	}
	return c.Run(ctx, stdout, stderr)
}
