package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/tbfs/tbfs/cmd/internal/cli"
	"github.com/tbfs/tbfs/cmd/internal/progress"
	model "github.com/tbfs/tbfs/format/geister"
	builder "github.com/tbfs/tbfs/retro/geister"
)

// geisterBuildLong is geister build's help text.
const geisterBuildLong = `Builds Geister perfect-information tables by retrograde analysis: the raw
"_obsblk.bin" (one byte per entry, as the reference builder writes it) and a
seekable-zstd ".bin.zst" (8 KiB frames) for every material up to N pieces,
or for the given material ids and what they capture into, in dependency
order. A "<file>.sha256" sidecar records both files; materials whose files
match it are skipped, so an interrupted build is resumed by running the same
command again. The estimated peak memory is printed before the build and
the measured peak (resident set) after it. --mem (SIZE like 512M, 4G;
default no limit) bounds the build: a pair of materials with one red a side
whose in-memory solve needs more is built in 630 parts per material, those
that do not fit spilled to files in --out, and repacked into the table's
order; the build refuses to start when another pair needs more.

Exit status: 0 every table built or found complete, 1 the build failed or
was interrupted, 2 usage error or a memory estimate over --mem.`

// geisterBuildOptions are the flags of "tbprobe geister build".
type geisterBuildOptions struct {
	upto, workers int
	ids, out      string
	mem           cli.Size
	check, quiet  bool
}

// newGeisterBuildCmd is "tbprobe geister build".
func newGeisterBuildCmd() *cobra.Command {
	var o geisterBuildOptions
	cmd := &cobra.Command{
		Use:   "build (--upto-total N | --material ID[,ID...]) --out DIR [flags]",
		Short: "Build Geister tables by retrograde analysis",
		Long:  geisterBuildLong,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cli.Exit(runGeisterBuildCmd(cmd, o, args))
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&o.upto, "upto-total", 0, "build every material with at most this many pieces (4..16)")
	fs.StringVar(&o.ids, "material", "", "build these material ids (comma-separated) and their dependencies")
	fs.StringVar(&o.out, "out", "", "output directory")
	fs.Var(&o.mem, "mem", "memory bound: build pairs with one red a side in parts on disk beyond it, refuse others (e.g. 512M, 4G; default no limit)")
	fs.BoolVar(&o.check, "check", true, "check every entry against its children before writing")
	fs.IntVar(&o.workers, "workers", 0, "goroutines (0: one per CPU)")
	fs.BoolVar(&o.quiet, "quiet", false, "no progress bar")
	return cmd
}

// runGeisterBuildCmd builds the tables and returns the exit status: 0
// when every table was built or found complete, 1 when the build failed or
// was interrupted, 2 for a usage error or a memory estimate over --mem.
func runGeisterBuildCmd(cmd *cobra.Command, o geisterBuildOptions, args []string) int {
	ctx, stdout, stderr := cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr()
	usage := func(format string, a ...any) int {
		cli.UsageError(cmd, format, a...)
		return 2
	}
	if len(args) > 0 {
		return usage("unexpected argument %q", args[0])
	}
	if o.out == "" {
		return usage("--out is required")
	}
	opts := builder.BuildOptions{Out: o.out, UptoTotal: o.upto, Check: o.check, Workers: o.workers}
	switch {
	case o.ids != "" && o.upto != 0:
		return usage("give --upto-total or --material, not both")
	case o.ids != "":
		for _, f := range strings.Split(o.ids, ",") {
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
	case o.upto < 4 || o.upto > 16:
		return usage("--upto-total must be 4..16")
	}
	opts.MemLimit = int64(o.mem)
	need, err := builder.EstimateMemory(opts)
	if err != nil {
		return usage("%v", err)
	}
	plan, _ := builder.Plan(opts)
	var entries uint64
	for _, m := range plan {
		entries += m.Entries()
	}
	fmt.Fprintf(stderr, "tbprobe geister build: %d materials, %d entries, about %s of memory\n", len(plan), entries, cli.FormatSize(need))

	bar := &buildProgress{rep: progress.New(stderr, progress.Options{Unit: "entries", Lines: true, Quiet: o.quiet})}
	opts.Progress = bar.update
	opts.Logf = bar.rep.Logf
	start := time.Now()
	err = builder.Build(ctx, opts)
	bar.close(err == nil)
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
	fmt.Fprintf(stdout, "built %d materials in %s into %s\n", len(plan), time.Since(start).Round(time.Millisecond), o.out)
	if peak := selfPeakRSS(); peak > 0 {
		fmt.Fprintf(stderr, "tbprobe geister build: peak memory %s (estimated %s)\n", cli.FormatSize(peak), cli.FormatSize(need))
	}
	return 0
}

// buildProgress shows a build as two steps per material pair: "init"
// (every entry scanned once) and "layers" (entries decided, layer by
// layer; the total is an upper bound, as not every entry is decided, so
// the step is ended at 100% when the pair is done).
type buildProgress struct {
	rep *progress.Reporter

	mu   sync.Mutex
	key  string // the open step's materials and phase
	step *progress.Step
}

func (b *buildProgress) update(p builder.Progress) {
	names := make([]string, len(p.Materials))
	for i, m := range p.Materials {
		names[i] = fmt.Sprintf("id%03d", m.ID())
	}
	pair := strings.Join(names, "+")
	kind := "layers"
	if p.Phase == "init" {
		kind = "init"
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if key := pair + " " + kind; b.step == nil || key != b.key {
		b.finish()
		b.key, b.step = key, b.rep.Start(key, int64(p.Total))
	}
	switch p.Phase {
	case "done":
		b.finish()
		return
	case "layer":
		b.step.Describe(fmt.Sprintf("%s layers (%d)", pair, p.Layer))
	}
	b.step.Set(int64(p.Done))
}

// finish ends the open step; b.mu is held.
func (b *buildProgress) finish() {
	if b.step != nil {
		b.step.Done()
		b.step = nil
	}
}

// close ends the build's last step, if one is still open: at 100% when
// the build succeeded, where it stood when it did not.
func (b *buildProgress) close(ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.step != nil && !ok {
		b.step.Stop()
		b.step = nil
	}
	b.finish()
}

// selfPeakRSS returns the largest resident set of this process so far, in
// bytes, or 0 when the system does not say.
func selfPeakRSS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	// Linux reports kilobytes.
	return int64(ru.Maxrss) * 1024
}
