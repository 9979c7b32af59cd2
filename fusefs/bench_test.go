package fusefs_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
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

// trivialProber answers bare-kings positions with a fixed report, probing
// nothing, and passes every other position on: a file of the same mount,
// at the same depth, whose answer costs no probe, to measure what the
// FUSE round trips of one file cost by themselves.
type trivialProber struct{ next fusefs.Prober }

const trivialBoard = "8/8/8/3k4/8/8/8/K7 "

var trivialReport = &render.Report{Values: render.Values{WDL: new(int)}}

func (p trivialProber) Report(ctx context.Context, pos *chess.Position, children bool) (*render.Report, error) {
	if strings.HasPrefix(pos.FEN(), trivialBoard) {
		return trivialReport, nil
	}
	return p.next.Report(ctx, pos, children)
}

// BenchmarkFileOverhead measures what reading one wdl/ FEN file through the
// kernel mount costs beyond the same work in process (parse, probe every
// metric, render the WDL line), over 1,000 random positions with every
// block decoded, and the floor: a trivial file of the same mount at the
// same depth (bare kings, answered without a probe). Each pass reads every
// position once under a fresh name (the move number changes, which no
// value depends on), so each read reaches tbfs; the rank directories above
// are the kernel's cached entries after the first pass. It reports, per
// file, inprocess-µs, mount-µs, overhead-µs (mount minus in process) and
// floor-µs, and the same overhead and floor in CPU time.
//
//	go test ./fusefs -run '^$' -bench FileOverhead -benchtime 20x
func BenchmarkFileOverhead(b *testing.B) {
	dir, src, tb := benchTablebase(b)
	fens := randomFENs(b, tb, dir, 1000)
	coll := fusefs.Collector{Prober: chessprobe.New(tb, nil)}
	mnt, _ := mount(b, fusefs.Config{Prober: trivialProber{next: coll}, Tables: []source.Source{src}})
	ctx := context.Background()
	inProcess := func(fen string) error {
		pos, err := chess.ParseFEN(fen)
		if err != nil {
			return err
		}
		rep, err := coll.Report(ctx, &pos, false)
		if err != nil {
			return err
		}
		if _, ok := render.MetricText(&rep.Values, render.MetricWDL); !ok {
			return fmt.Errorf("%s: no WDL", fen)
		}
		return nil
	}
	viaMount := func(fen string) error {
		data, err := os.ReadFile(filepath.Join(mnt, "wdl", fen))
		if err == nil && len(data) == 0 {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	// pass times one read of each position, each under a name no pass
	// used before; trivial reads as many bare-kings files.
	pass := func(n int, trivial bool, read func(string) error) (time.Duration, time.Duration) {
		start, cpu0 := time.Now(), cpuTime(b)
		for i := range fens {
			name := uniqueFEN(fens, n*len(fens)+i)
			if trivial {
				name = fmt.Sprintf("%sw - - 0 %d", trivialBoard, 1+n*len(fens)+i)
			}
			if err := read(name); err != nil {
				b.Fatal(err)
			}
		}
		return time.Since(start), cpuTime(b) - cpu0
	}
	// Warm: decode every block, and let the kernel learn the rank
	// directories of every position and of the bare kings.
	pass(0, false, inProcess)
	pass(0, false, viaMount)
	pass(0, true, viaMount)
	var inproc, viamnt, floor, inprocCPU, viamntCPU, floorCPU time.Duration
	n := 0
	for b.Loop() {
		n++
		w, c := pass(n, false, inProcess)
		inproc, inprocCPU = inproc+w, inprocCPU+c
		w, c = pass(n, false, viaMount)
		viamnt, viamntCPU = viamnt+w, viamntCPU+c
		w, c = pass(n, true, viaMount)
		floor, floorCPU = floor+w, floorCPU+c
	}
	per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 / float64(n*len(fens)) }
	b.ReportMetric(per(inproc), "inprocess-µs/file")
	b.ReportMetric(per(viamnt), "mount-µs/file")
	b.ReportMetric(per(viamnt)-per(inproc), "overhead-µs/file")
	b.ReportMetric(per(floor), "floor-µs/file")
	// CPU time (every thread of the process, user and kernel: the reader,
	// the kernel's FUSE work and tbfs's) is steadier than wall time on a
	// busy machine, which adds waits for a core to every round trip.
	b.ReportMetric(per(viamntCPU)-per(inprocCPU), "overhead-cpu-µs/file")
	b.ReportMetric(per(floorCPU), "floor-cpu-µs/file")
}
