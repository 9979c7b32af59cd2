package geister

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/mmap"
	"github.com/tbfs/tbfs/source/sourcetest"
)

// id000Rows returns the committed oracle rows of the id000 fixture whose
// positions are not terminal (so their answers come from the table), with
// the positions parsed.
func id000Rows(t *testing.T) ([]oracleRow, []Position) {
	t.Helper()
	var rows []oracleRow
	var ps []Position
	for _, r := range readTSV(t, testenv.Testdata(t, "geister", "values_id000.tsv")) {
		p, err := ParseBoard(r["board"])
		if err != nil {
			t.Fatal(err)
		}
		if _, term := p.Terminal(); !term {
			rows, ps = append(rows, r), append(ps, p)
		}
	}
	if len(rows) < 2 {
		t.Fatalf("%d non-terminal fixture rows, want at least 2", len(rows))
	}
	return rows, ps
}

// fixture reads a committed Geister fixture file.
func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(testenv.Testdata(t, "geister", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMissingTTL: a table copied into a source after a probe found it
// missing is found once MissingTTL has passed and not before; with the
// TTL the front ends give --metadata-ttl 0 (tables.AskEveryTime, one
// nanosecond) it is found by the next probe. Arbiter: the committed oracle
// rows of id000.
func TestMissingTTL(t *testing.T) {
	m := Material{1, 1, 1, 1}
	rows, ps := id000Rows(t)
	want := uint8(rows[0].int(t, "value"))
	raw := fixture(t, m.FileName())
	ctx := context.Background()
	tests := []struct {
		name    string
		ttl     time.Duration
		clocked bool // the test's clock, else the real one
		wait    time.Duration
	}{
		{"default TTL", 0, true, DefaultMissingTTL},
		{"one minute", time.Minute, true, time.Minute},
		{"ask every time", time.Nanosecond, false, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			opts := Options{MissingTTL: tc.ttl}
			clock := testenv.NewClock(time.Unix(0, 0))
			if tc.clocked {
				opts.Now = clock.Now
			}
			tb := openDir(t, dir, opts)
			if _, err := tb.DTW(ctx, ps[0]); !errors.Is(err, ErrNoTable) {
				t.Fatalf("before copying: %v, want ErrNoTable", err)
			}
			if err := os.WriteFile(filepath.Join(dir, m.FileName()), raw, 0o644); err != nil {
				t.Fatal(err)
			}
			if tc.wait > 0 {
				clock.Add(tc.wait - time.Second)
				if _, err := tb.DTW(ctx, ps[0]); !errors.Is(err, ErrNoTable) {
					t.Fatalf("within the TTL: %v, want the remembered ErrNoTable", err)
				}
				if ok, err := tb.Has(ctx, m); ok || err != nil {
					t.Fatalf("Has within the TTL = %v, %v", ok, err)
				}
				clock.Add(time.Second)
			}
			if v, err := tb.DTW(ctx, ps[0]); err != nil || v != want {
				t.Fatalf("after the TTL: %d, %v; oracle %d (pos %s)", v, err, want, rows[0]["pos_id"])
			}
		})
	}
	t.Run("negative TTL remembers for good", func(t *testing.T) {
		dir := t.TempDir()
		clock := testenv.NewClock(time.Unix(0, 0))
		tb := openDir(t, dir, Options{MissingTTL: -1, Now: clock.Now})
		if _, err := tb.DTW(ctx, ps[0]); !errors.Is(err, ErrNoTable) {
			t.Fatalf("before copying: %v", err)
		}
		if err := os.WriteFile(filepath.Join(dir, m.FileName()), raw, 0o644); err != nil {
			t.Fatal(err)
		}
		clock.Add(1000 * time.Hour)
		if _, err := tb.DTW(ctx, ps[0]); !errors.Is(err, ErrNoTable) {
			t.Fatalf("after 1000 hours: %v, want ErrNoTable", err)
		}
	})
}

// TestRefusedOpen: a source's lasting refusal of a table (a 403) is
// remembered for MissingTTL, so probes within it send no open, and asked
// again after it; a transient failure is asked again by the next probe.
// Arbiter: the failures the test injects and source.Momentary's rule; the
// committed oracle rows of id000 for the answer once healed.
func TestRefusedOpen(t *testing.T) {
	rows, ps := id000Rows(t)
	want := uint8(rows[0].int(t, "value"))
	ctx := context.Background()
	tests := []struct {
		name       string
		fail       error
		remembered bool
	}{
		{"permanent", source.Permanent(errors.New("403 Forbidden")), true},
		{"invalid", source.Invalid("400 Bad Request"), true},
		{"transient", source.Transient(errors.New("503 Slow Down")), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src, err := mmap.New(testenv.Testdata(t, "geister"))
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			ref := &sourcetest.FailingOpens{Source: src, Err: tc.fail}
			clock := testenv.NewClock(time.Unix(0, 0))
			tb, err := Open(Options{MissingTTL: time.Minute, Now: clock.Now}, ref)
			if err != nil {
				t.Fatal(err)
			}
			defer tb.Close()
			if _, err := tb.DTW(ctx, ps[0]); !errors.Is(err, tc.fail) {
				t.Fatalf("first probe: %v, want the injected %v", err, tc.fail)
			}
			opens := ref.Failed()
			for range 3 {
				if _, err := tb.DTW(ctx, ps[0]); !errors.Is(err, tc.fail) {
					t.Fatalf("within the TTL: %v, want %v", err, tc.fail)
				}
			}
			more := ref.Failed() - opens
			if tc.remembered && more != 0 || !tc.remembered && more != 3 {
				t.Errorf("3 probes within the TTL sent %d opens; remembered %v", more, tc.remembered)
			}
			ref.Heal()
			if !tc.remembered {
				if v, err := tb.DTW(ctx, ps[0]); err != nil || v != want {
					t.Fatalf("healed, at once: %d, %v; oracle %d", v, err, want)
				}
				return
			}
			clock.Add(time.Minute - time.Second)
			if _, err := tb.DTW(ctx, ps[0]); !errors.Is(err, tc.fail) {
				t.Fatalf("healed, within the TTL: %v, want the remembered %v", err, tc.fail)
			}
			clock.Add(time.Second)
			if v, err := tb.DTW(ctx, ps[0]); err != nil || v != want {
				t.Fatalf("healed, after the TTL: %d, %v; oracle %d", v, err, want)
			}
		})
	}
}

