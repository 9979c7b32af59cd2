package retro

import (
	"context"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tbfs/tbfs/chess"
)

// BenchmarkUnmoves measures predecessor generation (Unmoves plus Unmake of
// every parent) over random KQK, KRK, KBNK and KPK positions, in parents
// per wall second and per CPU second (the figure to compare on a shared
// machine).
func BenchmarkUnmoves(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	var ps []chess.Position
	for _, name := range []string{"KQK", "KRK", "KBNK", "KPK"} {
		m, _ := parseMaterial(name)
		for range 256 {
			ps = append(ps, randomPosition(rng, m, chess.Color(rng.IntN(2))))
		}
	}
	var us []chess.Unmove
	parents := 0
	cpu0 := cpuTime()
	for i := 0; b.Loop(); i++ {
		p := &ps[i%len(ps)]
		us = p.Unmoves(us[:0])
		for _, u := range us {
			q := p.Unmake(u)
			_ = q
			parents++
		}
	}
	b.ReportMetric(float64(parents)/b.Elapsed().Seconds(), "parents/s")
	if cpu := (cpuTime() - cpu0).Seconds(); cpu > 0 {
		b.ReportMetric(float64(parents)/cpu, "parents/cpu-s")
	}
}

// BenchmarkSolveMaterial solves each material from scratch (sub-materials
// included: for KPKP that is fourteen four-man materials and three
// three-man ones) and reports the wall time, the CPU time (all cores, so it
// can exceed the wall time; it is the figure to compare on a shared
// machine) and the peak heap in use, sampled while it runs.
func BenchmarkSolveMaterial(b *testing.B) {
	for _, name := range []string{"KQK", "KRK", "KPK", "KBNK", "KPKP"} {
		b.Run(name, func(b *testing.B) {
			measureSolve(b, func() {
				if _, err := SolveMaterial(context.Background(), name, Options{}); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

// BenchmarkSolveMaterialOnly solves one material with its sub-materials
// already solved (outside the timer) and given as Options.Sub, so the
// figures are the material's own: for KPKP, its 16.8M indices and en-passant
// side table. The peak heap includes the sub-tables it is given (the
// recursion's deeper tables are left to the collector), reported apart as
// sub-heap-MiB.
func BenchmarkSolveMaterialOnly(b *testing.B) {
	for _, name := range []string{"KPK", "KPKP"} {
		b.Run(name, func(b *testing.B) {
			m, err := parseMaterial(name)
			if err != nil {
				b.Fatal(err)
			}
			s := &solver{opts: Options{Workers: runtime.GOMAXPROCS(0)}, tables: map[string]*Table{}}
			var subs Tables
			var subBytes int
			for _, sm := range subMaterials(m) {
				if sm.men() == 2 {
					continue
				}
				t, err := s.solve(context.Background(), sm)
				if err != nil {
					b.Fatal(err)
				}
				subs = append(subs, t)
			}
			for _, t := range subs {
				subBytes += 2*len(t.dtm) + 10*len(t.epDTM)
			}
			b.ResetTimer()
			measureSolve(b, func() {
				if _, err := SolveMaterial(context.Background(), name, Options{Sub: subs}); err != nil {
					b.Fatal(err)
				}
			})
			b.ReportMetric(float64(subBytes)/(1<<20), "sub-heap-MiB")
		})
	}
}

// measureSolve runs solve b.N times and reports the wall and CPU seconds
// per run and the peak heap in use, sampled every 20ms.
func measureSolve(b *testing.B, solve func()) {
	b.Helper()
	var peak atomic.Uint64
	cpu0 := cpuTime()
	for b.Loop() {
		runtime.GC()
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			for {
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				if ms.HeapInuse > peak.Load() {
					peak.Store(ms.HeapInuse)
				}
				select {
				case <-stop:
					return
				case <-tick.C:
				}
			}
		}()
		solve()
		close(stop)
		<-done
	}
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
	b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/solve")
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/solve")
}
