package syzygy

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// benchPositions are the non-terminal positions of the shared oracle, the
// set the Fathom side of the speed comparison probes too.
func benchPositions(b *testing.B) (*Tablebase, []chess.Position) {
	tables := testenv.Shared(b, "syzygy", "tables")
	rows := readOracle(b, testenv.Shared(b, "syzygy", "oracle", "probe.tsv"))
	var ps []chess.Position
	for _, r := range rows {
		if !r.Terminal() {
			ps = append(ps, mustFEN(b, r.FEN))
		}
	}
	return openDir(b, tables), ps
}

func benchProbe(b *testing.B, probe func(*Tablebase, *chess.Position) error) {
	tb, ps := benchPositions(b)
	for range 2 { // open the tables, confirm their checksums, fill the cache
		for i := range ps {
			if err := probe(tb, &ps[i]); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ResetTimer()
	start := time.Now()
	cpu0 := cpuTime()
	for range b.N {
		for i := range ps {
			if err := probe(tb, &ps[i]); err != nil {
				b.Fatal(err)
			}
		}
	}
	n := float64(b.N * len(ps))
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/n, "ns/probe")
	// CPU time, the fair measure on a shared machine (the Fathom driver
	// reports the same).
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/n, "cpu-ns/probe")
}

// BenchmarkSharedWDL probes WDL for every non-terminal oracle position.
func BenchmarkSharedWDL(b *testing.B) {
	ctx := context.Background()
	benchProbe(b, func(tb *Tablebase, p *chess.Position) error { _, err := tb.WDL(ctx, p); return err })
}

// BenchmarkSharedDTZ probes DTZ for every non-terminal oracle position.
func BenchmarkSharedDTZ(b *testing.B) {
	ctx := context.Background()
	benchProbe(b, func(tb *Tablebase, p *chess.Position) error { _, err := tb.DTZ(ctx, p); return err })
}

// cpuTime is the process's user and system time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSharedRoot ranks the root moves of every non-terminal oracle
// position.
func BenchmarkSharedRoot(b *testing.B) {
	ctx := context.Background()
	benchProbe(b, func(tb *Tablebase, p *chess.Position) error { _, err := tb.Root(ctx, p); return err })
}
