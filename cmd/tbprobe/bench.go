package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/cmd/internal/cli"
	"github.com/tbfs/tbfs/cmd/internal/exepages"
	"github.com/tbfs/tbfs/cmd/internal/progress"
	"github.com/tbfs/tbfs/dataset"
	"github.com/tbfs/tbfs/format/chesstb"
	"github.com/tbfs/tbfs/source/metrics"
)

// benchLong is bench's help text.
const benchLong = `Probes every position twice: cold (fresh tables, empty caches) and warm (the
same tables again), and reports for each pass probes/s, latency p50/p99, the
source cache's hit rate, the requests (opens: a HEAD or the GET that opens an
object; reads; lists) and bytes the transport served, and
the process's CPU time (probes per CPU second). A probe asks for every
metric (Probe), or with --wdl for the WDL class alone.
Positions come from a file (one FEN per line) or are drawn at random from
the materials the tables hold (legal placements, either side to move) with a
fixed seed; --write saves them.

With --fresh, a pass before those probes each position with tables opened
afresh, as a fresh process would, and reports per probe the requests sent
to the transports and the round trips they cost: the longest chain of
requests each sent after the one before it was answered, which over a
remote mirror or bucket is what a cold probe waits for (median, p90 and
max of each; a listing read from several index pages counts each page).`

// benchPass is what one pass over the positions measured.
type benchPass struct {
	Name         string  `json:"pass"`
	Probes       int     `json:"probes"`
	Errors       int     `json:"errors"`
	Seconds      float64 `json:"seconds"`
	ProbesPerSec float64 `json:"probes_per_sec"`
	CPUSeconds   float64 `json:"cpu_seconds"`        // the whole process's, this pass; 0 where unknown
	ProbesPerCPU float64 `json:"probes_per_cpu_sec"` // 0 where unknown
	P50Micros    float64 `json:"p50_us"`
	P99Micros    float64 `json:"p99_us"`
	CacheHitRate float64 `json:"cache_hit_rate"` // source cache; -1 without one
	// Requests counts every request the transports sent: Opens (each a
	// HEAD, or the GET of an object's first bytes that tells its size),
	// Reads (ranged GETs) and Lists (a listing or a manifest).
	Requests       int64   `json:"requests"`
	Opens          int64   `json:"opens"`
	Reads          int64   `json:"reads"`
	Lists          int64   `json:"lists"`
	Bytes          int64   `json:"bytes"`
	RequestsPerPrb float64 `json:"requests_per_probe"`
	BlockCacheUsed int64   `json:"block_cache_bytes"`
	// PeakRSS is the process's peak resident set size so far (the
	// maximum /usr/bin/time reports), 0 where the system does not say.
	PeakRSS int64 `json:"peak_rss_bytes"`
	// LZMA is what the pass decompressed from each distance kind's LZMA
	// blocks, the kinds it decoded nothing of left out.
	LZMA []lzmaPass `json:"lzma,omitempty"`
}

// lzmaPass is one table kind's LZMA decoding in a pass (chesstb.DecodeStat).
type lzmaPass struct {
	Kind       string `json:"kind"`
	Blocks     int64  `json:"blocks"`
	BlockBytes int64  `json:"block_bytes"`
	Decoded    int64  `json:"decoded_bytes"`
}

// lzmaKinds are the table kinds whose blocks are LZMA.
var lzmaKinds = []chesstb.Kind{chesstb.KindDTZ, chesstb.KindDTC, chesstb.KindDTM, chesstb.KindDTM50}

// lzmaSince is what each LZMA kind decoded since before was taken.
func lzmaSince(tb *chesstb.Tablebase, before []chesstb.DecodeStat) []lzmaPass {
	var out []lzmaPass
	for i, k := range lzmaKinds {
		st := tb.DecodeStats(k)
		if d := (lzmaPass{Kind: k.String(), Blocks: st.Blocks - before[i].Blocks,
			BlockBytes: st.BlockBytes - before[i].BlockBytes, Decoded: st.Decoded - before[i].Decoded}); d.Blocks != 0 || d.Decoded != 0 {
			out = append(out, d)
		}
	}
	return out
}

