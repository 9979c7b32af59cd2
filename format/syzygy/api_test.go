package syzygy

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
	"github.com/tbfs/tbfs/internal/testkit/chesstboracle"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/mmap"
	"github.com/tbfs/tbfs/source/sourcetest"
)

// read is one ReadAt seen by recordingSource.
type read struct {
	name string
	off  int64
	n    int
	hint source.Hint
}

// recordingSource wraps a source, logs every read and can make the next
// reads of its objects fail as if the object had been replaced.
type recordingSource struct {
	source.Source
	mu      sync.Mutex
	reads   []read
	changed atomic.Int32 // reads left to fail with ErrChanged
}

func (s *recordingSource) Open(ctx context.Context, name string) (source.Object, error) {
	obj, err := s.Source.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	return &recordingObject{Object: obj, src: s, name: name}, nil
}

type recordingObject struct {
	source.Object
	src  *recordingSource
	name string
}

func (o *recordingObject) ReadAt(ctx context.Context, p []byte, off int64, hint source.Hint) (int, error) {
	o.src.mu.Lock()
	o.src.reads = append(o.src.reads, read{o.name, off, len(p), hint})
	o.src.mu.Unlock()
	if hint == source.HintData && o.src.changed.Load() > 0 {
		o.src.changed.Add(-1)
		return 0, source.Changed("%s replaced", o.name)
	}
	return o.Object.ReadAt(ctx, p, off, hint)
}