// TestCorruptAskedAgain: a table refused as corrupt is remembered for
// MissingTTL like a miss, then opened again, so a table mended in place, or
// one whose SHA256SUMS was updated after the table itself, answers without
// a restart. Arbiter: the format's size rule (one byte per entry), the
// shipped SHA256SUMS, and the committed oracle rows of id000.
func TestCorruptAskedAgain(t *testing.T) {
	m := Material{1, 1, 1, 1}
	rows, ps := id000Rows(t)
	want := uint8(rows[0].int(t, "value"))
	raw := fixture(t, m.FileName())
	sums := fixture(t, SumsFile)
	// SHA256SUMS as it read before the table was replaced: another sum.
	stale := []byte(strings.Repeat("0", 64) + "  " + m.FileName() + "\n")
	tests := []struct {
		name          string
		before, after map[string][]byte // the files refused, then mended
	}{
		{"short table mended in place",
			map[string][]byte{m.FileName(): raw[:len(raw)-1]},
			map[string][]byte{m.FileName(): raw}},
		{"sums updated after the table",
			map[string][]byte{m.FileName(): raw, SumsFile: stale},
			map[string][]byte{m.FileName(): raw, SumsFile: sums}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			write := func(files map[string][]byte) {
				for name, b := range files {
					if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			write(tt.before)
			clock := testenv.NewClock(time.Unix(0, 0))
			tb := openDir(t, dir, Options{MissingTTL: time.Minute, Now: clock.Now})
			ctx := context.Background()
			if v, err := tb.DTW(ctx, ps[0]); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("refused table: %d, %v; want ErrCorrupt", v, err)
			}
			write(tt.after)
			if v, err := tb.DTW(ctx, ps[0]); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("mended, within the TTL: %d, %v; want the remembered ErrCorrupt", v, err)
			}
			clock.Add(time.Minute)
			if v, err := tb.DTW(ctx, ps[0]); err != nil || v != want {
				t.Fatalf("mended, after the TTL: %d, %v; want the oracle's %d", v, err, want)
			}
		})
	}
}

