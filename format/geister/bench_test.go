package geister

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/tbfs/tbfs/geister"
	"github.com/tbfs/tbfs/source/mmap"
)

// benchPositions returns n random positions over the five shared tables
// (uniform index in a uniformly chosen material, half of them mirrored), as
// the reference's probe benchmark draws them.
func benchPositions(b *testing.B, n int) []geister.Position {
	b.Helper()
	rng := rand.New(rand.NewPCG(11, 13))
	ms := []Material{{1, 1, 1, 1}, {1, 1, 1, 2}, {1, 1, 2, 1}, {1, 2, 1, 1}, {2, 1, 1, 1}}
	out := make([]geister.Position, n)
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

func benchProbe(b *testing.B, tb *Tablebase, ps []geister.Position) {
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

func benchProbeParallel(b *testing.B, tb *Tablebase, ps []geister.Position) {
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
	obs := make([]geister.Observation, len(ps))
	for i, p := range ps {
		obs[i] = geister.Observation{OwnBlue: p.OwnBlue, OwnRed: p.OwnRed, Opp: p.Opp(), OppRed: MaterialOf(p).OR}
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

// BenchmarkFirstProbes prices integrity on the cold path: every probe opens
// a fresh Tablebase over the five .zst tables and probes one random
// position, so it opens its table and decodes one frame. Three ways, in one
// run and interleaved, so the machine's load falls on all alike: unchecked
// (NoVerify), with the reference's SHA256SUMS (the whole table hashed on
// open), with frame manifests (the frame read hashed). It reports each
// way's time per first probe and the two checked ways' ratio to unchecked.
//
//	go test ./format/geister -run '^$' -bench FirstProbes -benchtime 500x
func BenchmarkFirstProbes(b *testing.B) {
	shared, mfs := writeManifests(b)
	zst := zstdOnly(b, shared)
	withSums, withManifests := zstdOnly(b, shared), zstdOnly(b, shared)
	copyFile(b, filepath.Join(shared, SumsFile), filepath.Join(withSums, SumsFile))
	for id, data := range mfs {
		m, _ := MaterialByID(id)
		if err := os.WriteFile(filepath.Join(withManifests, m.FileName()+ManifestSuffix), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	ways := []struct {
		name string
		dir  string
		opts Options
	}{
		{"unchecked", zst, Options{NoVerify: true}},
		{"sums", withSums, Options{}},
		{"manifest", withManifests, Options{}},
	}
	srcs := make([]*mmap.Source, len(ways))
	for i, w := range ways {
		s, err := mmap.New(w.dir)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		srcs[i] = s
	}
	ps := benchPositions(b, 1024)
	ctx := context.Background()
	took := make([]time.Duration, len(ways))
	cpu := make([]time.Duration, len(ways))
	// The thread's own CPU time is what this machine's load does not
	// inflate; the probe runs on this goroutine alone, pinned to it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	i := 0
	for b.Loop() {
		for k := range ways {
			w := (k + i) % len(ways)
			// The sums way's garbage (a read buffer, the hashed file)
			// would otherwise be collected on the next way's time.
			runtime.GC()
			t0, c0 := time.Now(), threadCPU()
			tb, err := Open(ways[w].opts, srcs[w])
			if err != nil {
				b.Fatal(err)
			}
			if _, err := tb.DTW(ctx, ps[i%len(ps)]); err != nil {
				b.Fatal(err)
			}
			took[w] += time.Since(t0)
			cpu[w] += threadCPU() - c0
			tb.Close()
		}
		i++
	}
	for w, way := range ways {
		b.ReportMetric(float64(took[w].Nanoseconds())/float64(i), "ns/first-"+way.name)
		b.ReportMetric(float64(cpu[w].Nanoseconds())/float64(i), "cpu-ns/first-"+way.name)
		if w > 0 {
			b.ReportMetric(float64(took[w])/float64(took[0]), way.name+"/unchecked")
			b.ReportMetric(float64(cpu[w])/float64(cpu[0]), "cpu-"+way.name+"/unchecked")
		}
	}
}

// threadCPU is the CPU time of the calling thread.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func copyFile(b testing.TB, from, to string) {
	b.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		b.Fatal(err)
	}
}