// benchOptions are bench's flags.
type benchOptions struct {
	posFile, write string
	random         int
	seed           uint64
	parallel       int
	wdlOnly        bool
	coldOnly       bool
	fresh          bool
	asJSON         bool
	cpuProfile     string
}

// newBenchCmd is "tbprobe bench".
func newBenchCmd() *cobra.Command {
	var tf tableFlags
	var o benchOptions
	cmd := &cobra.Command{
		Use:   "bench (--positions FILE | --random N [--seed S] [--write FILE]) [flags]",
		Short: "Measure probes/s, latency and transport cost over a set of positions",
		Long:  benchLong,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cli.Exit(runBench(cmd.Context(), &tf, o, args, cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
	fs := cmd.Flags()
	tf.register(fs)
	fs.StringVar(&o.posFile, "positions", "", "file of FENs, one per line")
	fs.IntVar(&o.random, "random", 0, "draw this many random legal positions of the tables' materials instead")
	fs.Uint64Var(&o.seed, "seed", 1, "seed for --random")
	fs.StringVar(&o.write, "write", "", "with --random, also write the positions to this file")
	fs.IntVar(&o.parallel, "parallel", 1, "concurrent probers")
	fs.BoolVar(&o.wdlOnly, "wdl", false, "probe the WDL class only, not every metric")
	fs.BoolVar(&o.coldOnly, "cold-only", false, "make the cold pass only, so the whole process can be timed against a prober that makes one pass")
	fs.BoolVar(&o.fresh, "fresh", false, "first probe each position with tables opened afresh, and report the requests and round trips of each cold probe")
	fs.BoolVar(&o.asJSON, "json", false, "print one JSON object per pass")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to `FILE` (for go tool pprof, or as cmd/tbprobe/default.pgo)")
	return cmd
}

// runBench runs both passes and returns the exit status.
func runBench(ctx context.Context, tf *tableFlags, o benchOptions, args []string, stdout, stderr io.Writer) int {
	if (o.posFile == "") == (o.random == 0) || o.random < 0 || o.parallel < 1 || len(args) > 0 {
		fmt.Fprintln(stderr, "tbprobe bench: give exactly one of --positions FILE or --random N (and --parallel ≥ 1)")
		return 2
	}
	if n, err := clampParallel("tbprobe bench", o.parallel, stderr); err == nil {
		o.parallel = n
	}
	if o.cpuProfile != "" {
		stop, err := startCPUProfile(o.cpuProfile)
		if err != nil {
			fmt.Fprintf(stderr, "tbprobe bench: %v\n", err)
			return 1
		}
		defer func() {
			if err := stop(); err != nil {
				fmt.Fprintf(stderr, "tbprobe bench: %v\n", err)
			}
		}()
	}
	var fens []string
	if o.posFile != "" {
		var err error
		if fens, err = readFENs(o.posFile); err != nil {
			fmt.Fprintf(stderr, "tbprobe bench: %v\n", err)
			return 1
		}
	} else {
		ts, err := tf.open(ctx)
		if err != nil {
			fmt.Fprintf(stderr, "tbprobe bench: %v\n", err)
			return 1
		}
		fens, err = randomPositions(ctx, ts, o.random, o.seed)
		ts.Close()
		if err != nil {
			fmt.Fprintf(stderr, "tbprobe bench: %v\n", err)
			return 1
		}
		if o.write != "" {
			if err := os.WriteFile(o.write, []byte(strings.Join(fens, "\n")+"\n"), 0o644); err != nil {
				fmt.Fprintf(stderr, "tbprobe bench: %v\n", err)
				return 1
			}
		}
	}
	positions := make([]chess.Position, len(fens))
	for i, fen := range fens {
		p, err := chess.ParseFEN(fen)
		if err != nil {
			fmt.Fprintf(stderr, "tbprobe bench: position %d %q: %v\n", i+1, fen, err)
			return 1
		}
		positions[i] = p
	}
	if len(positions) == 0 {
		fmt.Fprintln(stderr, "tbprobe bench: no positions")
		return 1
	}
	// A bar on a terminal only: each pass's result line says the rest.
	bar := progress.New(stderr, progress.Options{Unit: "probes"})
	code := 0
	if o.fresh {
		step := bar.Start("fresh", int64(len(positions)))
		pass, firstErr := freshRun(ctx, tf, positions, o.wdlOnly, step.Add)
		if ctx.Err() != nil {
			step.Stop()
		} else {
			step.Done()
		}
		if o.asJSON {
			b, _ := json.Marshal(pass)
			fmt.Fprintf(stdout, "%s\n", b)
		} else {
			writeFresh(stdout, &pass)
		}
		if firstErr != nil {
			fmt.Fprintf(stderr, "tbprobe bench: %d of %d fresh probes failed; first: %v\n", pass.Errors, pass.Probes, firstErr)
			code = 1
		}
		if ctx.Err() != nil {
			return 1
		}
	}
	ts, err := tf.open(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "tbprobe bench: %v\n", err)
		return 1
	}
	defer ts.Close()
	passes := []string{"cold", "warm"}
	if o.coldOnly {
		passes = passes[:1]
	}
	// Start-up (package initialisation, the tables opened, the positions
	// read or drawn) is over: the code only it ran need not stay resident
	// through the passes (package exepages says why).
	exepages.Release()
	for _, name := range passes {
		probe := func(ctx context.Context, pos *chess.Position) error {
			_, err := ts.tb.Probe(ctx, pos)
			return err
		}
		if o.wdlOnly {
			probe = func(ctx context.Context, pos *chess.Position) error {
				_, err := ts.tb.WDL(ctx, pos)
				return err
			}
		}
		step := bar.Start(name, int64(len(positions)))
		pass, firstErr := benchRun(ctx, ts, positions, o.parallel, probe, step.Add)
		if ctx.Err() != nil {
			step.Stop()
		} else {
			step.Done()
		}
		pass.Name = name
		if o.asJSON {
			b, _ := json.Marshal(pass)
			fmt.Fprintf(stdout, "%s\n", b)
		} else {
			writePass(stdout, &pass)
		}
		if firstErr != nil {
			fmt.Fprintf(stderr, "tbprobe bench: %d of %d probes failed; first: %v\n", pass.Errors, pass.Probes, firstErr)
			code = 1
		}
	}
	return code
}

// freshPass is what the fresh pass measured: each probe's cost with
// tables opened for it alone.
type freshPass struct {
	Name   string `json:"pass"`
	Probes int    `json:"probes"`
	Errors int    `json:"errors"`
	// RoundTrips are each probe's longest chain of requests (median,
	// p90, max), Requests its requests (median, max, mean).
	RoundTripsP50 int     `json:"round_trips_median"`
	RoundTripsP90 int     `json:"round_trips_p90"`
	RoundTripsMax int     `json:"round_trips_max"`
	RequestsP50   int     `json:"requests_median"`
	RequestsMax   int     `json:"requests_max"`
	RequestsMean  float64 `json:"requests_mean"`
	P50Micros     float64 `json:"p50_us"`
	P90Micros     float64 `json:"p90_us"`
	MaxMicros     float64 `json:"max_us"`
}

// freshRun probes each position with tables opened for it alone, from
// the open to the answer, calling advance(1) after each.
func freshRun(ctx context.Context, tf *tableFlags, positions []chess.Position, wdlOnly bool, advance func(int64)) (freshPass, error) {
	pass := freshPass{Name: "fresh", Probes: len(positions)}
	var trips, reqs []int
	var lat []time.Duration
	var firstErr error
	fresh := *tf
	fresh.trace = new(metrics.Trace)
	for i := range positions {
		if ctx.Err() != nil {
			firstErr = ctx.Err()
			break
		}
		fresh.trace.Reset()
		t0 := time.Now()
		ts, err := fresh.open(ctx)
		if err == nil {
			if wdlOnly {
				_, err = ts.tb.WDL(ctx, &positions[i])
			} else {
				_, err = ts.tb.Probe(ctx, &positions[i])
			}
		}
		// The round trips are counted before the close: what was still in
		// flight (a listing in the background) did not hold up the
		// answer. Its requests count, once the close has ended them.
		lat = append(lat, time.Since(t0))
		trips = append(trips, fresh.trace.RoundTrips())
		if ts != nil {
			ts.Close()
		}
		reqs = append(reqs, fresh.trace.Requests())
		if err != nil {
			pass.Errors++
			if firstErr == nil {
				firstErr = err
			}
		}
		advance(1)
	}
	if len(lat) == 0 {
		return pass, firstErr
	}
	slices.Sort(trips)
	slices.Sort(lat)
	total := 0
	for _, n := range reqs {
		total += n
	}
	slices.Sort(reqs)
	at := func(n int, q float64) int { return min(n-1, int(q*float64(n))) }
	pass.RoundTripsP50, pass.RoundTripsP90, pass.RoundTripsMax = trips[at(len(trips), 0.5)], trips[at(len(trips), 0.9)], trips[len(trips)-1]
	pass.RequestsP50, pass.RequestsMax = reqs[at(len(reqs), 0.5)], reqs[len(reqs)-1]
	pass.RequestsMean = float64(total) / float64(len(reqs))
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
	pass.P50Micros, pass.P90Micros, pass.MaxMicros = us(lat[at(len(lat), 0.5)]), us(lat[at(len(lat), 0.9)]), us(lat[len(lat)-1])
	return pass, firstErr
}

// writeFresh prints the fresh pass for people.
func writeFresh(w io.Writer, p *freshPass) {
	fmt.Fprintf(w, "%s: %d probes (%d failed), each with tables opened for it alone: latency p50 %.1fms, p90 %.1fms, max %.1fms\n",
		p.Name, p.Probes, p.Errors, p.P50Micros/1e3, p.P90Micros/1e3, p.MaxMicros/1e3)
	fmt.Fprintf(w, "  round trips per cold probe: median %d, p90 %d, max %d; requests per cold probe: median %d, max %d, mean %.1f\n",
		p.RoundTripsP50, p.RoundTripsP90, p.RoundTripsMax, p.RequestsP50, p.RequestsMax, p.RequestsMean)
}

// startCPUProfile starts profiling the process's CPU into path; stop ends
// the profile and closes the file.
func startCPUProfile(path string) (stop func() error, err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}

// benchRun probes every position once with p workers and measures it,
// calling advance(1) after each probe.
func benchRun(ctx context.Context, ts *tableSet, positions []chess.Position, p int,
	probe func(context.Context, *chess.Position) error, advance func(int64)) (benchPass, error) {
	before := ts.Stats()
	lzmaBefore := make([]chesstb.DecodeStat, len(lzmaKinds))
	for i, k := range lzmaKinds {
		lzmaBefore[i] = ts.tb.DecodeStats(k)
	}
	cpu0 := processCPU()
	lat := make([]time.Duration, len(positions))
	errs := make([]error, len(positions))
	var next int
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	for range p {
		wg.Go(func() {
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= len(positions) || ctx.Err() != nil {
					return
				}
				t0 := time.Now()
				err := probe(ctx, &positions[i])
				lat[i] = time.Since(t0)
				errs[i] = err
				advance(1)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu := processCPU() - cpu0
	st := ts.Stats()
	d := metrics.Stats{
		Opens: st.Opens - before.Opens, Lists: st.Lists - before.Lists,
		Requests: st.Requests - before.Requests, Bytes: st.Bytes - before.Bytes,
		Hits: st.Hits - before.Hits, Misses: st.Misses - before.Misses,
	}
	pass := benchPass{Probes: len(positions), Seconds: elapsed.Seconds(),
		Requests: d.Opens + d.Requests + d.Lists, Opens: d.Opens, Reads: d.Requests, Lists: d.Lists,
		Bytes: d.Bytes, CacheHitRate: -1}
	var firstErr error
	for _, err := range errs {
		if err != nil {
			pass.Errors++
			if firstErr == nil {
				firstErr = err
			}
		}
	}
	if ctx.Err() != nil && firstErr == nil {
		firstErr = ctx.Err()
	}
	pass.ProbesPerSec = float64(len(positions)) / elapsed.Seconds()
	if cpu > 0 {
		pass.CPUSeconds = cpu.Seconds()
		pass.ProbesPerCPU = float64(len(positions)) / cpu.Seconds()
	}
	slices.Sort(lat)
	pass.P50Micros = float64(lat[len(lat)/2].Nanoseconds()) / 1e3
	pass.P99Micros = float64(lat[min(len(lat)-1, len(lat)*99/100)].Nanoseconds()) / 1e3
	if d.Hits+d.Misses > 0 {
		pass.CacheHitRate = float64(d.Hits) / float64(d.Hits+d.Misses)
	}
	pass.RequestsPerPrb = float64(pass.Requests) / float64(len(positions))
	pass.BlockCacheUsed, _ = ts.tb.CacheStats()
	pass.PeakRSS = processPeakRSS()
	pass.LZMA = lzmaSince(ts.tb, lzmaBefore)
	return pass, firstErr
}

// writePass prints one pass for people.
func writePass(w io.Writer, p *benchPass) {
	hit := "n/a (no source cache)"
	if p.CacheHitRate >= 0 {
		hit = fmt.Sprintf("%.1f%%", 100*p.CacheHitRate)
	}
	fmt.Fprintf(w, "%s: %d probes (%d failed) in %.3fs: %.0f probes/s, p50 %.1fµs, p99 %.1fµs\n",
		p.Name, p.Probes, p.Errors, p.Seconds, p.ProbesPerSec, p.P50Micros, p.P99Micros)
	if p.CPUSeconds > 0 {
		fmt.Fprintf(w, "  %.3f CPU seconds: %.0f probes per CPU second\n", p.CPUSeconds, p.ProbesPerCPU)
	}
	fmt.Fprintf(w, "  source cache hit rate %s; transport %d requests (%.3f per probe: %d opens, %d reads, %d lists), %s; decoded blocks held %s\n",
		hit, p.Requests, p.RequestsPerPrb, p.Opens, p.Reads, p.Lists, cli.FormatSize(p.Bytes), cli.FormatSize(p.BlockCacheUsed))
	if p.PeakRSS > 0 {
		fmt.Fprintf(w, "  peak resident memory of the process so far %s\n", cli.FormatSize(p.PeakRSS))
	}
	if len(p.LZMA) > 0 {
		parts := make([]string, len(p.LZMA))
		for i, l := range p.LZMA {
			parts[i] = fmt.Sprintf("%s %s of %s in %d blocks", l.Kind, cli.FormatSize(l.Decoded), cli.FormatSize(l.BlockBytes), l.Blocks)
		}
		fmt.Fprintf(w, "  LZMA decoded: %s\n", strings.Join(parts, ", "))
	}
}

// processCPU is the CPU time the process has used (0 where the system does
// not say). On a machine shared with other work the probes per CPU second
// say more about the prober than the wall-clock rate does.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// processPeakRSS is the process's peak resident set size in bytes (0 where
// the system does not say): the decoded blocks, the heap around them and
// the program's resident code, what a memory budget has to cover.
func processPeakRSS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Maxrss << 10 // kilobytes on Linux
}

// readFENs reads a positions file: one FEN a line, blank lines and '#'
// comments skipped.
func readFENs(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var fens []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
			fens = append(fens, line)
		}
	}
	return fens, sc.Err()
}

// randomPositions draws n legal positions from the materials whose WDL
// table the sources hold, a material and a colour orientation chosen
// uniformly, pieces placed uniformly on empty squares (pawns off the back
// ranks), either side to move, a half-move clock from 0 to 99 (the kind
// of list the reference prober was timed on), no castling or en passant.
// Placements the rules reject (the side not to move in check, adjacent
// kings) are drawn again. The same seed and tables give the same positions.
func randomPositions(ctx context.Context, ts *tableSet, n int, seed uint64) ([]string, error) {
	tables, err := findTables(ctx, ts)
	if err != nil {
		return nil, err
	}
	var mats []string
	for _, e := range tables {
		if e.kind == chesstb.KindWDL {
			mats = append(mats, e.material)
		}
	}
	if len(mats) == 0 {
		return nil, errors.New("no WDL tables to draw materials from")
	}
	rng := rand.New(rand.NewPCG(seed, 0x7462_7072_6f62_6521))
	out := make([]string, 0, n)
	for len(out) < n {
		pos, ok, err := dataset.RandomPosition(rng, mats[rng.IntN(len(mats))], 0, 99)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, pos.FEN())
		}
	}
	return out, nil
}
