package chesstb

import (
	"context"
	"testing"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// packBenches are the pack metrics at two clocks, and root move ranking.
var packBenches = []struct {
	name  string
	clock int
	f     benchProbe
}{
	{"dtm50/clock0", 0, benchDTM50},
	{"dtm50/clock80", 80, benchDTM50},
	{"dtc/clock0", 0, benchDTC},
	{"dtc/clock80", 80, benchDTC},
	{"rank-dtz", 0, func(tb *Tablebase, ctx context.Context, pos *chess.Position) error {
		_, err := tb.RankMoves(ctx, pos, RankOptions{Ranker: RankDTZ, Rule50: true})
		if unknownErr(err) {
			err = nil // a child whose DTZ no shipped table carries
		}
		return err
	}},
}

func benchDTM50(tb *Tablebase, ctx context.Context, pos *chess.Position) error {
	_, err := tb.DTM50(ctx, pos)
	if unknownErr(err) {
		err = nil // the 5-man tables ship without DTM50
	}
	return err
}

func benchDTC(tb *Tablebase, ctx context.Context, pos *chess.Position) error {
	_, err := tb.DTC(ctx, pos)
	return err
}

// benchPositions is the random position list of the probe benchmarks with
// every clock set to clock.
func benchPositions(b *testing.B, dir string, clock int, seed uint64) []chess.Position {
	positions := randomPositions(b, shippedMaterials(b, dir), 10000, seed)
	for i := range positions {
		positions[i].SetHalfmoveClock(clock)
	}
	return positions
}

// BenchmarkPackCold runs first passes over 10,000 random positions of the
// shipped set with a fresh Tablebase and the default 64 MiB budget: every
// block is read and decoded on first use.
func BenchmarkPackCold(b *testing.B) {
	dir := testenv.Shared(b, "chesstb", "shipped")
	for _, m := range packBenches {
		positions := benchPositions(b, dir, m.clock, 11)
		b.Run(m.name, func(b *testing.B) {
			ctx := context.Background()
			var tb *Tablebase
			i := 0
			for b.Loop() {
				if i%len(positions) == 0 {
					b.StopTimer()
					if tb != nil {
						tb.Close()
					}
					tb = openDirs(b, Options{}, dir)
					b.StartTimer()
				}
				if err := m.f(tb, ctx, &positions[i%len(positions)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "probes/s")
		})
	}
}

// BenchmarkPackWarm probes the same lists repeatedly with every block they
// need already decoded.
func BenchmarkPackWarm(b *testing.B) {
	dir := testenv.Shared(b, "chesstb", "shipped")
	for _, m := range packBenches {
		positions := benchPositions(b, dir, m.clock, 12)
		b.Run(m.name, func(b *testing.B) {
			ctx := context.Background()
			tb := openDirs(b, Options{BlockCacheBytes: 4 << 30}, dir)
			for i := range positions {
				if err := m.f(tb, ctx, &positions[i]); err != nil {
					b.Fatal(err)
				}
			}
			i := 0
			for b.Loop() {
				if err := m.f(tb, ctx, &positions[i%len(positions)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "probes/s")
		})
	}
}
