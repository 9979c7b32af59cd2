package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tbfs/tbfs/cmd/internal/cli"
	"github.com/tbfs/tbfs/cmd/internal/tables"
	"github.com/tbfs/tbfs/format/geister"
	"github.com/tbfs/tbfs/source"
	_ "github.com/tbfs/tbfs/source/all" // every transport for --tables URLs
	"github.com/tbfs/tbfs/source/fssource"
	"github.com/tbfs/tbfs/testdata"
)

// geisterLong is geister's help text.
const geisterLong = `Probes Geister perfect-information tables. A BOARD is either the readable
notation (six rows separated by '/', row 1 = the side to move's exit row
first, columns A..F; B R own blue/red, b r opponent blue/red, . empty) or a
48-character GAT board with every colour known. With no BOARD, boards are
read one per line from standard input ('#' starts a comment line) and
--parallel of them (default: one per CPU) are probed at once; the answers
print in input order.

The value is the stored byte: 0 no result within 210 plies (draw), odd v the
side to move wins in v plies, even v it loses in v plies. With --children
every legal move is listed, best first, with its child's value from the
child's side to move.

--tables may be given several times (searched in order); the default is the
fixture table built into the binary (the repository's testdata/geister: the
total-4 material), from any working directory. Frame manifests ("tbprobe
geister verify --manifest") are looked for beside the tables, or in the
local folder --manifests names, for tables in a location that holds none (a
read-only bucket): with one, each 8 KiB chunk of a table is checked as it is
read, instead of the whole table before its first answer. A table with no
manifest there is checked whole against its SHA256SUMS, as without one.

Play over the GAT protocol (docs/gat.md): "tbprobe geister play -h" (a
client driven by the tables) and "tbprobe geister serve -h" (a match server).
Check tables against their SHA256SUMS and write their frame manifests:
"tbprobe geister verify -h".

Exit status: 0 every board answered, 1 some could not be (bad board, missing
or corrupt table), 2 usage error or tables that cannot be opened at all.`

// geisterMoveJSON is one move of tbprobe geister --json --children.
type geisterMoveJSON struct {
	From    string `json:"from"`
	To      string `json:"to"`
	Dir     string `json:"dir"`
	Capture string `json:"capture"`
	Value   uint8  `json:"value"`
	Best    bool   `json:"best"`
}

// geisterJSON is one answer of tbprobe geister --json.
type geisterJSON struct {
	Board  string            `json:"board"`
	Value  *uint8            `json:"value,omitempty"`
	Result string            `json:"result,omitempty"`
	Plies  *int              `json:"plies,omitempty"`
	Moves  []geisterMoveJSON `json:"moves,omitempty"`
	Error  string            `json:"error,omitempty"`
}

// geisterOptions are the flags of "tbprobe geister".
type geisterOptions struct {
	tables   []string
	asJSON   bool
	children bool
	parallel int
	// metadataTTL bounds how long a table found missing or refused is
	// remembered, as the chess side's flag does.
	metadataTTL tables.MetadataTTL
	// manifests is the --manifests folder of frame manifests.
	manifests tables.ManifestDir
}