// swapSource serves files from memory. replace installs a new set of
// files; the objects opened before it then fail every read with
// source.ErrChanged, as a remote source's objects do once the object
// behind them is replaced, and later opens see the new files.
type swapSource struct {
	mu      sync.Mutex
	files   map[string][]byte
	version int
	opens   map[string]int
	closes  atomic.Int64
}

func newSwapSource(files map[string][]byte) *swapSource {
	return &swapSource{files: files, opens: map[string]int{}}
}

func (s *swapSource) replace(files map[string][]byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files = files
	s.version++
}

func (s *swapSource) opened(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opens[name]
}

func (s *swapSource) Open(_ context.Context, name string) (source.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	data, ok := s.files[name]
	if !ok {
		return nil, &source.Error{Op: "open", Name: name, Err: source.ErrNotFound}
	}
	s.opens[name]++
	return &swapObject{src: s, name: name, data: data, version: s.version}, nil
}

func (s *swapSource) Close() error { return nil }

type swapObject struct {
	src     *swapSource
	name    string
	data    []byte
	version int
	closed  atomic.Bool
}

func (o *swapObject) Size() int64 { return int64(len(o.data)) }

func (o *swapObject) ReadAt(_ context.Context, p []byte, off int64, _ source.Hint) (int, error) {
	if o.closed.Load() {
		return 0, &source.Error{Op: "read", Name: o.name, Err: source.ErrClosed}
	}
	o.src.mu.Lock()
	replaced := o.src.version != o.version
	o.src.mu.Unlock()
	if replaced {
		return 0, &source.Error{Op: "read", Name: o.name, Err: source.Changed("version %d replaced", o.version)}
	}
	if off < 0 || off > int64(len(o.data)) {
		return 0, source.Invalid("offset %d outside %d bytes", off, len(o.data))
	}
	n := copy(p, o.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (o *swapObject) Close() error {
	if !o.closed.Swap(true) {
		o.src.closes.Add(1)
	}
	return nil
}

// TestReplacedTable: a read that finds its table's object replaced fails
// with source.ErrChanged, the table is forgotten (its object closed, its
// frames dropped), and the next probe opens the new version and answers
// from it alone: recompressed with other frame sizes, so an old frame
// answered for a new one would give other bytes; or the same bytes; or a
// raw file in place of a removed .zst. Arbiter: the committed oracle rows
// of id000 and the failures the swap injects.
func TestReplacedTable(t *testing.T) {
	m := Material{1, 1, 1, 1}
	rows, ps := id000Rows(t)
	raw := fixture(t, m.FileName())
	zst := fixture(t, m.FileName()+".zst")
	recompressed := seekableZstd(t, raw, 5000, 3001)
	zName, rawName := m.FileName()+".zst", m.FileName()
	// b is a row whose entry lies in another 8 KiB frame than a's, so
	// after the swap it is not answered from a frame cached before.
	a, b := 0, -1
	for i, r := range rows {
		if r.uint(t, "obsblk_rank")/8192 != rows[a].uint(t, "obsblk_rank")/8192 {
			b = i
			break
		}
	}
	if b < 0 {
		t.Fatal("every fixture row is in one frame")
	}
	tests := []struct {
		name     string
		old, new map[string][]byte
		newName  string
		opens    int // of newName, before and after the swap
	}{
		{"zst recompressed", map[string][]byte{zName: zst}, map[string][]byte{zName: recompressed}, zName, 2},
		{"zst same bytes", map[string][]byte{zName: zst}, map[string][]byte{zName: zst}, zName, 2},
		{"raw same bytes", map[string][]byte{rawName: raw}, map[string][]byte{rawName: raw}, rawName, 2},
		{"zst removed, raw left", map[string][]byte{zName: zst, rawName: raw}, map[string][]byte{rawName: raw}, rawName, 1},
	}
	ctx := context.Background()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := newSwapSource(tc.old)
			tb, err := Open(Options{CacheBytes: 1 << 20}, src)
			if err != nil {
				t.Fatal(err)
			}
			defer tb.Close()
			if v, err := tb.DTW(ctx, ps[a]); err != nil || v != uint8(rows[a].int(t, "value")) {
				t.Fatalf("before the swap: %d, %v; oracle %s", v, err, rows[a]["value"])
			}
			src.replace(tc.new)
			if _, err := tb.DTW(ctx, ps[b]); !errors.Is(err, source.ErrChanged) {
				t.Fatalf("first read after the swap: %v, want source.ErrChanged", err)
			}
			if n := src.closes.Load(); n != 1 {
				t.Errorf("%d objects closed after the failed read, want the old table's 1", n)
			}
			if _, frames, bytes := tb.Cache().Stats(); frames != 0 || bytes != 0 {
				t.Errorf("after the failed read the cache holds %d frames (%d bytes), want the old table's dropped", frames, bytes)
			}
			for i, p := range ps {
				want := uint8(rows[i].int(t, "value"))
				if v, err := tb.DTW(ctx, p); err != nil || v != want {
					t.Fatalf("after the swap: DTW(%s) = %d, %v; oracle %d (pos %s)", p, v, err, want, rows[i]["pos_id"])
				}
			}
			if name, err := tb.TableName(ctx, m); err != nil || name != tc.newName {
				t.Errorf("TableName after the swap = %q, %v; want %q", name, err, tc.newName)
			}
			if n := src.opened(tc.newName); n != tc.opens {
				t.Errorf("%s opened %d times, want %d", tc.newName, n, tc.opens)
			}
		})
	}
}

