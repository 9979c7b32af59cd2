package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/tbfs/tbfs/battery"
	"github.com/tbfs/tbfs/cmd/internal/cli"
)

// batteryLong is battery's help text.
const batteryLong = `Runs the referee battery against a UCI engine: every row at N and 4N
nodes ("go nodes"), twice. Expected values come only from arbiters: the
rules, the endgame tables and the exhaustive mate prover. P rows must pass
every time; each group's Q rows must meet the group's quota. --rows adds
row files (a hidden part) in the shipped groups. --list prints the rows;
--check recomputes every row's expected properties from its arbiter
(the tables rows need --tables with the shipped 3-5 man set).

Exit status: 0 every P row passed and every Q group met its quota (or
--list, or --check found every row right), 1 otherwise, 2 usage error or a
bad row file, 3 repetitions disagreed (a test error).`

// newBatteryCmd is "tbprobe battery"; the logic is package battery's.
func newBatteryCmd() *cobra.Command {
	var c battery.Command
	var tf tableFlags
	cmd := &cobra.Command{
		Use:   "battery --engine PATH [--rows FILE]... [--nodes N] [--json] | --list | --check",
		Short: "Referee a UCI chess engine against rows judged only by arbiters",
		Long:  batteryLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if c.Nodes < 1 || c.Timeout <= 0 {
				return cli.UsageError(cmd, "--nodes and --timeout must be positive")
			}
			c.Tables = func(ctx context.Context) (battery.Prober, func(), error) {
				ts, err := tf.open(ctx)
				if err != nil {
					return nil, nil, err
				}
				return ts.tb, func() { ts.Close() }, nil
			}
			return cli.Exit(c.Run(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
	fs := cmd.Flags()
	tf.register(fs)
	fs.StringVar(&c.Engine, "engine", "", "`PATH` of the UCI engine's executable")
	fs.StringArrayVar(&c.Rows, "rows", nil, "a further row `FILE`, e.g. a hidden part (repeatable)")
	fs.Int64Var(&c.Nodes, "nodes", battery.DefaultNodes, "the node budget `N` (each row also runs at 4N)")
	fs.BoolVar(&c.JSON, "json", false, "print one JSON object per row, with its UCI logs")
	fs.BoolVar(&c.List, "list", false, "print the rows, one per line")
	fs.BoolVar(&c.Check, "check", false, "recompute every row's expected properties from its arbiter")
	fs.DurationVar(&c.Timeout, "timeout", battery.DefaultTimeout, "longest wait for any one answer of the engine")
	return cmd
}
