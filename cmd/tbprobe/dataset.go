package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tbfs/tbfs/cmd/internal/cli"
	"github.com/tbfs/tbfs/dataset"
)

// newDatasetCmd is "tbprobe dataset" with its generate and verify
// subcommands; the logic is package dataset's.
func newDatasetCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "dataset generate|verify",
		Short: "Write or re-verify labelled position datasets (JSONL with provenance, see docs/dataset.md)",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newDatasetGenerateCmd(), newDatasetVerifyCmd())
	return cmd
}

// labeler opens the tables and returns a labeler over them.
func (tf *tableFlags) labeler(cmd *cobra.Command) (*dataset.Labeler, *tableSet, error) {
	ts, err := tf.open(cmd.Context())
	if err != nil {
		return nil, nil, err
	}
	return dataset.NewLabeler(dataset.Tables{TB: ts.tb, Sources: ts.set.Sources()}, cli.Version()), ts, nil
}

func newDatasetGenerateCmd() *cobra.Command {
	var tf tableFlags
	var opts dataset.GenerateOptions
	var clocks, fens, out string
	cmd := &cobra.Command{
		Use:   "generate [--tables URL]... [--count N] [--seed S] [--materials M,...] [--clock-range a-b] [--category C,...] [--fens FILE] --out DIR",
		Short: "Label positions from the tables into JSONL shards and a manifest",
		Long: `Labels random positions (of --materials, with clocks in --clock-range,
drawn with --seed), or the positions of a --fens file, from the tables, and
writes them as JSONL shards with a manifest.json into DIR (empty or new).
Exact rows carry every metric the tables hold, the rule-true category at
the row's clock, the moves that keep that result and the best-ranked
moves; rejected rows say why the position is outside the tables' domain.
The same parameters and tables always give byte-identical files.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return cli.UsageError(cmd, "--out is required")
			}
			lo, hi, err := parseRange(clocks)
			if err != nil {
				return cli.UsageError(cmd, "--clock-range: %v", err)
			}
			opts.ClockMin, opts.ClockMax = lo, hi
			if fens != "" {
				if opts.FENs, err = os.ReadFile(fens); err != nil {
					return err
				}
				if !cmd.Flags().Changed("count") {
					opts.Count = 0
				}
			}
			l, ts, err := tf.labeler(cmd)
			if err != nil {
				return err
			}
			defer ts.Close()
			start := time.Now()
			m, err := dataset.Generate(cmd.Context(), l, opts, out)
			if err != nil {
				return err
			}
			secs := time.Since(start).Seconds()
			fmt.Fprintf(cmd.OutOrStdout(), "%d rows (%d exact, %d rejected) in %d shards, %s: %.0f rows/s\n",
				m.Rows, m.Exact, m.Rejected, len(m.Files), out, float64(m.Rows)/secs)
			return nil
		},
	}
	fs := cmd.Flags()
	tf.register(fs)
	fs.IntVar(&opts.Count, "count", 100, "number of rows `N` (with --fens: at most N, default all)")
	fs.Uint64Var(&opts.Seed, "seed", 1, "seed `S` of the random positions")
	fs.StringSliceVar(&opts.Materials, "materials", nil, "materials to draw from, e.g. KQK,KRKR (default: every material with a WDL table)")
	fs.StringVar(&clocks, "clock-range", "0-0", "half-move clocks `a-b` of the random positions")
	fs.StringSliceVar(&opts.Categories, "category", nil, "keep only exact rows of these categories (win, cursed-win, draw, blessed-loss, loss)")
	fs.StringVar(&fens, "fens", "", "`FILE` of FENs, one a line, to label instead of random positions")
	fs.IntVar(&opts.ShardRows, "shard-rows", dataset.DefaultShardRows, "rows per shard file")
	fs.StringVar(&out, "out", "", "output `DIR` (created; must be empty)")
	fs.IntVar(&opts.Workers, "workers", 0, "positions labelled at once (default: every core; the rows do not depend on it)")
	return cmd
}

func newDatasetVerifyCmd() *cobra.Command {
	var tf tableFlags
	cmd := &cobra.Command{
		Use:   "verify [--tables URL]... DIR/manifest.json",
		Short: "Check a dataset's hashes and schema and replay every row against the tables",
		Long: `Checks every file the manifest lists (size, SHA-256, nothing unlisted),
validates every row against the schema and the rules, and replays every
row against the tables (whose files must hash as the row's provenance
says). Each problem is printed with its file, line and row number.

Exit status: 0 every check passed, 1 otherwise, 2 usage error.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, ts, err := tf.labeler(cmd)
			if err != nil {
				return err
			}
			defer ts.Close()
			rep, err := dataset.Verify(cmd.Context(), l, args[0])
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			for _, p := range rep.Problems {
				fmt.Fprintln(w, p)
			}
			status := "ok"
			if !rep.OK() {
				status = fmt.Sprintf("FAILED (%d problems)", len(rep.Problems))
			}
			fmt.Fprintf(w, "%d rows (%d exact, %d rejected), %d replayed: %s\n", rep.Rows, rep.Exact, rep.Rejected, rep.Replayed, status)
			if !rep.OK() {
				return cli.Exit(1)
			}
			return nil
		},
	}
	tf.register(cmd.Flags())
	return cmd
}

// parseRange reads "a-b" (or a single "a").
func parseRange(s string) (lo, hi int, err error) {
	a, b, found := strings.Cut(s, "-")
	if !found {
		b = a
	}
	lo, err1 := strconv.Atoi(a)
	hi, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("%q: want a-b, e.g. 0-99", s)
	}
	return lo, hi, nil
}
