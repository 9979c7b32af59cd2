package fusefs_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/chessprobe"
	"github.com/tbfs/tbfs/format/chesstb"
	"github.com/tbfs/tbfs/fusefs"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/render"
	"github.com/tbfs/tbfs/source"
)

// benchTables is the table set the benchmarks read: the shared shipped set
// (40 materials) when present, else the fixtures.
func benchTables(b *testing.B) string {
	b.Helper()
	dir := filepath.Join(testenv.RepoRoot(b), "..", "shared", "chesstb", "shipped")
	if s := os.Getenv("TBFS_SHARED"); s != "" {
		dir = filepath.Join(s, "chesstb", "shipped")
	}
	if _, err := os.Stat(dir); err != nil {
		return testenv.Testdata(b, "chesstb")
	}
	return dir
}

var pieceLetters = map[byte]chess.PieceType{'K': chess.King, 'Q': chess.Queen, 'R': chess.Rook, 'B': chess.Bishop, 'N': chess.Knight, 'P': chess.Pawn}

// randomFENs builds n legal positions over the materials with a WDL table
// in dir: random placement, random side to move and clock, half of them
// with the colours swapped, as in the reference prober's speed list.
// Positions the tables cannot answer (none expected) are dropped, so both
// sides of a comparison do the same work.
func randomFENs(b *testing.B, tb *chesstb.Tablebase, dir string, n int) []string {
	b.Helper()
	ents, err := os.ReadDir(filepath.Join(dir, "wdl"))
	if err != nil {
		b.Fatal(err)
	}
	var mats []string
	for _, e := range ents {
		if m, ok := strings.CutSuffix(e.Name(), ".lzw"); ok {
			mats = append(mats, m)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	out := make([]string, 0, n)
	for len(out) < n {
		m := mats[rng.IntN(len(mats))]
		second := strings.LastIndexByte(m, 'K')
		sides := [2]string{m[:second], m[second:]}
		if rng.IntN(2) == 1 {
			sides[0], sides[1] = sides[1], sides[0]
		}
		var board [64]chess.Piece
		ok := true
		for c, letters := range sides {
			for i := 0; i < len(letters) && ok; i++ {
				pt := pieceLetters[letters[i]]
				sq := rng.IntN(64)
				if board[sq] != chess.NoPiece || (pt == chess.Pawn && (sq < 8 || sq >= 56)) {
					ok = false
					break
				}
				board[sq] = chess.MakePiece(chess.Color(c), pt)
			}
		}
		if !ok {
			continue
		}
		pos, err := chess.FromBoard(board, chess.Color(rng.IntN(2)), 0, chess.NoSquare, rng.IntN(100), 1)
		if err != nil {
			continue
		}
		if _, err := tb.Probe(context.Background(), &pos); err != nil {
			continue
		}
		out = append(out, pos.FEN())
	}
	return out
}

// uniqueFEN gives the i-th probe of a run a path no earlier probe used, so
// each read reaches the file system instead of the kernel's cached entry:
// the move number changes, which no table value depends on.
func uniqueFEN(fens []string, i int) string {
	fen := fens[i%len(fens)]
	return fen[:strings.LastIndexByte(fen, ' ')+1] + fmt.Sprint(2+i/len(fens))
}

// benchTablebase opens the benchmark tables with room to keep every
// decoded block.
func benchTablebase(b *testing.B) (string, source.Source, *chesstb.Tablebase) {
	b.Helper()
	dir := benchTables(b)
	src := openDir(b, dir)
	tb, err := chesstb.Open(chesstb.Options{BlockCacheBytes: 1 << 30}, src)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { tb.Close() })
	return dir, src, tb
}

// BenchmarkProbe compares a probe read as a file through the kernel mount
// with the same probe in-process (parse, probe, render the human text),
// over 10,000 random positions with every table block already decoded.
// "serial" is one reader; "parallel8" is 8 concurrent readers.
func BenchmarkProbe(b *testing.B) {
	dir, src, tb := benchTablebase(b)
	fens := randomFENs(b, tb, dir, 10000)
	mnt, _ := mount(b, fusefs.Config{Prober: fusefs.Collector{Prober: chessprobe.New(tb, nil)}, Tables: []source.Source{src}})
	ctx := context.Background()
	inProcess := func(fen string) error {
		pos, err := chess.ParseFEN(fen)
		if err != nil {
			return err
		}
		rep, err := render.Collect(ctx, chessprobe.New(tb, nil), &pos, false)
		if err != nil {
			return err
		}
		if len(render.Text(rep)) == 0 {
			return io.ErrUnexpectedEOF
		}
		return nil
	}
	viaMount := func(fen string) error {
		data, err := os.ReadFile(filepath.Join(mnt, "chess", fen))
		if err == nil && len(data) == 0 {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	// Warm: decode every block these positions need.
	for _, fen := range fens {
		if err := inProcess(fen); err != nil {
			b.Fatal(err)
		}
	}
	// "mount/kernel-cached" reads paths read just before, which the kernel
	// answers from its own caches (entries, attributes, pages) within the
	// entry timeout, without asking tbfs.
	b.Run("mount/kernel-cached", func(b *testing.B) {
		for _, fen := range fens {
			if err := viaMount(fen); err != nil {
				b.Fatal(err)
			}
		}
		i := 0
		for b.Loop() {
			if err := viaMount(fens[i%len(fens)]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	var seq atomic.Int64 // unique paths across every sub-benchmark
	for _, mode := range []struct {
		name string
		f    func(string) error
	}{{"inprocess", inProcess}, {"mount", viaMount}} {
		b.Run(mode.name+"/serial", func(b *testing.B) {
			for b.Loop() {
				if err := mode.f(uniqueFEN(fens, int(seq.Add(1)))); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(mode.name+"/parallel8", func(b *testing.B) {
			// RunParallel starts parallelism × GOMAXPROCS readers.
			b.SetParallelism(max(1, 8/runtime.GOMAXPROCS(0)))
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := mode.f(uniqueFEN(fens, int(seq.Add(1)))); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkRawTable reads the largest table sequentially through tables/
// (with the kernel's page cache dropped before each pass, and kept) and
// straight from the source, in 128 KiB requests.
func BenchmarkRawTable(b *testing.B) {
	dir := benchTables(b)
	src := openDir(b, dir)
	entries, err := source.List(context.Background(), src, "")
	if err != nil {
		b.Fatal(err)
	}
	var big source.Entry
	for _, e := range entries {
		if e.Size > big.Size {
			big = e
		}
	}
	mnt, _ := mount(b, fusefs.Config{Tables: []source.Source{src}})
	buf := make([]byte, 128<<10)
	b.Run("source", func(b *testing.B) {
		obj, err := src.Open(context.Background(), big.Name)
		if err != nil {
			b.Fatal(err)
		}
		defer obj.Close()
		b.SetBytes(big.Size)
		for b.Loop() {
			for off := int64(0); off < big.Size; off += int64(len(buf)) {
				if _, err := obj.ReadAt(context.Background(), buf, off, source.HintData); err != nil && err != io.EOF {
					b.Fatal(err)
				}
			}
		}
	})
	for _, drop := range []bool{true, false} {
		name := "mount/pagecache-kept"
		if drop {
			name = "mount/pagecache-dropped"
		}
		b.Run(name, func(b *testing.B) {
			f, err := os.Open(filepath.Join(mnt, "tables", big.Name))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			b.SetBytes(big.Size)
			for b.Loop() {
				if drop {
					// Every pass then reaches tbfs and the source.
					if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
						b.Fatal(err)
					}
				}
				for off := int64(0); off < big.Size; off += int64(len(buf)) {
					if _, err := f.ReadAt(buf, off); err != nil && err != io.EOF {
						b.Fatal(err)
					}
				}
			}
		})
	}
	b.Logf("table %s, %d bytes", big.Name, big.Size)
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkFloor measures what tbfs adds to reading a position file
// through the kernel mount beyond the FUSE floor and the probe in process.
// The floor (fusefs.MountFloor) is the cheapest go-fuse tree of the same
// shape (a view, seven rank directories, then a file) with the same mount
// options and timeouts, whose files hold two fixed bytes. tbfs is the tree
// over the prober tbfs mount builds (chessprobe.Open: chesstb and Syzygy
// readers on the same source, one block budget) with room to keep every
// decoded block. Over 1,000 random positions, warm, each pass reads every
// position once under a name no pass used before (the move number changes,
// which no value depends on), so every file is looked up afresh; the rank
// directories above are the kernel's cached entries after the first pass,
// in both trees. Both trees are read the same way, os.ReadFile, in the same
// run, pass after pass.
//
// It reports per file, for wdl/ and chess/ files: floor-µs, mount-µs,
// probe-µs (the least in-process work that gives the file's content: the
// chesstb WDL probe, as tbprobe bench --wdl; render.Collect and
// render.Text, as tbprobe prints a position), answer-µs (the tree's own
// lookup work in process, fusefs.FS.AnswerPath) and adds-µs (mount minus
// floor minus probe); and the floor, mount and adds in CPU time.
//
// The servers and the passes carry pprof labels (server=tbfs|floor,
// reader=tbfs|floor|probe|answer), so a -cpuprofile can be split with
// pprof -tagfocus.
//
//	go test ./fusefs -run '^$' -bench Floor -benchtime 20x -count 5
func BenchmarkFloor(b *testing.B) {
	dir := benchTables(b)
	src := openDir(b, dir)
	tabs, err := chessprobe.Open(chesstb.Options{BlockCacheBytes: 1 << 30}, src)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { tabs.Close() })
	fens := randomFENs(b, tabs.Chesstb, dir, 1000)
	cfg := fusefs.Config{Prober: fusefs.Collector{Prober: tabs.Prober}, Tables: []source.Source{src}}
	ctx := context.Background()
	var mnt, floor string
	var tree *fusefs.FS
	pprof.Do(ctx, pprof.Labels("server", "tbfs"), func(context.Context) { mnt, tree = mount(b, cfg) })
	pprof.Do(ctx, pprof.Labels("server", "floor"), func(context.Context) { floor = mountFloor(b, cfg) })
	read := func(root string) func(string) error {
		return func(p string) error {
			data, err := os.ReadFile(filepath.Join(root, p))
			if err == nil && len(data) == 0 {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
	}
	answer := func(p string) error {
		data, err := tree.AnswerPath(ctx, p)
		if err == nil && len(data) == 0 {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	// probes are the least in-process work giving each view's file.
	probes := map[string]func(string) error{
		"wdl": func(p string) error {
			pos, err := chess.ParseFEN(strings.TrimPrefix(p, "wdl/"))
			if err != nil {
				return err
			}
			_, err = tabs.Chesstb.WDL(ctx, &pos)
			return err
		},
		"chess": func(p string) error {
			pos, err := chess.ParseFEN(strings.TrimPrefix(p, "chess/"))
			if err != nil {
				return err
			}
			rep, err := render.Collect(ctx, tabs.Prober, &pos, false)
			if err != nil {
				return err
			}
			if len(render.Text(rep)) == 0 {
				return io.ErrUnexpectedEOF
			}
			return nil
		},
	}
	for _, view := range []string{"wdl", "chess"} {
		// passes counts the passes of every run of this view (-count
		// runs it again on the same mounts), so no name is read twice.
		passes := 0
		b.Run(view, func(b *testing.B) {
			// pass times one read of each position, each under a name no
			// earlier pass of this view used, labelled reader=label.
			pass := func(n int, label string, read func(string) error) (wall, cpu time.Duration) {
				n += passes
				pprof.Do(ctx, pprof.Labels("reader", label), func(context.Context) {
					start, cpu0 := time.Now(), cpuTime(b)
					for i := range fens {
						if err := read(view + "/" + uniqueFEN(fens, n*len(fens)+i)); err != nil {
							b.Fatal(err)
						}
					}
					wall, cpu = time.Since(start), cpuTime(b)-cpu0
				})
				return wall, cpu
			}
			// Warm: decode every block, and let the kernel learn every
			// position's rank directories in both trees.
			pass(0, "answer", answer)
			pass(0, "tbfs", read(mnt))
			pass(0, "floor", read(floor))
			var fl, mo, pr, an, flCPU, moCPU, prCPU time.Duration
			n := 0
			for b.Loop() {
				n++
				w, c := pass(n, "floor", read(floor))
				fl, flCPU = fl+w, flCPU+c
				w, c = pass(n, "tbfs", read(mnt))
				mo, moCPU = mo+w, moCPU+c
				w, c = pass(n, "probe", probes[view])
				pr, prCPU = pr+w, prCPU+c
				w, _ = pass(n, "answer", answer)
				an += w
			}
			passes += n + 1
			per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 / float64(n*len(fens)) }
			b.ReportMetric(per(fl), "floor-µs/file")
			b.ReportMetric(per(mo), "mount-µs/file")
			b.ReportMetric(per(pr), "probe-µs/file")
			b.ReportMetric(per(an), "answer-µs/file")
			b.ReportMetric(per(mo)-per(fl)-per(pr), "adds-µs/file")
			// CPU time (every thread of the process, user and kernel: the
			// reader, the kernel's FUSE work and the servers') is steadier
			// than wall time on a busy machine, which adds waits for a
			// core to every round trip.
			b.ReportMetric(per(flCPU), "floor-cpu-µs/file")
			b.ReportMetric(per(moCPU), "mount-cpu-µs/file")
			b.ReportMetric(per(moCPU)-per(flCPU)-per(prCPU), "adds-cpu-µs/file")
		})
	}
}

// mountFloor mounts the FUSE floor with the options a tree of cfg is
// mounted with, on a fresh temporary directory unmounted at cleanup.
func mountFloor(b *testing.B, cfg fusefs.Config) string {
	b.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		testenv.Missing(b, "/dev/fuse")
	}
	if os.Geteuid() != 0 {
		testenv.Tool(b, "fusermount3")
	}
	dir := b.TempDir()
	srv, err := fusefs.MountFloor(dir, cfg)
	if err != nil {
		b.Fatalf("mount the floor: %v", err)
	}
	b.Cleanup(func() {
		if err := srv.Unmount(); err != nil {
			unix.Unmount(dir, unix.MNT_DETACH)
			return
		}
		srv.Wait()
	})
	return dir
}
