package chesstb

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/format/blockcache"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/mmap"
	"github.com/tbfs/tbfs/source/sourcetest"
)

// copyFixtures copies the committed fixture tables into a fresh directory
// the test may damage.
func copyFixtures(t *testing.T) string {
	t.Helper()
	src := testenv.Testdata(t, "chesstb")
	dst := t.TempDir()
	for _, kind := range []string{"wdl", "dtz", "dtm"} {
		if err := os.MkdirAll(filepath.Join(dst, kind), 0o755); err != nil {
			t.Fatal(err)
		}
		ents, err := os.ReadDir(filepath.Join(src, kind))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			b, err := os.ReadFile(filepath.Join(src, kind, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dst, kind, e.Name()), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dst
}

// frameLayout parses a fixture file's header to learn where its parts lie.
func frameLayout(t *testing.T, path string, k Kind, mat string) *header {
	t.Helper()
	src, err := mmap.New(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	obj, err := src.Open(context.Background(), filepath.Base(path))
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	m, err := parseMaterial(mat)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := newIndexConfig(m)
	if err != nil {
		t.Fatal(err)
	}
	h, err := parseHeader(context.Background(), obj, k, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func mustFEN(t testing.TB, fen string) chess.Position {
	t.Helper()
	p, err := chess.ParseFEN(fen)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Positions whose probes read the damaged tables (all decisive, so every
// distance table is read; white to move, so the stored frames are read).
const (
	fenKQKR = "8/8/8/3k4/8/8/1Q1r4/K7 w - - 0 1"
	fenKBNK = "8/8/8/3k4/8/8/1BN5/K7 w - - 0 1"
	fenKRK  = "8/8/8/3k4/8/8/1R6/K7 w - - 0 1"
	fenKQK  = "8/8/8/3k4/8/8/1Q6/K7 w - - 0 1"
)

// storedFrame returns the first frame of h that holds cells.
func storedFrame(t *testing.T, h *header) *frame {
	t.Helper()
	for c := range h.frames {
		if h.frames[c].stored() {
			return &h.frames[c]
		}
	}
	t.Fatal("no stored frame")
	return nil
}

// TestMalformedFiles: each structural check names the damage it finds.
// The checksum would catch every row first, so it is skipped here to reach
// the checks behind it; the arbiter is the damage itself (a row breaks
// exactly the rule its error names).
func TestMalformedFiles(t *testing.T) {
	type damage func(t *testing.T, path string, b []byte) []byte
	flip := func(off int64) damage {
		return func(t *testing.T, path string, b []byte) []byte {
			b[off] ^= 0xff
			return b
		}
	}
	cases := []struct {
		name   string
		file   string // relative to the fixture root
		kind   Kind
		mat    string
		fen    string
		metric Metric
		damage damage
		want   string // a fragment of the error text
	}{
		{"bad magic", "dtz/KQKR.lzdtz", KindDTZ, "KQKR", fenKQKR, MetricDTZ, flip(0), "bad magic"},
		{"wrong material key", "dtm/KQKR.lzdtm", KindDTM, "KQKR", fenKQKR, MetricDTM, flip(5), "material key"},
		{"size not aligned", "wdl/KBNK.lzw", KindWDL, "KBNK", fenKBNK, MetricWDL,
			func(t *testing.T, _ string, b []byte) []byte { return b[:len(b)/2] }, "file size"},
		{"truncated header", "dtm/KBNK.lzdtm", KindDTM, "KBNK", fenKBNK, MetricDTM,
			func(t *testing.T, _ string, b []byte) []byte { return b[:72] }, "past the end"},
		{"data past the end", "dtz/KBNK.lzdtz", KindDTZ, "KBNK", fenKBNK, MetricDTZ,
			func(t *testing.T, path string, b []byte) []byte {
				h := frameLayout(t, path, KindDTZ, "KBNK")
				f := storedFrame(t, h)
				// Keep the header, drop the data but stay 8 past a multiple of 64.
				return append(b[:(f.dataOff+64)&^63], make([]byte, 8)...)
			}, "past the end"},
		{"offsets past the data", "dtm/KQKR.lzdtm", KindDTM, "KQKR", fenKQKR, MetricDTM,
			func(t *testing.T, path string, b []byte) []byte {
				f := storedFrame(t, frameLayout(t, path, KindDTM, "KQKR"))
				start := f.offsetsAt + 4
				for i := start; i < start+int64(f.offsets.onDiskBytes()); i++ {
					b[i] = 0xff
				}
				return b
			}, "offsets"},
		{"LZMA properties", "dtz/KQKR.lzdtz", KindDTZ, "KQKR", fenKQKR, MetricDTZ,
			func(t *testing.T, path string, b []byte) []byte {
				f := storedFrame(t, frameLayout(t, path, KindDTZ, "KQKR"))
				for blk := range f.blockCnt {
					lo, hi := f.offsets.get(blk), f.offsets.get(blk+1)
					if hi > lo {
						b[f.dataOff+int64(hi)-5] = 0xff // lc/lp/pb byte out of range
					}
				}
				return b
			}, "LZMA"},
		{"LZ4 block", "wdl/KQKR.lzw", KindWDL, "KQKR", fenKQKR, MetricWDL,
			func(t *testing.T, path string, b []byte) []byte {
				f := storedFrame(t, frameLayout(t, path, KindWDL, "KQKR"))
				for i := f.dataOff; i < f.dataOff+int64(f.dataSize); i++ {
					b[i] = 0xff
				}
				return b
			}, "LZ4"},
		{"bad colour count", "wdl/KBNK.lzw", KindWDL, "KBNK", fenKBNK, MetricWDL,
			func(t *testing.T, _ string, b []byte) []byte { b[4] |= 3; return b }, "colour count"},
		{"bad permutation", "dtz/KQK.lzdtz", KindDTZ, "KQK", fenKQK, MetricDTZ,
			func(t *testing.T, _ string, b []byte) []byte { b[9], b[10], b[11], b[12] = 0xff, 0xff, 0, 0; return b }, "permutation"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyFixtures(t)
			path := filepath.Join(dir, tc.file)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, tc.damage(t, path, b), 0o644); err != nil {
				t.Fatal(err)
			}
			tb := openDirs(t, Options{SkipChecksums: true}, dir)
			ctx := context.Background()
			pos := mustFEN(t, tc.fen)
			for range 2 { // the failure repeats; it is not cached as a value
				res, err := tb.Probe(ctx, &pos)
				if err == nil {
					// A damaged distance table may leave the other metrics
					// standing; then the metric itself reports it.
					if tc.metric == MetricWDL {
						t.Fatal("WDL answered from a damaged table")
					}
					err = res.Unavailable[tc.metric]
				}
				checkFileError(t, err, tc.file, tc.want)
			}
			// Another table still answers.
			other := mustFEN(t, fenKRK)
			if _, err := tb.Probe(ctx, &other); err != nil {
				t.Fatalf("KRK after the damage: %v", err)
			}
		})
	}
}

func checkFileError(t *testing.T, err error, file, want string) {
	t.Helper()
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("error %v does not match ErrCorrupt", err)
	}
	var fe *FileError
	if !errors.As(err, &fe) || fe.File != file {
		t.Fatalf("error %v does not name %s", err, file)
	}
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q lacks %q", err, want)
	}
}

// TestChecksum checks the stored XXH64 of every fixture file, then finds a
// single flipped payload byte that structural checks cannot see.
func TestChecksum(t *testing.T) {
	dir := copyFixtures(t)
	tb := openDirs(t, Options{}, dir)
	ctx := context.Background()
	for _, fen := range []string{fenKQKR, fenKBNK, fenKRK} {
		pos := mustFEN(t, fen)
		res, err := tb.Probe(ctx, &pos)
		if err != nil || !res.HasWDL || !res.HasDTZ || !res.HasDTM {
			t.Fatalf("%s: %v %v", fen, err, res.Unavailable)
		}
	}
	path := filepath.Join(dir, "dtm", "KBNK.lzdtm")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 1
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	tb2 := openDirs(t, Options{}, dir)
	pos := mustFEN(t, fenKBNK)
	res, err := tb2.Probe(ctx, &pos)
	if err == nil {
		err = res.Unavailable[MetricDTM]
	}
	checkFileError(t, err, "dtm/KBNK.lzdtm", "checksum")
}

// TestNoTable checks that a material without tables is ErrNoTable and that
// positions outside the domain are refused.
func TestNoTable(t *testing.T) {
	tb := openDirs(t, Options{}, testenv.Testdata(t, "chesstb"))
	ctx := context.Background()
	pos := mustFEN(t, "8/8/8/3k4/8/8/1QQ5/K7 w - - 0 1") // KQQK: not in the fixtures
	if _, err := tb.WDL(ctx, &pos); !errors.Is(err, ErrNoTable) {
		t.Fatalf("KQQK: %v", err)
	}
	castle := mustFEN(t, "4k3/8/8/8/8/8/8/R3K3 w Q - 0 1")
	if _, err := tb.Probe(ctx, &castle); !errors.Is(err, ErrBadPosition) {
		t.Fatalf("castling: %v", err)
	}
	// Mate, stalemate and bare kings need no table (arbiter: the rules).
	for _, c := range []struct {
		fen       string
		wdl       int
		mate, stm bool
	}{
		{"7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", 0, false, true},  // stalemate
		{"7k/6Q1/6K1/8/8/8/8/8 b - - 0 1", -2, true, false}, // checkmate
		{"8/8/8/3k4/8/8/8/K7 w - - 0 1", 0, false, false},   // bare kings
	} {
		pos := mustFEN(t, c.fen)
		res, err := tb.Probe(ctx, &pos)
		if err != nil {
			t.Fatalf("%s: %v", c.fen, err)
		}
		if res.WDL != c.wdl || res.Checkmate != c.mate || res.Stalemate != c.stm || res.DTZ != 0 || res.DTM != 0 {
			t.Fatalf("%s: %+v", c.fen, res)
		}
	}
}

// TestConcurrentProbes probes the fixture oracle rows from 16 goroutines at
// once through one Tablebase with a budget far below the working set, so
// blocks are evicted and decoded again while others read them.
func TestConcurrentProbes(t *testing.T) {
	dir := testenv.Testdata(t, "chesstb")
	rows := readOracle(t, filepath.Join(dir, "oracle", "probe.tsv"), false)
	rows = sample(rows, 160)
	if raceEnabled {
		rows = sample(rows, 25)
	}
	// Parsed here, in the test's goroutine: a bad row fails the test there.
	type want struct {
		pos           chess.Position
		wdl, dtz, dtm int
	}
	wants := make([]want, len(rows))
	for i, r := range rows {
		w := &wants[i]
		w.pos = r.position(t)
		w.wdl, w.dtz, _, w.dtm, _ = r.expected(t)
	}
	const budget = 3 << 20
	tb := openDirs(t, Options{BlockCacheBytes: budget}, dir)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 16 {
		wg.Go(func() {
			for i := range rows {
				j := (i + g*37) % len(rows)
				r, pos := rows[j], wants[j].pos
				wdl, dtz, dtm := wants[j].wdl, wants[j].dtz, wants[j].dtm
				res, err := tb.Probe(ctx, &pos)
				if err != nil {
					errs <- err
					return
				}
				if res.WDL != wdl || res.DTZ != dtz || res.DTM != dtm {
					errs <- errors.New("line " + r.fen + ": mismatch under concurrency")
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	used, peak := tb.CacheStats()
	if used > budget || peak > budget {
		t.Fatalf("cache held %d bytes (peak %d) over the %d budget", used, peak, budget)
	}
	t.Logf("cache peak %d of %d bytes", peak, budget)
}

// TestCacheBudget sweeps budgets from below one block upward and checks the
// bytes held never pass the budget while answers stay right.
func TestCacheBudget(t *testing.T) {
	dir := testenv.Testdata(t, "chesstb")
	n := 40
	if raceEnabled {
		n = 12
	}
	rows := sample(readOracle(t, filepath.Join(dir, "oracle", "probe.tsv"), false), n)
	for _, budget := range []int64{1, 4 << 10, 100 << 10, 1 << 20, 64 << 20} {
		tb := openDirs(t, Options{BlockCacheBytes: budget}, dir)
		n, _ := checkRows(t, tb, dir, rows)
		used, peak := tb.CacheStats()
		if used > budget || peak > budget {
			t.Fatalf("budget %d: held %d, peak %d", budget, used, peak)
		}
		t.Logf("budget %d: %d rows, peak %d bytes", budget, n, peak)
	}
}

// TestClose checks that Close waits for probes and refuses later ones.
func TestClose(t *testing.T) {
	dir := testenv.Testdata(t, "chesstb")
	src, err := mmap.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	tb, err := Open(Options{}, src)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	pos := mustFEN(t, fenKBNK)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				if _, err := tb.Probe(ctx, &pos); err != nil && !errors.Is(err, ErrClosed) {
					t.Error(err)
					return
				}
			}
		})
	}
	if err := tb.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if _, err := tb.Probe(ctx, &pos); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}

// flakySource fails every Open of a table with a transient error until
// healed, to check that such failures are reported and not remembered.
// Manifest lookups (a second Open per table) pass through. Failing every
// Open, rather than every other one, keeps the outcome independent of the
// order of the probe's own open and those it starts in the background for
// the tables it will need next (alternation let a background open take the
// failure meant for the probe's).
// isManifest passes a table's manifest through a failing source, so the
// failures injected are the tables' own.
func isManifest(name string) bool { return strings.HasSuffix(name, ManifestSuffix) }

func TestTransientOpen(t *testing.T) {
	src, err := mmap.New(testenv.Testdata(t, "chesstb"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	flaky := &sourcetest.FailingOpens{Source: src, Pass: isManifest}
	tb, err := Open(Options{}, flaky)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	ctx := context.Background()
	pos := mustFEN(t, fenKRK)
	_, err = tb.WDL(ctx, &pos)
	if !errors.Is(err, source.ErrTransient) {
		t.Fatalf("first probe: %v, want a transient error", err)
	}
	// The opens the probe started ahead end, failing, before the source
	// heals, so the retry cannot join one of them.
	tb.inflight.Wait()
	flaky.Heal()
	if w, err := tb.WDL(ctx, &pos); err != nil || w != 2 {
		t.Fatalf("retry: %d %v", w, err)
	}
}

// TestPermanentOpenExpires: a table whose open failed for good (a 403
// from a bucket) is remembered, so probes within MissingTTL send no
// request for it, and asked again once the TTL has passed, so a server
// whose bucket policy is mended answers without a restart. Arbiter: the
// failures the test injects, and KRK's WDL as TestTransientOpen has it.
func TestPermanentOpenExpires(t *testing.T) {
	src, err := mmap.New(testenv.Testdata(t, "chesstb"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	flaky := &sourcetest.FailingOpens{Source: src, Err: source.Permanent(errors.New("403 Forbidden")), Pass: isManifest}
	var now atomic.Int64
	tb, err := Open(Options{MissingTTL: time.Minute, Now: func() time.Time { return time.Unix(now.Load(), 0) }}, flaky)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	ctx := context.Background()
	pos := mustFEN(t, fenKRK)
	if _, err := tb.WDL(ctx, &pos); !errors.Is(err, source.ErrPermanent) {
		t.Fatalf("first probe: %v, want the permanent failure", err)
	}
	tb.inflight.Wait()
	flaky.Heal()
	if _, err := tb.WDL(ctx, &pos); !errors.Is(err, source.ErrPermanent) {
		t.Fatalf("probe within the TTL: %v, want the remembered failure", err)
	}
	now.Add(61)
	if w, err := tb.WDL(ctx, &pos); err != nil || w != 2 {
		t.Fatalf("probe after the TTL: %d %v, want 2", w, err)
	}
}

// TestTableAppears: a table found missing, or opened while a plain cp was
// still writing it (empty, then its first bytes), is remembered as such
// for MissingTTL, and once the TTL has passed the whole copy answers.
// Arbiter: the format's size rule (a table is 8 bytes past a multiple of
// 64, so these are short), and KRK's WDL as TestTransientOpen has it.
func TestTableAppears(t *testing.T) {
	whole, err := os.ReadFile(testenv.Testdata(t, "chesstb", "wdl", "KRK.lzw"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		first []byte // nil: no file
		want  error
	}{
		{"missing", nil, ErrNoTable},
		{"empty", whole[:0], ErrCorrupt},
		{"first 100 bytes", whole[:100], ErrCorrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.Mkdir(filepath.Join(dir, "wdl"), 0o755); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "wdl", "KRK.lzw")
			if tt.first != nil {
				if err := os.WriteFile(path, tt.first, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			src, err := mmap.New(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			clock := testenv.NewClock(time.Unix(0, 0))
			tb, err := Open(Options{MissingTTL: time.Minute, Now: clock.Now}, src)
			if err != nil {
				t.Fatal(err)
			}
			defer tb.Close()
			ctx := context.Background()
			pos := mustFEN(t, fenKRK)
			if w, err := tb.WDL(ctx, &pos); !errors.Is(err, tt.want) {
				t.Fatalf("before the copy ended: %d, %v; want %v", w, err, tt.want)
			}
			tb.inflight.Wait()
			if err := os.WriteFile(path, whole, 0o644); err != nil {
				t.Fatal(err)
			}
			if w, err := tb.WDL(ctx, &pos); !errors.Is(err, tt.want) {
				t.Fatalf("whole, within the TTL: %d, %v; want the remembered %v", w, err, tt.want)
			}
			clock.Add(time.Minute)
			if w, err := tb.WDL(ctx, &pos); err != nil || w != 2 {
				t.Fatalf("whole, after the TTL: %d, %v; want 2", w, err)
			}
		})
	}
}

// TestMemoSkipsEvictedPackBlock: a probe's memory of a pack block must not
// serve a block the cache has dropped, because a lookup there could decode
// it further outside the budget. After the drop the next read of the same
// block goes through the cache again and is counted there.
func TestMemoSkipsEvictedPackBlock(t *testing.T) {
	ctx := context.Background()
	tb := openDirs(t, Options{}, testenv.Testdata(t, "chesstb", "packs"))
	m, err := parseMaterial("KQKR")
	if err != nil {
		t.Fatal(err)
	}
	tf, err := tb.table(ctx, KindDTM50, m)
	if err != nil {
		t.Fatal(err)
	}
	c := 0
	for !tf.hdr.frames[c].stored() {
		c++
	}
	f := &tf.hdr.frames[c]
	var memo packMemo
	if _, _, err := tf.packRecord(ctx, c, 0, &memo); err != nil {
		t.Fatal(err)
	}
	key := blockcache.Key{File: tf.id, Frame: uint8(c), Block: 0}
	first := memo.get(key)
	if first == nil {
		t.Fatal("the memo did not keep the block it read")
	}
	tb.cache.DropFile(tf.id)
	if !first.evicted.Load() {
		t.Fatal("dropping the file's blocks did not mark the block evicted")
	}
	// A cell at the far end of the same block needs more of it decoded.
	last := f.blockPositions - 1
	if f.blockCnt == 1 && f.tailPositions != 0 {
		last = f.tailPositions - 1
	}
	if _, _, err := tf.packRecord(ctx, c, last, &memo); err != nil {
		t.Fatal(err)
	}
	cached, ok := tb.cache.Peek(key)
	if !ok || cached == any(first) {
		t.Fatalf("the read after the drop did not go through the cache (cached %v)", cached)
	}
	if done := first.done.Load(); done >= int64(first.size) {
		t.Errorf("the evicted block was decoded to its end (%d bytes) outside the budget", done)
	}
}

// wdlWant is a position and the WDL the reference gives it.
type wdlWant struct {
	pos chess.Position
	wdl int
}

// fixtureWDLs parses the rows of the fixture oracle under dir (an even
// sample of them under the race detector) in the test's goroutine, so the
// goroutines probing them only compare.
func fixtureWDLs(t *testing.T, dir string) []wdlWant {
	t.Helper()
	rows := readOracle(t, filepath.Join(dir, "oracle", "probe.tsv"), false)
	if raceEnabled {
		rows = sample(rows, 120)
	}
	wants := make([]wdlWant, len(rows))
	for i, r := range rows {
		wants[i].pos = r.position(t)
		wants[i].wdl, _, _, _, _ = r.expected(t)
	}
	return wants
}

// TestPooledWDLBlocksUnderEviction asks 8 goroutines at once for the WDL
// class of the fixture oracle rows through a budget of a few blocks, so
// nearly every read evicts a block whose buffer goes back to the pool and
// into the next decode while rebuilds still read their remembered blocks.
// The oracle's WDL is the arbiter: a buffer reused while a probe held it
// would give another block's codes.
func TestPooledWDLBlocksUnderEviction(t *testing.T) {
	dir := testenv.Testdata(t, "chesstb")
	wants := fixtureWDLs(t, dir)
	const budget = 200 << 10
	tb := openDirs(t, Options{BlockCacheBytes: budget}, dir)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			for i := range wants {
				w := &wants[(i+g*53)%len(wants)]
				pos := w.pos
				got, err := tb.WDL(ctx, &pos)
				if err != nil {
					errs <- err
					return
				}
				if got != w.wdl {
					errs <- fmt.Errorf("%s: WDL %d, the reference's %d", pos.FEN(), got, w.wdl)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if used, peak := tb.CacheStats(); used > budget || peak > budget {
		t.Errorf("cache held %d bytes (peak %d) over the %d budget", used, peak, budget)
	}
}

// TestChangedObjectConcurrent replaces tables (their next reads fail with
// source.ErrChanged) while goroutines probe: every answer given is the
// oracle's, every failure one the replacing explains (the object changed,
// or was closed when its table was forgotten), and once the replacing
// stops every probe answers, so no forgotten table is left in use.
// Arbiter: the fixture oracle's WDL and the failures the test injects.
func TestChangedObjectConcurrent(t *testing.T) {
	dir := testenv.Testdata(t, "chesstb")
	mm, err := mmap.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer mm.Close()
	src := &sourcetest.ChangingReads{Source: mm}
	// A cache of a few blocks, so probes keep reading (and meeting the
	// replacements) instead of answering from decoded blocks.
	tb, err := Open(Options{SkipChecksums: true, BlockCacheBytes: 4 << 10}, src)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	wants := fixtureWDLs(t, dir)
	ctx := context.Background()
	check := func(i int) error {
		w := &wants[i%len(wants)]
		pos := w.pos
		got, err := tb.WDL(ctx, &pos)
		if err != nil {
			return err
		}
		if got != w.wdl {
			return fmt.Errorf("%s: WDL %d, the reference's %d", pos.FEN(), got, w.wdl)
		}
		return nil
	}
	explained := func(err error) bool {
		return err == nil || errors.Is(err, source.ErrChanged) || errors.Is(err, source.ErrClosed)
	}
	for i := range wants {
		if err := check(i); err != nil {
			t.Fatalf("before the replacing: %v", err)
		}
	}
	opened := src.Opens()
	stop := make(chan struct{})
	errs := make(chan error, 4)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := g * 37; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := check(i); !explained(err) {
					errs <- err
					return
				}
			}
		})
	}
	for i := 0; i < 100; {
		src.Replace(1)
		// Probe until some read met the replacement.
		for src.Pending() {
			if err := check(i); !explained(err) {
				t.Error(err)
			}
			i++
		}
		i++
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	bad := 0
	for i := range wants {
		if err := check(i); err != nil {
			if bad++; bad <= 10 {
				t.Errorf("after the replacing: %v", err)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d rows failed after the replacing stopped", bad, len(wants))
	}
	if src.Opens() == opened {
		t.Error("no table was opened again: no probe met a replacement")
	}
}
