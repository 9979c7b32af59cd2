package chesstb

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/format/lz4store"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/source/mmap"
)

// randomPositions builds n legal positions spread over the given materials
// (random placement, random side to move, half of them colour-flipped), the
// same kind of list the reference prober's speed was measured on.
func randomPositions(t testing.TB, mats []string, n int, seed uint64) []chess.Position {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	out := make([]chess.Position, 0, n)
	for len(out) < n {
		m, err := parseMaterial(mats[rng.IntN(len(mats))])
		if err != nil {
			t.Fatal(err)
		}
		if rng.IntN(2) == 1 {
			m = m.flipped()
		}
		var board [64]chess.Piece
		ok := true
		for c := chess.White; c <= chess.Black && ok; c++ {
			for pt := chess.Pawn; pt <= chess.King; pt++ {
				for range m.n[c][pt] {
					sq := rng.IntN(64)
					if board[sq] != chess.NoPiece || (pt == chess.Pawn && (sq < 8 || sq >= 56)) {
						ok = false
						break
					}
					board[sq] = chess.MakePiece(c, pt)
				}
			}
		}
		if !ok {
			continue
		}
		side := chess.Color(rng.IntN(2))
		pos, err := chess.FromBoard(board, side, 0, chess.NoSquare, rng.IntN(100), 1)
		if err != nil {
			continue
		}
		out = append(out, pos)
	}
	return out
}

// shippedMaterials lists the materials with a WDL table in dir.
func shippedMaterials(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(dir, "wdl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if name, ok := strings.CutSuffix(e.Name(), ".lzw"); ok {
			out = append(out, name)
		}
	}
	return out
}

// cpuTime is the CPU time this process has used. The benchmarks report
// probes per CPU second beside the wall-clock rate, because the machine they
// run on is shared and wall time says more about the neighbours than about
// the prober; the reference's figures are single-threaded, so its wall rate
// is its CPU rate.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportRates adds probes/s and probes/cpu-s to a benchmark's output.
func reportRates(b *testing.B, cpu0 time.Duration) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "probes/s")
	if cpu := cpuTime() - cpu0; cpu > 0 {
		b.ReportMetric(float64(b.N)/cpu.Seconds(), "probes/cpu-s")
	}
}

type benchProbe func(tb *Tablebase, ctx context.Context, pos *chess.Position) error

var benchMetrics = []struct {
	name string
	f    benchProbe
}{
	{"all", func(tb *Tablebase, ctx context.Context, pos *chess.Position) error {
		_, err := tb.Probe(ctx, pos)
		return err
	}},
	{"wdl+dtz+dtm", func(tb *Tablebase, ctx context.Context, pos *chess.Position) error {
		// The three metrics this reader core answers, without the packs.
		n, _, done, err := tb.root(ctx, pos)
		if err != nil || done {
			return err
		}
		p := tb.getProber(ctx)
		defer putProber(p)
		_, err = p.probeImpl(&n, wantDTZ|wantDTM, 0)
		return err
	}},
	{"wdl", func(tb *Tablebase, ctx context.Context, pos *chess.Position) error {
		_, err := tb.WDL(ctx, pos)
		return err
	}},
	{"dtz", func(tb *Tablebase, ctx context.Context, pos *chess.Position) error {
		_, err := tb.DTZ(ctx, pos)
		if unknownErr(err) {
			err = nil // KNNKP keeps its DTZ in the DTC pack
		}
		return err
	}},
	{"dtm", func(tb *Tablebase, ctx context.Context, pos *chess.Position) error {
		_, err := tb.DTM(ctx, pos)
		if unknownErr(err) {
			err = nil // the 5-man tables ship without DTM
		}
		return err
	}},
}

// BenchmarkProbeCold probes a first pass over 10,000 random positions with
// a fresh Tablebase: every block is read and decoded on first use, and with
// the default 64 MiB budget the cache thrashes as the reference's does.
func BenchmarkProbeCold(b *testing.B) {
	dir := testenv.Shared(b, "chesstb", "shipped")
	positions := randomPositions(b, shippedMaterials(b, dir), 10000, 1)
	for _, budget := range []struct {
		name  string
		bytes int64
	}{{"64MiB", 64 << 20}, {"4GiB", 4 << 30}} {
		for _, m := range benchMetrics {
			b.Run(m.name+"/"+budget.name, func(b *testing.B) {
				ctx := context.Background()
				var tb *Tablebase
				i := 0
				cpu0 := cpuTime()
				for b.Loop() {
					if i%len(positions) == 0 {
						b.StopTimer()
						if tb != nil {
							tb.Close()
						}
						tb = openDirs(b, Options{BlockCacheBytes: budget.bytes}, dir)
						b.StartTimer()
					}
					if err := m.f(tb, ctx, &positions[i%len(positions)]); err != nil {
						b.Fatal(err)
					}
					i++
				}
				reportRates(b, cpu0)
			})
		}
	}
}

