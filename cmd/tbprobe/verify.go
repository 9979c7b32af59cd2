package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"
)

// runVerify implements "tbprobe verify": decode every block of every table,
// check every file's checksum, and report each corrupt block by file, frame
// and block number. It exits 1 when anything is corrupt or unreadable.
func runVerify(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, "usage: tbprobe verify [--tables URL]... [MATERIAL...]\n\nDecodes every block of every table (or of the named materials' tables),\nchecks each decoded cell against its header and each file's XXH64\nchecksum, and names every corrupt block. A progress bar is drawn on a\nterminal; otherwise one line per table. Exit status 1 on any corruption.\n\n")
		fs.PrintDefaults()
	}
	var tf tableFlags
	tf.register(fs)
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	want := map[string]bool{}
	for _, m := range fs.Args() {
		want[strings.Replace(strings.ToUpper(m), "V", "", 1)] = true
	}
	ts, err := tf.open(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "tbprobe verify: %v\n", err)
		return 1
	}
	defer ts.Close()
	tables, err := findTables(ctx, ts)
	if err != nil {
		fmt.Fprintf(stderr, "tbprobe verify: %v\n", err)
		return 1
	}
	if len(want) > 0 {
		kept := tables[:0]
		for _, e := range tables {
			if want[e.material] {
				kept = append(kept, e)
				delete(want, e.material)
			}
		}
		tables = kept
		for m := range want {
			fmt.Fprintf(stderr, "tbprobe verify: no table for %s\n", m)
			return 1
		}
	}
	bar := newProgress(stderr)
	var bad, failed int
	for i, e := range tables {
		label := fmt.Sprintf("[%d/%d] %s", i+1, len(tables), e.name)
		blocks, err := ts.tb.VerifyTable(ctx, e.kind, e.material, func(done, total int64) {
			bar.update(label, done, total)
		})
		bar.clear()
		for _, b := range blocks {
			fmt.Fprintf(stdout, "CORRUPT %v (in %s)\n", b, e.src)
			bad++
		}
		if err != nil {
			fmt.Fprintf(stdout, "FAILED  %s: %v (in %s)\n", e.name, err, e.src)
			failed++
			if ctx.Err() != nil {
				break
			}
			continue
		}
		if err := ts.tb.VerifyChecksum(ctx, e.kind, e.material); err != nil {
			fmt.Fprintf(stdout, "CORRUPT %v (in %s)\n", err, e.src)
			bad++
			continue
		}
		if len(blocks) == 0 && !bar.tty {
			fmt.Fprintf(stdout, "ok      %s\n", e.name)
		}
	}
	fmt.Fprintf(stdout, "%d tables verified, %d corrupt blocks or files, %d unreadable\n", len(tables), bad, failed)
	if bad > 0 || failed > 0 || ctx.Err() != nil {
		return 1
	}
	return 0
}

// progress draws a one-line bar on a terminal and nothing elsewhere.
type progress struct {
	w    io.Writer
	tty  bool
	last int // permille last drawn, to draw only on change
}

func newProgress(w io.Writer) *progress {
	f, ok := w.(*os.File)
	return &progress{w: w, tty: ok && term.IsTerminal(int(f.Fd())), last: -1}
}

func (p *progress) update(label string, done, total int64) {
	if !p.tty || total == 0 {
		return
	}
	pm := int(done * 1000 / total)
	if pm == p.last {
		return
	}
	p.last = pm
	const width = 30
	fill := pm * width / 1000
	fmt.Fprintf(p.w, "\r\x1b[K%s [%s%s] %3d%%", label, strings.Repeat("=", fill), strings.Repeat(" ", width-fill), pm/10)
}

func (p *progress) clear() {
	if p.tty {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
	p.last = -1
}