// TestReplacedTableConcurrent swaps the table's versions while goroutines
// probe: every answer given is the oracle's, every failure is one the
// swaps explain (the object changed, or was closed by the forgetting), and
// once the swaps stop every probe answers. For the race detector.
func TestReplacedTableConcurrent(t *testing.T) {
	m := Material{1, 1, 1, 1}
	rows, ps := id000Rows(t)
	raw := fixture(t, m.FileName())
	zName := m.FileName() + ".zst"
	versions := []map[string][]byte{
		{zName: fixture(t, zName)},
		{zName: seekableZstd(t, raw, 5000, 3001)},
		{zName: seekableZstd(t, raw, 1<<14)},
		{m.FileName(): raw},
	}
	src := newSwapSource(versions[0])
	tb, err := Open(Options{CacheBytes: 64 << 10}, src)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	ctx := context.Background()
	check := func(i int) error {
		want := uint8(rows[i].int(t, "value"))
		v, err := tb.DTW(ctx, ps[i])
		if err != nil {
			return err
		}
		if v != want {
			return fmt.Errorf("DTW(%s) = %d; oracle %d (pos %s)", ps[i], v, want, rows[i]["pos_id"])
		}
		return nil
	}
	stop := make(chan struct{})
	errs := make(chan error, 4)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; ; i++ {
				select {
				case <-stop:
					errs <- nil
					return
				default:
				}
				err := check(i % len(rows))
				if err != nil && !errors.Is(err, source.ErrChanged) && !errors.Is(err, source.ErrClosed) {
					errs <- err
					return
				}
			}
		}()
	}
	for round := 1; round <= 12; round++ {
		src.replace(versions[round%len(versions)])
		// Let the probers meet this version before the next swap.
		for i := range rows {
			_ = check(i)
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	// The first probe of a table still open on an old version fails once;
	// after that every probe answers.
	_ = check(0)
	for i := range rows {
		if err := check(i); err != nil {
			t.Fatalf("after the swaps: %v", err)
		}
	}
}