func fixtureSource(t *testing.T) *recordingSource {
	t.Helper()
	src, err := mmap.New(testenv.Testdata(t, "syzygy"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return &recordingSource{Source: src}
}

// TestReadHints checks what a probe asks of the transport: the header
// from offset 0 as a header read, the block indexes as one index read,
// and single compressed blocks as data reads (arbiter: the source
// contract and DESIGN.md's one-block-per-read rule).
func TestReadHints(t *testing.T) {
	src := fixtureSource(t)
	tb, err := Open(Options{SkipChecksums: true}, src)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	pos := mustFEN(t, "8/8/8/3k4/8/8/4P3/3K4 w - - 0 1")
	if _, err := tb.DTZ(context.Background(), &pos); err != nil {
		t.Fatal(err)
	}
	if err := tb.Close(); err != nil { // no read in flight after this
		t.Fatal(err)
	}
	kinds := map[source.Hint]int{}
	for _, r := range src.reads {
		kinds[r.hint]++
		switch r.hint {
		case source.HintHeader:
			if r.off != 0 {
				t.Errorf("header read of %s at %d", r.name, r.off)
			}
		case source.HintData:
			if r.n > 1<<16 || r.off%64 != 0 && r.n != 16 {
				t.Errorf("data read of %s: %d bytes at %d", r.name, r.n, r.off)
			}
		}
	}
	for _, h := range []source.Hint{source.HintHeader, source.HintIndex, source.HintData} {
		if kinds[h] == 0 {
			t.Errorf("no %v read in %v", h, src.reads)
		}
	}
}

// TestChangedObject makes a block read find its object replaced: the probe
// fails with source.ErrChanged, and the next probe opens the table afresh
// and answers (arbiter: the oracle row of the position).
func TestChangedObject(t *testing.T) {
	src := fixtureSource(t)
	tb, err := Open(Options{SkipChecksums: true}, src)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	// Oracle: 8/8/8/3k4/8/8/4P3/3K4 b - - 0 1 is a draw (probe.tsv).
	pos := mustFEN(t, "8/8/8/3k4/8/8/4P3/3K4 b - - 0 1")
	src.changed.Store(1)
	if _, err := tb.WDL(context.Background(), &pos); !errors.Is(err, source.ErrChanged) {
		t.Fatalf("WDL over a replaced object: %v, want ErrChanged", err)
	}
	v, err := tb.WDL(context.Background(), &pos)
	if err != nil || v != 0 {
		t.Fatalf("WDL after the change: %d, %v; want 0", v, err)
	}
	tb.Close()
	// The second probe's answer came from a fresh open of the table (its
	// own, or one a background open-ahead made after the change).
	n := 0
	for _, r := range src.reads {
		if r.name == "KPvK.rtbw" && r.off == 0 && r.hint == source.HintHeader {
			n++
		}
	}
	if n < 2 {
		t.Errorf("KPvK.rtbw's header read %d times; the replaced table was not opened again", n)
	}
}

// TestErrors ties each refusal to its rule: castling rights are outside
// every Syzygy table, more than seven men too, a material no source holds
// is ErrNoTable, and a closed Tablebase says so.
func TestErrors(t *testing.T) {
	tb := openDir(t, testenv.Testdata(t, "syzygy"))
	ctx := context.Background()
	for _, c := range []struct {
		fen  string
		want error
	}{
		{"4k3/8/8/8/8/8/8/R3K3 w Q - 0 1", ErrBadPosition},
		{"4k3/pppp4/8/8/8/8/PPPP4/4K3 w - - 0 1", ErrBadPosition},
		{"4k3/8/8/8/8/8/8/QQ2K3 w - - 0 1", ErrNoTable},
	} {
		pos := mustFEN(t, c.fen)
		if _, err := tb.WDL(ctx, &pos); !errors.Is(err, c.want) {
			t.Errorf("WDL %s: %v, want %v", c.fen, err, c.want)
		}
		if _, err := tb.DTZ(ctx, &pos); !errors.Is(err, c.want) {
			t.Errorf("DTZ %s: %v, want %v", c.fen, err, c.want)
		}
		if _, err := tb.Root(ctx, &pos); !errors.Is(err, c.want) {
			t.Errorf("Root %s: %v, want %v", c.fen, err, c.want)
		}
	}
	// Bare kings need no table: a draw by the rules.
	kk := mustFEN(t, "8/8/8/3k4/8/8/8/3K4 w - - 0 1")
	if v, err := tb.WDL(ctx, &kk); err != nil || v != 0 {
		t.Errorf("KvK: %d, %v", v, err)
	}
	if err := tb.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.WDL(ctx, &kk); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
}

// TestRefusedOpenExpires: a table a source refuses for good is remembered
// for MissingTTL, so a burst of probes sends no further request for it, and
// asked again after it, so a mended bucket policy needs no restart.
// Arbiter: the refusals the test injects; the oracle's win for KQvK.
func TestRefusedOpenExpires(t *testing.T) {
	ref := &sourcetest.FailingOpens{Source: fixtureSource(t), Err: source.Permanent(errors.New("403 Forbidden")),
		Pass: func(name string) bool { return strings.HasSuffix(name, ManifestSuffix) }}
	clock := testenv.NewClock(time.Unix(0, 0))
	tb, err := Open(Options{MissingTTL: time.Minute, Now: clock.Now}, ref)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	ctx := context.Background()
	// Oracle (probe.tsv): KQ6/8/8/6k1/8/8/8/8 w is a win.
	pos := mustFEN(t, "KQ6/8/8/6k1/8/8/8/8 w - - 0 1")
	if _, err := tb.WDL(ctx, &pos); !errors.Is(err, source.ErrPermanent) {
		t.Fatalf("first probe: %v, want the refusal", err)
	}
	opens := ref.Failed()
	for range 5 {
		if _, err := tb.WDL(ctx, &pos); !errors.Is(err, source.ErrPermanent) {
			t.Fatalf("within the TTL: %v, want the remembered refusal", err)
		}
	}
	if n := ref.Failed(); n != opens {
		t.Errorf("probes within the TTL sent %d more opens, want none", n-opens)
	}
	ref.Heal()
	clock.Add(2 * time.Minute)
	if v, err := tb.WDL(ctx, &pos); err != nil || v != 2 {
		t.Fatalf("after the TTL: %d, %v", v, err)
	}
}

// TestTableAppears: a table found missing, or opened while a plain cp was
// still writing it (empty, then its first bytes), is remembered as such
// for MissingTTL, and once the TTL has passed the whole copy answers.
// Arbiter: the format (a table starts with its 4-byte magic and has a
// header after it); the oracle's win for KQvK.
func TestTableAppears(t *testing.T) {
	whole, err := os.ReadFile(testenv.Testdata(t, "syzygy", "KQvK.rtbw"))
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
		{"magic only", whole[:4], ErrCorrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "KQvK.rtbw")
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
			// Oracle (probe.tsv): KQ6/8/8/6k1/8/8/8/8 w is a win.
			pos := mustFEN(t, "KQ6/8/8/6k1/8/8/8/8 w - - 0 1")
			if v, err := tb.WDL(ctx, &pos); !errors.Is(err, tt.want) {
				t.Fatalf("before the copy ended: %d, %v; want %v", v, err, tt.want)
			}
			if err := os.WriteFile(path, whole, 0o644); err != nil {
				t.Fatal(err)
			}
			if v, err := tb.WDL(ctx, &pos); !errors.Is(err, tt.want) {
				t.Fatalf("whole, within the TTL: %d, %v; want the remembered %v", v, err, tt.want)
			}
			clock.Add(time.Minute)
			if v, err := tb.WDL(ctx, &pos); err != nil || v != 2 {
				t.Fatalf("whole, after the TTL: %d, %v; want 2", v, err)
			}
		})
	}
}