// newGeisterCmd is "tbprobe geister" with its build, verify, play and serve
// subcommands. Its own arguments are boards, probed as the root command
// probes FENs.
func newGeisterCmd() *cobra.Command {
	var o geisterOptions
	cmd := &cobra.Command{
		Use:   "geister [flags] [BOARD...]",
		Short: "Probe, build and play with Geister perfect-information tables",
		Long:  geisterLong,
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cli.Exit(runGeisterProbe(cmd.Context(), o, args, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
	fs := cmd.Flags()
	registerGeisterTables(fs, &o.tables)
	fs.BoolVar(&o.asJSON, "json", false, "print one JSON object per board")
	fs.BoolVar(&o.children, "children", false, "list every legal move with its child's value")
	fs.IntVar(&o.parallel, "parallel", runtime.GOMAXPROCS(0), "boards probed at once in batch mode (answers still print in input order)")
	o.metadataTTL.Register(fs, geisterTTLUsage)
	o.manifests.Register(fs)
	cmd.AddCommand(newGeisterBuildCmd(), newGeisterVerifyCmd(), newGeisterPlayCmd(), newGeisterServeCmd())
	return cmd
}

// runGeisterProbe answers every board and returns the exit status: 0 when
// every board was answered, 1 when some could not be (bad board, missing or
// corrupt table), 2 for a usage error or tables that cannot be opened at all.
func runGeisterProbe(ctx context.Context, o geisterOptions, boards []string, stdin io.Reader, stdout, stderr io.Writer) int {
	tables := o.tables
	workers, err := clampParallel("tbprobe geister", o.parallel, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "tbprobe geister: %v\n", err)
		return 2
	}
	tb, err := openGeister(ctx, tables, o.manifests, geister.Options{MissingTTL: o.metadataTTL.TTL()})
	if err != nil {
		fmt.Fprintf(stderr, "tbprobe geister: %v\n", err)
		return 2
	}
	defer tb.Close()

	out := bufio.NewWriter(stdout)
	defer out.Flush()
	failed := false
	work := func(in inputLine) geisterJSON {
		if in.err != nil {
			return geisterJSON{Board: in.text, Error: in.err.Error()}
		}
		return probeGeister(ctx, tb.Tablebase, in.text, o.children)
	}
	emit := func(ans geisterJSON) {
		if ans.Error != "" {
			failed = true
		}
		if o.asJSON {
			b, _ := json.Marshal(ans)
			out.Write(append(b, '\n'))
			return
		}
		writeGeisterText(out, ans)
	}
	feed := func(submit func(inputLine)) error {
		return eachInput(ctx, boards, stdin, "boards", submit)
	}
	if err := inOrder(workers, feed, work, emit, func() { out.Flush() }); err != nil {
		fmt.Fprintf(stderr, "tbprobe geister: %v\n", err)
		failed = true
	}
	if failed {
		return 1
	}
	return 0
}

// probeGeister answers one board.
func probeGeister(ctx context.Context, tb *geister.Tablebase, board string, children bool) geisterJSON {
	p, err := geister.Parse(board)
	if err != nil {
		return geisterJSON{Board: board, Error: err.Error()}
	}
	ans := geisterJSON{Board: p.String()}
	fill := func(v uint8) {
		r := geister.ResultOf(v)
		ans.Value, ans.Result, ans.Plies = &v, r.Outcome.String(), &r.Plies
	}
	if !children {
		v, err := tb.DTW(ctx, p)
		if err != nil {
			ans.Error = err.Error()
			return ans
		}
		fill(v)
		return ans
	}
	ms, err := tb.Moves(ctx, p)
	if err != nil {
		ans.Error = err.Error()
		return ans
	}
	fill(ms.Value)
	ans.Moves = make([]geisterMoveJSON, 0, len(ms.List))
	for _, mv := range ms.List {
		capture := "-"
		if mv.Capture != geister.Empty {
			capture = string(mv.Capture.Letter())
		}
		ans.Moves = append(ans.Moves, geisterMoveJSON{
			From: mv.From.Coord(), To: mv.To.Coord(), Dir: mv.Dir.String(),
			Capture: capture, Value: mv.Value, Best: mv.Best,
		})
	}
	return ans
}

// writeGeisterText prints one answer for people: the board, the value and
// its meaning, then the moves when asked for.
func writeGeisterText(w io.Writer, ans geisterJSON) {
	if ans.Error != "" {
		fmt.Fprintf(w, "%s\terror: %s\n", shown(ans.Board), ans.Error)
		return
	}
	fmt.Fprintf(w, "%s\t%d\t%s\n", ans.Board, *ans.Value, describe(*ans.Value))
	for _, m := range ans.Moves {
		best := ""
		if m.Best {
			best = "\tbest"
		}
		fmt.Fprintf(w, "  %s-%s %s capture %s\tchild %d (%s for the opponent)%s\n",
			m.From, m.To, m.Dir, m.Capture, m.Value, describe(m.Value), best)
	}
}

func describe(v uint8) string {
	r := geister.ResultOf(v)
	if r.Outcome == geister.Draw {
		return "draw"
	}
	return fmt.Sprintf("%s in %d", r.Outcome, r.Plies)
}

// geisterTTLUsage is --metadata-ttl's usage in the Geister commands.
const geisterTTLUsage = "how long a table found missing or refused answers that it is"

// registerGeisterTables adds the --tables flag of the commands that read
// Geister tables (openGeister's urls).
func registerGeisterTables(fs *pflag.FlagSet, tables *[]string) {
	fs.StringArrayVar(tables, "tables", nil, "`URL` of a Geister table location: a directory, file://, s3:// or http(s):// URL (repeatable, searched in order; default: the fixture table built in)")
}

// openGeister opens the Geister tables at urls (searched in order), or the
// fixture tables built into the binary when urls is empty, so "tbprobe
// geister" answers from any directory as the chess side does; opts
// configures the tablebase (a table found missing or refused is asked for
// again after opts.MissingTTL). Frame manifests are looked up in the
// folder manifests names (--manifests, opened as the chess commands open
// it), else beside the tables; not at all with opts.NoManifests.
func openGeister(ctx context.Context, urls []string, manifests tables.ManifestDir, opts geister.Options) (*geisterTables, error) {
	gt := &geisterTables{}
	ok := false
	defer func() {
		if !ok {
			gt.closeSources()
		}
	}()
	if len(urls) == 0 {
		fsys, err := testdata.GeisterRoot()
		if err != nil {
			return nil, err
		}
		gt.srcs = append(gt.srcs, fssource.New(fsys, testdata.GeisterName))
		gt.locs = append(gt.locs, "embedded:testdata/"+testdata.GeisterName)
	}
	for _, u := range urls {
		s, err := source.Open(ctx, u)
		if err != nil {
			return nil, fmt.Errorf("tables %s: %w", source.RedactURL(u), err)
		}
		gt.srcs = append(gt.srcs, s)
		gt.locs = append(gt.locs, u)
	}
	if !opts.NoManifests {
		m, err := manifests.Open()
		if err != nil {
			return nil, err
		}
		if m != nil {
			gt.manifests = m
			opts.Manifests = m
		}
	}
	tb, err := geister.Open(opts, gt.srcs...)
	if err != nil {
		return nil, err
	}
	gt.Tablebase = tb
	ok = true
	return gt, nil
}

// geisterTables is an open Geister tablebase with the sources under it.
type geisterTables struct {
	*geister.Tablebase
	srcs []source.Source
	// locs are the sources' locations, as given (a --tables URL, or
	// embedded:testdata/... for the built-in fixture).
	locs []string
	// manifests is the --manifests folder, nil when none was opened.
	manifests source.Source
}

// Close closes the tablebase, then its sources.
func (g *geisterTables) Close() error {
	return errors.Join(g.Tablebase.Close(), g.closeSources())
}

// closeSources closes the table sources and the manifests folder.
func (g *geisterTables) closeSources() error {
	var errs []error
	for _, s := range g.srcs {
		errs = append(errs, s.Close())
	}
	if g.manifests != nil {
		errs = append(errs, g.manifests.Close())
	}
	return errors.Join(errs...)
}
