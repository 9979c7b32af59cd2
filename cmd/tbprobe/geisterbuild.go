package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	model "github.com/tbfs/tbfs/format/geister"
	builder "github.com/tbfs/tbfs/retro/geister"
)

// geisterBuildUsage is printed for -h and for usage errors.
const geisterBuildUsage = `usage: tbprobe geister build (--upto-total N | --material ID[,ID...]) --out DIR [--mem SIZE] [--check] [--workers N]

Builds Geister perfect-information tables by retrograde analysis: the raw
"_obsblk.bin" (one byte per entry, as the reference builder writes it) and a
seekable-zstd ".bin.zst" (8 KiB frames) for every material up to N pieces,
or for the given material ids and what they capture into, in dependency
order. A "<file>.sha256" sidecar records both files; materials whose files
match it are skipped, so an interrupted build is resumed by running the same
command again. --mem refuses to start when the estimated peak memory is
larger (SIZE like 512M, 4G; default no limit).
`

// runGeisterBuild implements "tbprobe geister build". It returns 0 when
// every table was built or found complete, 1 when the build failed or was
// interrupted, 2 for a usage error or a memory estimate over --mem.
func runGeisterBuild(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("geister build", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, geisterBuildUsage)
		fs.PrintDefaults()
	}
	upto := fs.Int("upto-total", 0, "build every material with at most this many pieces (4..16)")
	ids := fs.String("material", "", "build these material ids (comma-separated) and their dependencies")
	out := fs.String("out", "", "output directory")
	mem := fs.String("mem", "", "refuse to start when the estimated peak memory exceeds this (e.g. 512M, 4G)")
	check := fs.Bool("check", true, "check every entry against its children before writing")
	workers := fs.Int("workers", 0, "goroutines (0: one per CPU)")
	quiet := fs.Bool("quiet", false, "no progress bar")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "tbprobe geister build: "+format+"\n", a...)
		fs.Usage()
		return 2
	}
	if fs.NArg() > 0 {
		return usage("unexpected argument %q", fs.Arg(0))
	}
	if *out == "" {
		return usage("--out is required")
	}
	opts := builder.BuildOptions{Out: *out, UptoTotal: *upto, Check: *check, Workers: *workers}
	switch {
	case *ids != "" && *upto != 0:
		return usage("give --upto-total or --material, not both")
	case *ids != "":
		for _, f := range strings.Split(*ids, ",") {
			id, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				return usage("--material: %q is not a material id", f)
			}
			m, err := model.MaterialByID(id)
			if err != nil {
				return usage("--material: %v", err)
			}
			opts.Materials = append(opts.Materials, m)
		}
	case *upto < 4 || *upto > 16:
		return usage("--upto-total must be 4..16")
	}
	if *mem != "" {
		n, err := parseSize(*mem)
		if err != nil {
			return usage("--mem: %v", err)
		}
		opts.MemLimit = n
	}
	need, err := builder.EstimateMemory(opts)
	if err != nil {
		return usage("%v", err)
	}
	plan, _ := builder.Plan(opts)
	var entries uint64
	for _, m := range plan {
		entries += m.Entries()
	}
	fmt.Fprintf(stderr, "tbprobe geister build: %d materials, %d entries, about %s of memory\n", len(plan), entries, builder.FormatBytes(need))

	bar := &progressBar{w: stderr, quiet: *quiet}
	opts.Progress = bar.update
	opts.Logf = bar.logf
	start := time.Now()
	err = builder.Build(ctx, opts)
	bar.finish()
	switch {
	case errors.Is(err, builder.ErrMemory):
		fmt.Fprintf(stderr, "tbprobe geister build: %v (raise --mem or build fewer materials)\n", err)
		return 2
	case err != nil:
		fmt.Fprintf(stderr, "tbprobe geister build: %v\n", err)
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "tbprobe geister build: interrupted; run the same command again to resume")
		}
		return 1
	}
	fmt.Fprintf(stdout, "built %d materials in %s into %s\n", len(plan), time.Since(start).Round(time.Millisecond), *out)
	return 0
}

// parseSize parses a byte count with an optional K, M, G or T suffix
// (binary units, an optional trailing "iB" or "B").
func parseSize(s string) (int64, error) {
	t := strings.TrimSuffix(strings.TrimSuffix(strings.ToUpper(strings.TrimSpace(s)), "B"), "I")
	mult := int64(1)
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'K':
			mult = 1 << 10
		case 'M':
			mult = 1 << 20
		case 'G':
			mult = 1 << 30
		case 'T':
			mult = 1 << 40
		}
		if mult > 1 {
			t = t[:n-1]
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v <= 0 || v*float64(mult) > 1<<62 {
		return 0, fmt.Errorf("%q is not a size such as 512M or 4G", s)
	}
	return int64(v * float64(mult)), nil
}

// progressBar draws one status line per material pair on a terminal-like
// writer: the layer, the entries decided, the rate and an estimate of the
// time left (an upper bound: it assumes every undecided entry may still be
// decided).
type progressBar struct {
	mu    sync.Mutex
	w     io.Writer
	quiet bool
	last  time.Time
	open  bool
}

func (b *progressBar) update(p builder.Progress) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.quiet || (p.Phase != "done" && time.Since(b.last) < 200*time.Millisecond) {
		return
	}
	b.last = time.Now()
	names := make([]string, len(p.Materials))
	for i, m := range p.Materials {
		names[i] = fmt.Sprintf("id%03d", m.ID())
	}
	rate := float64(p.Done) / max(p.Elapsed.Seconds(), 1e-3)
	line := fmt.Sprintf("%s %s", strings.Join(names, "+"), p.Phase)
	if p.Phase == "layer" {
		line += fmt.Sprintf(" %d", p.Layer)
	}
	pct := 100 * float64(p.Done) / float64(max(p.Total, 1))
	line += fmt.Sprintf("  %d/%d (%.1f%%)  %.2fM/s  %s", p.Done, p.Total, pct, rate/1e6, p.Elapsed.Round(time.Second))
	if rate > 0 && p.Phase != "done" {
		eta := time.Duration(float64(p.Total-p.Done) / rate * float64(time.Second))
		line += fmt.Sprintf("  ETA <= %s", eta.Round(time.Second))
	}
	fmt.Fprintf(b.w, "\r%-100s", line)
	b.open = true
	if p.Phase == "done" {
		fmt.Fprintln(b.w)
		b.open = false
	}
}

func (b *progressBar) logf(format string, a ...any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.open {
		fmt.Fprintln(b.w)
		b.open = false
	}
	fmt.Fprintf(b.w, format+"\n", a...)
}

func (b *progressBar) finish() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.open {
		fmt.Fprintln(b.w)
		b.open = false
	}
}
