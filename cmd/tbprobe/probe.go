package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/cmd/internal/cli"
	"github.com/tbfs/tbfs/cmd/internal/exepages"
	"github.com/tbfs/tbfs/render"
)

// probeLong is the main command's help text.
const probeLong = `Probes chess endgame tables: chesstb files, Syzygy files (.rtbw, .rtbz) or both
in the same --tables locations (WDL and DTZ from either, checked against
each other where both hold a position; DTM, DTC, DTM50 from chesstb; the
answer names the formats that gave it). With no FEN, FENs are read one per line
from standard input and answered in order as they arrive ('#' starts a comment
line). --parallel positions (default: one per CPU) are probed at once, so a
batch uses every core; the answers still print in input order. Missing
trailing FEN fields default (white to move, no castling, no en passant,
clocks 0 1) and '_' may stand for a space.

Exit status: 0 every position answered, 1 some failed (each failure on its own
line), 2 usage error.`

// probeOptions say how the main command answers each position.
type probeOptions struct {
	hmc      int // -1: keep the FEN's clock
	json     bool
	children bool
}

// newProbeCmd is the root command: FEN arguments or standard input in,
// one answer per position out. Its arguments are FENs, so a word that names
// no subcommand is probed as before subcommands existed.
func newProbeCmd() *cobra.Command {
	var tf tableFlags
	var opts probeOptions
	var parallel int
	cmd := &cobra.Command{
		Use:   "tbprobe [flags] [FEN...]",
		Short: "Probe endgame tablebases from the command line",
		Long:  probeLong,
		Example: `  tbprobe "8/8/8/5k2/8/8/1Q6/K7 w - - 0 1"
  tbprobe --json --children 8/8/8/5k2/8/8/1Q6/K7_w
  tbprobe --tables s3://bucket/chesstb < positions.txt`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cli.Exit(runProbe(cmd.Context(), &tf, opts, parallel, args, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
	fs := cmd.Flags()
	tf.register(fs)
	fs.IntVar(&opts.hmc, "hmc", -1, "half-move clock to probe at, overriding the FEN's fifth field (-1: the FEN's)")
	fs.BoolVar(&opts.json, "json", false, "print one JSON object per position")
	fs.IntVar(&parallel, "parallel", runtime.GOMAXPROCS(0), "positions probed at once in batch mode (answers still print in input order)")
	fs.BoolVar(&opts.children, "children", false, "list every legal move with the values after it, best first by DTZ under the 50-move rule at the FEN's clock (the prober's root ranking)")
	return cmd
}

// runProbe implements the main job and returns the exit status.
func runProbe(ctx context.Context, tf *tableFlags, opts probeOptions, parallel int, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	workers, err := clampParallel("tbprobe", parallel, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "tbprobe: %v\n", err)
		return 2
	}
	if opts.hmc > 1000 || opts.hmc < -1 {
		fmt.Fprintf(stderr, "tbprobe: --hmc %d: want a half-move clock from 0 to 1000\n", opts.hmc)
		return 2
	}
	ts, err := tf.open(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "tbprobe: %v\n", err)
		return 1
	}
	defer ts.Close()
	if len(args) == 0 {
		// FENs from standard input may run long and fill the caches:
		// start-up is over, and the code only it ran need not stay
		// resident (package exepages says why). A few FENs as arguments
		// are answered before this would pay.
		exepages.Release()
	}

	out := bufio.NewWriter(stdout)
	defer out.Flush()
	failed := false
	type answer struct {
		fen string
		rep *render.Report
		err error
	}
	work := func(in inputLine) answer {
		if in.err != nil {
			return answer{in.text, nil, in.err}
		}
		rep, err := probeFEN(ctx, ts, in.text, opts)
		return answer{in.text, rep, err}
	}
	emit := func(a answer) {
		if a.err != nil {
			failed = true
			fmt.Fprintf(stderr, "tbprobe: %s: %v\n", shown(a.fen), a.err)
			if opts.json {
				out.Write(render.JSON(&render.Report{FEN: a.fen, Error: a.err.Error()}))
			}
			return
		}
		if a.rep.Error != "" {
			failed = true
			fmt.Fprintf(stderr, "tbprobe: %s: %s\n", a.rep.FEN, a.rep.Error)
		}
		if opts.json {
			out.Write(render.JSON(a.rep))
		} else {
			out.Write(render.Text(a.rep))
		}
	}
	feed := func(submit func(inputLine)) error {
		return eachInput(ctx, args, stdin, "FENs", submit)
	}
	// Output is flushed whenever the next answer is not ready yet, so a
	// script feeding FENs one at a time through a pipe gets each answer
	// before it sends the next.
	if err := inOrder(workers, feed, work, emit, func() { out.Flush() }); err != nil {
		fmt.Fprintf(stderr, "tbprobe: %v\n", err)
		failed = true
	}
	if failed {
		return 1
	}
	return 0
}

// probeFEN parses and probes one FEN. With --children the moves are ordered
// and marked by render.Collect, that is by the prober's DTZ root ranking
// with the 50-move rule at the FEN's clock (after --hmc), and every
// category is lichess's at that clock. A position the tables have nothing
// for comes back as a report with Error set; an error return means the FEN
// was bad or the tables could not be read.
func probeFEN(ctx context.Context, ts *tableSet, fen string, opts probeOptions) (*render.Report, error) {
	pos, err := chess.ParseFEN(fen)
	if err != nil {
		return nil, err
	}
	if opts.hmc >= 0 {
		pos.SetHalfmoveClock(opts.hmc)
	}
	return render.Collect(ctx, ts.probe, &pos, opts.children)
}
