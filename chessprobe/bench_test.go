package chessprobe_test

import (
	"context"
	"testing"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/internal/testkit/syzygyoracle"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// benchProbe probes every non-terminal oracle position once per round,
// tables warm (one untimed round first).
func benchProbe(b *testing.B, dirs ...string) {
	rows := syzygyoracle.Read(b, syzygyoracle.Path(b))
	tb := openTables(b, dirs...)
	var pos []chess.Position
	for _, r := range rows {
		if !r.Terminal() {
			pos = append(pos, mustFEN(b, r.FEN))
		}
	}
	ctx := context.Background()
	round := func() {
		for i := range pos {
			if _, err := tb.Probe(ctx, &pos[i]); err != nil {
				b.Fatal(err)
			}
		}
	}
	round()
	b.ResetTimer()
	for b.Loop() {
		round()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(pos)), "ns/probe")
}

// BenchmarkProbeChesstb, …Syzygy and …Both price one combined probe (every
// metric) with chesstb tables, Syzygy tables, or both of the same
// materials, where both are read and compared.
func BenchmarkProbeChesstb(b *testing.B) { benchProbe(b, testenv.Shared(b, "chesstb", "shipped")) }

func BenchmarkProbeSyzygy(b *testing.B) { benchProbe(b, syzygyoracle.Tables(b)) }

func BenchmarkProbeBoth(b *testing.B) {
	benchProbe(b, testenv.Shared(b, "chesstb", "shipped"), syzygyoracle.Tables(b))
}
