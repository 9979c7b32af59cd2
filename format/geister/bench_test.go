package geister

import (
	"context"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/tbfs/tbfs/source/mmap"
)

// benchPositions returns n random positions over the five shared tables
// (uniform index in a uniformly chosen material, half of them mirrored), as
// the reference's probe benchmark draws them.
func benchPositions(b *testing.B, n int) []Position {
	b.Helper()
	rng := rand.New(rand.NewPCG(11, 13))
	ms := []Material{{1, 1, 1, 1}, {1, 1, 1, 2}, {1, 1, 2, 1}, {1, 2, 1, 1}, {2, 1, 1, 1}}
	out := make([]Position, n)
	for i := range out {
		m := ms[rng.IntN(len(ms))]
		p, err := Unrank(m, rng.Uint64N(m.Entries()))
		if err != nil {
			b.Fatal(err)
		}
		if rng.IntN(2) == 0 {
			p = p.Mirror()
		}
		out[i] = p
	}
	return out
}

// cpuTime returns the CPU time the process has used. The benchmarks
// report rates per CPU second too ("cpu-probes/s"), because this machine
// is shared and wall-clock rates there depend on the other users' load.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rate reports n operations per wall second and per CPU second since
// start (per CPU second divided by the number of goroutines' threads is
// not attempted: parallel benchmarks report total CPU).
func rate(b *testing.B, n int, start time.Duration, unit string) {
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), unit+"/s")
	if cpu := cpuTime() - start; cpu > 0 {
		b.ReportMetric(float64(n)/cpu.Seconds(), "cpu-"+unit+"/s")
	}
}

func benchTablebase(b *testing.B, dir string, opts Options) *Tablebase {
	b.Helper()
	return openDir(b, dir, opts)
}

// BenchmarkRank is the index alone (reference: 4.5 M/s, one thread).
func BenchmarkRank(b *testing.B) {
	ps := benchPositions(b, 1<<16)
	b.ResetTimer()
	start := cpuTime()
	var sink uint64
	for i := range b.N {
		_, idx, _ := Rank(ps[i&(1<<16-1)])
		sink += idx
	}
	_ = sink
	rate(b, b.N, start, "ranks")
}

// BenchmarkUnrank is the inverse, which the table builder uses per entry.
func BenchmarkUnrank(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	m := Material{1, 1, 2, 1}
	idx := make([]uint64, 1<<16)
	for i := range idx {
		idx[i] = rng.Uint64N(m.Entries())
	}
	b.ResetTimer()
	start := cpuTime()
	for i := range b.N {
		Unrank(m, idx[i&(1<<16-1)])
	}
	rate(b, b.N, start, "unranks")
}

