package geister

import (
	"context"
	"testing"

	geistertb "github.com/tbfs/tbfs/format/geister"
)

// BenchmarkSolve times the retrograde solve of every material of a total
// piece count (the smaller totals solved once beforehand, untimed), to set
// against the reference builder's times in BASELINE.md (total 4: 8.2 s,
// total 5: 7 min 04 s on 2 threads, both including its self-check; add
// BenchmarkCheck for ours). Run the total-5 case with -benchtime=1x.
func BenchmarkSolve(b *testing.B) {
	for _, bc := range []struct {
		name  string
		total int
	}{{"total4", 4}, {"total5", 5}} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			var base Tables
			var todo [][]geistertb.Material
			plan, err := Plan(BuildOptions{UptoTotal: bc.total})
			if err != nil {
				b.Fatal(err)
			}
			var entries uint64
			for _, pr := range pairs(plan) {
				if pr[0].Total() < bc.total {
					if err := Solve(ctx, &base, pr[0], Options{}); err != nil {
						b.Fatal(err)
					}
					continue
				}
				todo = append(todo, pr)
				for _, m := range pr {
					entries += m.Entries()
				}
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				tabs := base
				for _, pr := range todo {
					if err := Solve(ctx, &tabs, pr[0], Options{}); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(entries)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
			b.ReportMetric(float64(entries)*solveBytesPerEntry, "work-bytes")
		})
	}
}

// BenchmarkCheck times the exhaustive consistency check of id000.
func BenchmarkCheck(b *testing.B) {
	ctx := context.Background()
	var tabs Tables
	m := geistertb.Material{PB: 1, PR: 1, OB: 1, OR: 1}
	if err := Solve(ctx, &tabs, m, Options{}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := Check(ctx, &tabs, m, 0); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(m.Entries())*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
}

// BenchmarkSolveParts times the partitioned solve of the total-5 pair
// with one red a side (id002, id004) with a fifth of its parts in memory,
// after id000 in memory (untimed), and reports its spill traffic per
// entry; set it against BenchmarkSolve/total5. Run it with -benchtime=1x.
func BenchmarkSolveParts(b *testing.B) {
	ctx := context.Background()
	var tabs Tables
	if err := Solve(ctx, &tabs, geistertb.Material{PB: 1, PR: 1, OB: 1, OR: 1}, Options{}); err != nil {
		b.Fatal(err)
	}
	m := geistertb.Material{PB: 1, PR: 1, OB: 2, OR: 1}
	entries := 2 * m.Entries()
	var st PartStats
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var err error
		st, err = SolveParts(ctx, &tabs, m, int64(entries)*solveBytesPerEntry/5, b.TempDir(), Options{},
			func(geistertb.Material, int, []byte) error { return nil })
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(entries)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
	b.ReportMetric(float64(st.SpillWritten)/float64(entries), "spill-written-B/entry")
	b.ReportMetric(float64(st.SpillRead)/float64(entries), "spill-read-B/entry")
}