// BenchmarkProbeColdDecodedTier is BenchmarkProbeCold's 4 GiB case with a
// decoded-block store on disk filled beforehand (untimed): each pass is a
// fresh Tablebase whose distance and pack blocks come from the store's LZ4
// files instead of LZMA, as after a restart. Compare its probes per CPU
// second with BenchmarkProbeCold's.
func BenchmarkProbeColdDecodedTier(b *testing.B) {
	dir := testenv.Shared(b, "chesstb", "shipped")
	positions := randomPositions(b, shippedMaterials(b, dir), 10000, 1)
	for _, m := range benchMetrics {
		b.Run(m.name+"/4GiB", func(b *testing.B) {
			ctx := context.Background()
			store, err := lz4store.Open(b.TempDir(), 4<<30)
			if err != nil {
				b.Fatal(err)
			}
			fill := openDirs(b, Options{BlockCacheBytes: 4 << 30, DecodedBlocks: store}, dir)
			for i := range positions {
				if err := m.f(fill, ctx, &positions[i]); err != nil {
					b.Fatal(err)
				}
			}
			fill.Close()
			var tb *Tablebase
			i := 0
			cpu0 := cpuTime()
			for b.Loop() {
				if i%len(positions) == 0 {
					b.StopTimer()
					if tb != nil {
						tb.Close()
					}
					tb = openDirs(b, Options{BlockCacheBytes: 4 << 30, DecodedBlocks: store}, dir)
					b.StartTimer()
				}
				if err := m.f(tb, ctx, &positions[i%len(positions)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
			reportRates(b, cpu0)
		})
	}
}

// BenchmarkProbeWarm probes 10,000 positions repeatedly with every block
// they need already decoded.
func BenchmarkProbeWarm(b *testing.B) {
	dir := testenv.Shared(b, "chesstb", "shipped")
	positions := randomPositions(b, shippedMaterials(b, dir), 10000, 2)
	for _, m := range benchMetrics {
		b.Run(m.name, func(b *testing.B) {
			ctx := context.Background()
			tb := openDirs(b, Options{BlockCacheBytes: 4 << 30}, dir)
			for i := range positions {
				if err := m.f(tb, ctx, &positions[i]); err != nil {
					b.Fatal(err)
				}
			}
			i := 0
			cpu0 := cpuTime()
			for b.Loop() {
				if err := m.f(tb, ctx, &positions[i%len(positions)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
			reportRates(b, cpu0)
		})
	}
}

// BenchmarkDerive probes, warm, positions whose side to move has its frame
// dropped in the shipped tables, so every answer is a one-ply minimax.
func BenchmarkDerive(b *testing.B) {
	dir := testenv.Shared(b, "chesstb", "shipped")
	ctx := context.Background()
	tb := openDirs(b, Options{BlockCacheBytes: 4 << 30}, dir)
	var derived []chess.Position
	for _, pos := range randomPositions(b, shippedMaterials(b, dir), 4000, 3) {
		n := canonicalNode(&pos)
		t, err := tb.table(ctx, KindDTZ, n.mat)
		if err != nil {
			continue
		}
		if f := &t.hdr.frames[n.pos.SideToMove()]; f.dropped && !n.mat.symmetric() {
			derived = append(derived, pos)
		}
	}
	if len(derived) == 0 {
		b.Fatal("no derived positions")
	}
	for i := range derived {
		if _, err := tb.Probe(ctx, &derived[i]); err != nil {
			b.Fatal(err)
		}
	}
	i := 0
	cpu0 := cpuTime()
	for b.Loop() {
		if _, err := tb.Probe(ctx, &derived[i%len(derived)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
	reportRates(b, cpu0)
}

// BenchmarkChecksumCost measures what confirming each table's stored
// checksum before its answers costs cold probes, against skipping it (the
// reference's default), both in the same run and interleaved, so a shared
// machine's load falls on both alike. "first" opens a fresh Tablebase for
// every probe (every table the probe reads is opened and checked on its
// behalf: the worst case); "pass" probes a first pass over 300 random
// positions with a fresh Tablebase, as BenchmarkProbeCold does. Each
// reports the wall and CPU time per probe of both modes and their ratios.
//
//	go test ./format/chesstb -run '^$' -bench ChecksumCost -benchtime 10x
func BenchmarkChecksumCost(b *testing.B) {
	dir := testenv.Shared(b, "chesstb", "shipped")
	src, err := mmap.New(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { src.Close() })
	ctx := context.Background()
	modes := [2]Options{{SkipChecksums: true}, {}}
	run := func(b *testing.B, positions []chess.Position, perTablebase int) {
		var took, cpu [2]time.Duration
		probes, round := 0, 0
		for b.Loop() {
			for k := range modes {
				mode := (k + round) % 2 // alternate which mode goes first
				opts := modes[mode]
				var tb *Tablebase
				for i := range positions {
					if i%perTablebase == 0 {
						if tb != nil {
							tb.Close()
						}
						if tb, err = Open(opts, src); err != nil {
							b.Fatal(err)
						}
					}
					t0, c0 := time.Now(), cpuTime()
					if _, err := tb.Probe(ctx, &positions[i]); err != nil {
						b.Fatal(err)
					}
					took[mode] += time.Since(t0)
					cpu[mode] += cpuTime() - c0
				}
				tb.Close()
			}
			probes += len(positions)
			round++
		}
		b.ReportMetric(float64(took[0].Nanoseconds())/float64(probes), "ns/probe-skip")
		b.ReportMetric(float64(took[1].Nanoseconds())/float64(probes), "ns/probe-checked")
		b.ReportMetric(float64(took[1])/float64(took[0]), "checked/skip")
		// The process's CPU time (the checksum runs on a goroutine of its
		// own) is what the machine's other load does not inflate.
		b.ReportMetric(float64(cpu[0].Nanoseconds())/float64(probes), "cpu-ns/probe-skip")
		b.ReportMetric(float64(cpu[1].Nanoseconds())/float64(probes), "cpu-ns/probe-checked")
		b.ReportMetric(float64(cpu[1])/float64(cpu[0]), "cpu-checked/skip")
	}
	b.Run("first", func(b *testing.B) {
		run(b, randomPositions(b, shippedMaterials(b, dir), 60, 4), 1)
	})
	b.Run("pass", func(b *testing.B) {
		run(b, randomPositions(b, shippedMaterials(b, dir), 300, 5), 300)
	})
}