func benchProbe(b *testing.B, tb *Tablebase, ps []Position) {
	ctx := context.Background()
	for _, p := range ps[:min(len(ps), 1<<14)] {
		if _, err := tb.DTW(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	start := cpuTime()
	for i := range b.N {
		if _, err := tb.DTW(ctx, ps[i%len(ps)]); err != nil {
			b.Fatal(err)
		}
	}
	rate(b, b.N, start, "probes")
}

func benchProbeParallel(b *testing.B, tb *Tablebase, ps []Position) {
	ctx := context.Background()
	b.ResetTimer()
	start := cpuTime()
	b.RunParallel(func(pb *testing.PB) {
		i := rand.IntN(len(ps))
		for pb.Next() {
			if _, err := tb.DTW(ctx, ps[i%len(ps)]); err != nil {
				b.Error(err)
				return
			}
			i++
		}
	})
	rate(b, b.N, start, "probes")
}

// BenchmarkProbeRaw: raw .bin through the mmap source, warm (reference:
// 2.10 M/s).
func BenchmarkProbeRaw(b *testing.B) {
	benchProbe(b, benchTablebase(b, rawTables(b), Options{}), benchPositions(b, 1<<20))
}

// BenchmarkProbeRawCold opens the tables afresh (new mappings, so the first
// touch of each page faults; the files are in the page cache) for every
// batch of 4096 probes (reference first touch: 1.56 M/s).
func BenchmarkProbeRawCold(b *testing.B) {
	ps := benchPositions(b, 1<<20)
	dir := rawTables(b)
	ctx := context.Background()
	var tb *Tablebase
	var src *mmap.Source
	reopen := func() {
		if tb != nil {
			tb.Close()
			src.Close()
		}
		var err error
		if src, err = mmap.New(dir); err != nil {
			b.Fatal(err)
		}
		tb, _ = Open(Options{}, src)
	}
	var cpu time.Duration
	b.ResetTimer()
	b.StopTimer()
	for i := 0; i < b.N; {
		reopen()
		n := min(4096, b.N-i)
		start := cpuTime()
		b.StartTimer()
		for j := range n {
			if _, err := tb.DTW(ctx, ps[(i+j)%len(ps)]); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		cpu += cpuTime() - start
		i += n
	}
	tb.Close()
	src.Close()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "probes/s")
	if cpu > 0 {
		b.ReportMetric(float64(b.N)/cpu.Seconds(), "cpu-probes/s")
	}
}

// BenchmarkProbeZstdWarm: .bin.zst with a cache that holds every frame
// (reference, one-frame cache: 65 K/s).
func BenchmarkProbeZstdWarm(b *testing.B) {
	tb := benchTablebase(b, zstdOnly(b, sharedTables(b)), Options{CacheBytes: 256 << 20})
	ps := benchPositions(b, 1<<20)
	for _, p := range ps {
		tb.DTW(context.Background(), p)
	}
	benchProbe(b, tb, ps)
}

// BenchmarkProbeZstdCold: a cache of one frame per shard, so nearly every
// random probe reads and decodes one frame.
func BenchmarkProbeZstdCold(b *testing.B) {
	benchProbe(b, benchTablebase(b, zstdOnly(b, sharedTables(b)), Options{CacheBytes: 1}), benchPositions(b, 1<<20))
}

// BenchmarkProbeZstdWarmParallel: concurrent readers on a warm cache.
func BenchmarkProbeZstdWarmParallel(b *testing.B) {
	tb := benchTablebase(b, zstdOnly(b, sharedTables(b)), Options{CacheBytes: 256 << 20})
	ps := benchPositions(b, 1<<20)
	for _, p := range ps {
		tb.DTW(context.Background(), p)
	}
	benchProbeParallel(b, tb, ps)
}

// BenchmarkProbeZstdColdParallel: concurrent readers, every probe a miss.
func BenchmarkProbeZstdColdParallel(b *testing.B) {
	benchProbeParallel(b, benchTablebase(b, zstdOnly(b, sharedTables(b)), Options{CacheBytes: 1}), benchPositions(b, 1<<20))
}

// BenchmarkProbeRawParallel: concurrent readers on raw files.
func BenchmarkProbeRawParallel(b *testing.B) {
	benchProbeParallel(b, benchTablebase(b, rawTables(b), Options{}), benchPositions(b, 1<<20))
}

func benchObservations(b *testing.B, tb *Tablebase) {
	ps := benchPositions(b, 1<<18)
	obs := make([]Observation, len(ps))
	for i, p := range ps {
		obs[i] = Observation{OwnBlue: p.OwnBlue, OwnRed: p.OwnRed, Opp: p.Opp(), OppRed: p.Material().OR}
	}
	ctx := context.Background()
	colourings := 0
	b.ResetTimer()
	start := cpuTime()
	for i := range b.N {
		_, _, cs, err := tb.ColouringValues(ctx, obs[i%len(obs)])
		if err != nil {
			b.Fatal(err)
		}
		colourings += len(cs)
	}
	rate(b, b.N, start, "observations")
	rate(b, colourings, start, "colourings")
}

// BenchmarkObservationRaw reads all colourings of one observation from the
// raw tables (reference observation-block probes: 2.79 M/s raw, 152 K/s
// zstd).
func BenchmarkObservationRaw(b *testing.B) {
	benchObservations(b, benchTablebase(b, rawTables(b), Options{}))
}

// BenchmarkObservationZstdWarm is the same on compressed tables, warm.
func BenchmarkObservationZstdWarm(b *testing.B) {
	tb := benchTablebase(b, zstdOnly(b, sharedTables(b)), Options{CacheBytes: 256 << 20})
	for _, p := range benchPositions(b, 1<<20) {
		tb.DTW(context.Background(), p)
	}
	benchObservations(b, tb)
}

// BenchmarkObservationZstdCold: every observation misses the cache.
func BenchmarkObservationZstdCold(b *testing.B) {
	benchObservations(b, benchTablebase(b, zstdOnly(b, sharedTables(b)), Options{CacheBytes: 1}))
}

// BenchmarkFirstProbes opens the shared tables afresh (raw id000 and the
// four total-5 .zst files, with the reference's SHA256SUMS beside them)
// and probes one position of each material: the cost of a Tablebase's
// first answers, with the manifest check and without it (NoVerify).
// Later probes are the same either way.
func BenchmarkFirstProbes(b *testing.B) {
	dir := sharedTables(b)
	var ps []Position
	for _, m := range []Material{{1, 1, 1, 1}, {1, 1, 1, 2}, {1, 1, 2, 1}, {1, 2, 1, 1}, {2, 1, 1, 1}} {
		for idx := uint64(0); ; idx++ {
			if p, err := Unrank(m, idx*9973%m.Entries()); err == nil {
				if _, term := p.Terminal(); !term {
					ps = append(ps, p)
					break
				}
			}
		}
	}
	for _, mode := range []struct {
		name string
		opts Options
	}{{"manifest", Options{}}, {"noverify", Options{NoVerify: true}}} {
		b.Run(mode.name, func(b *testing.B) {
			ctx := context.Background()
			for b.Loop() {
				src, err := mmap.New(dir)
				if err != nil {
					b.Fatal(err)
				}
				tb, _ := Open(mode.opts, src)
				for _, p := range ps {
					if _, err := tb.DTW(ctx, p); err != nil {
						b.Fatal(err)
					}
				}
				tb.Close()
				src.Close()
			}
		})
	}
}