// TestSharedCache: with a shared cache the decoded blocks count against it
// and stay within its budget, however small.
func TestSharedCache(t *testing.T) {
	src := fixtureSource(t)
	cache := blockcache.New(4 << 10)
	tb, err := Open(Options{BlockCache: cache}, src)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	rows := readOracle(t, testenv.Testdata(t, "syzygy", "probe.tsv"))
	ctx := context.Background()
	for _, r := range rows {
		pos := mustFEN(t, r.FEN)
		if got, err := tb.WDL(ctx, &pos); err != nil || got != tableWDL(r.WDL, r.DTZ) {
			t.Fatalf("line %d: %d, %v", r.Line, got, err)
		}
	}
	used, peak := tb.CacheStats()
	if used == 0 || peak > 4<<10 {
		t.Errorf("cache used %d, peak %d, budget %d", used, peak, 4<<10)
	}
}

// TestConcurrentProbes runs the fixture rows from several goroutines at
// once against one Tablebase (for the race detector); each answer is
// checked against the oracle.
func TestConcurrentProbes(t *testing.T) {
	tb := openDir(t, testenv.Testdata(t, "syzygy"))
	rows := readOracle(t, testenv.Testdata(t, "syzygy", "probe.tsv"))
	if raceEnabled {
		rows = chesstboracle.Sample(rows, 200, true)
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := range 4 {
		wg.Go(func() {
			for i := g; i < len(rows); i += 2 {
				r := rows[i]
				pos, err := chess.ParseFEN(r.FEN)
				if err != nil {
					errs <- err
					return
				}
				d, err := tb.DTZ(ctx, &pos)
				want := sign(r.WDL) * r.DTZ
				if pos.IsCheckmate() {
					want = -1
				}
				if err != nil || d != want {
					errs <- errors.Join(err, errors.New(r.FEN))
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
}

// blockingSource holds every data read until its context ends, like a
// transport that never answers.
// The first such read closes started.
type blockingSource struct {
	source.Source
	started chan struct{}
	once    *sync.Once
}

func (s blockingSource) Open(ctx context.Context, name string) (source.Object, error) {
	obj, err := s.Source.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	return blockingObject{obj, s}, nil
}

type blockingObject struct {
	source.Object
	src blockingSource
}

func (o blockingObject) ReadAt(ctx context.Context, p []byte, off int64, hint source.Hint) (int, error) {
	if hint == source.HintData {
		o.src.once.Do(func() { close(o.src.started) })
		<-ctx.Done()
		return 0, ctx.Err()
	}
	return o.Object.ReadAt(ctx, p, off, hint)
}

// TestCancelWhileChecking: a probe waiting for a checksum that cannot
// finish returns when its context ends, and Close stops the check.
func TestCancelWhileChecking(t *testing.T) {
	src := fixtureSource(t)
	blocking := blockingSource{Source: src, started: make(chan struct{}), once: new(sync.Once)}
	tb, err := Open(Options{}, blocking)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	pos := mustFEN(t, "KQ6/8/8/6k1/8/8/8/8 w - - 0 1")
	done := make(chan error, 1)
	go func() {
		_, err := tb.WDL(ctx, &pos)
		done <- err
	}()
	<-blocking.started // the table is open and its checksum run has begun
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("WDL: %v, want context.Canceled", err)
	}
	if err := tb.Close(); err != nil {
		t.Fatal(err)
	}
}

// prefetchingSource marks its objects as able to fetch ahead, as a remote
// source's cache does, and counts the objects opened by name.
type prefetchingSource struct {
	*recordingSource
}

func (s prefetchingSource) Open(ctx context.Context, name string) (source.Object, error) {
	obj, err := s.recordingSource.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.reads = append(s.reads, read{name: name, n: -1})
	s.mu.Unlock()
	return prefetchingObject{obj}, nil
}

type prefetchingObject struct{ source.Object }

func (prefetchingObject) Prefetch(context.Context, int64, int, source.Hint) error { return nil }

// TestOpenAhead: over a source that fetches, a WDL probe of a position
// whose pawn can promote opens the promoted materials' tables too, which
// the probe itself never reads (a WDL search follows captures only).
func TestOpenAhead(t *testing.T) {
	src := prefetchingSource{fixtureSource(t)}
	tb, err := Open(Options{}, src)
	if err != nil {
		t.Fatal(err)
	}
	// Oracle (probe.tsv): 8/1P6/7K/8/8/8/6k1/8 w is a win.
	pos := mustFEN(t, "8/1P6/7K/8/8/8/6k1/8 w - - 0 1")
	if v, err := tb.WDL(context.Background(), &pos); err != nil || v != 2 {
		t.Fatalf("WDL %d, %v; want 2", v, err)
	}
	tb.bgWG.Wait() // the opens started ahead, and the checksum runs
	if err := tb.Close(); err != nil {
		t.Fatal(err)
	}
	opened := map[string]bool{}
	for _, r := range src.reads {
		if r.n == -1 {
			opened[r.name] = true
		}
	}
	for _, name := range []string{"KPvK.rtbw", "KQvK.rtbw", "KRvK.rtbw", "KBvK.rtbw", "KNvK.rtbw"} {
		if !opened[name] {
			t.Errorf("%s not opened; opened %v", name, opened)
		}
	}
}

// TestChangedObjectConcurrent replaces tables (their next reads fail with
// source.ErrChanged) while goroutines probe: every answer given is the
// oracle's, every failure one the replacing explains (the object changed,
// or was closed when its table was forgotten), and once the replacing
// stops every probe answers. A probe that was handed a table just before
// another forgot it must not leave it behind for later probes. Arbiter:
// Fathom's rows (probe.tsv) and the failures the test injects.
func TestChangedObjectConcurrent(t *testing.T) {
	src := &sourcetest.ChangingReads{Source: mmapSource(t, testenv.Testdata(t, "syzygy"))}
	// A cache of a few blocks, so probes keep reading (and meeting the
	// replacements) instead of answering from decoded blocks.
	tb, err := Open(Options{SkipChecksums: true, BlockCache: blockcache.New(4 << 10)}, src)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	rows := readOracle(t, testenv.Testdata(t, "syzygy", "probe.tsv"))
	ctx := context.Background()
	check := func(r oracleRow) error {
		pos, err := chess.ParseFEN(r.FEN)
		if err != nil {
			return err
		}
		got, err := tb.WDL(ctx, &pos)
		if err != nil {
			return err
		}
		if want := tableWDL(r.WDL, r.DTZ); got != want {
			return fmt.Errorf("line %d %s: WDL %d, oracle implies %d", r.Line, r.FEN, got, want)
		}
		return nil
	}
	explained := func(err error) bool {
		return err == nil || errors.Is(err, source.ErrChanged) || errors.Is(err, source.ErrClosed)
	}
	for _, r := range rows {
		if err := check(r); err != nil {
			t.Fatalf("before the replacing: %v", err)
		}
	}
	opened := src.Opens()
	stop := make(chan struct{})
	errs := make(chan error, 4)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := g * 97; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := check(rows[i%len(rows)]); !explained(err) {
					errs <- err
					return
				}
			}
		})
	}
	replaces := 300
	if raceEnabled {
		replaces = 100
	}
	for i := 0; i < replaces; {
		src.Replace(1)
		// Probe until some read met the replacement.
		for src.Pending() {
			if err := check(rows[i%len(rows)]); !explained(err) {
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
	for _, r := range rows {
		if err := check(r); err != nil {
			if bad++; bad <= 10 {
				t.Errorf("after the replacing: %v", err)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d rows failed after the replacing stopped", bad, len(rows))
	}
	if src.Opens() == opened {
		t.Error("no table was opened again: no probe met a replacement")
	}
}
