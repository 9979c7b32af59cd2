// Package sourcetest is the conformance suite every transport runs: one table
// of cases that checks each promise of the source.Source contract, the way
// rclone's fstests check every backend. A new transport (a plugin, say) gets
// the whole suite by writing one test:
//
//	func TestConformance(t *testing.T) {
//		sourcetest.Run(t, func(t *testing.T, dir string) source.Source {
//			// serve dir, which already holds the fixtures, and open it
//		})
//	}
//
// The arbiter of every expected value is the fixture itself: the suite writes
// known bytes into dir before it calls open, and checks that the source gives
// back exactly those bytes.
package sourcetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tbfs/tbfs/source"
)

// BigSize is the length of the largest fixture object, "big/blob.bin": more
// than a mebibyte and not a multiple of any block size, so reads cross block
// and end-of-object boundaries.
const BigSize = 1<<20 + 300007

// Fixture is one object the suite writes before it opens the source.
type Fixture struct {
	Name string // slash-separated object name
	Data []byte // its exact content
}

// Fixtures returns the objects the suite writes: several files, nested names,
// a name with a space, an empty file and a BigSize file of pseudo-random bytes
// from a fixed seed. Every call returns the same content.
func Fixtures() []Fixture {
	big := make([]byte, BigSize)
	r := rand.New(rand.NewChaCha8([32]byte{'t', 'b', 'f', 's'}))
	for i := 0; i < len(big); i += 8 {
		v := r.Uint64()
		for j := 0; j < 8 && i+j < len(big); j++ {
			big[i+j] = byte(v >> (8 * j))
		}
	}
	seq := make([]byte, 1000)
	for i := range seq {
		seq[i] = byte(i * 7)
	}
	return []Fixture{
		{Name: "a.txt", Data: []byte("hello, world\n")},
		{Name: "big/blob.bin", Data: big},
		{Name: "dir/b.bin", Data: seq},
		{Name: "dir/sub/c.txt", Data: []byte("nested object\n")},
		{Name: "dir/with space.txt", Data: []byte("a name with a space\n")},
		{Name: "odd/%41 ?#+&=;é.bin", Data: []byte("characters URLs treat specially")},
		{Name: "dir2/d.txt", Data: []byte("d")},
		{Name: "empty", Data: nil},
	}
}

// WriteFixtures writes Fixtures into dir, creating subdirectories.
func WriteFixtures(t testing.TB, dir string) {
	t.Helper()
	for _, f := range Fixtures() {
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Run writes the fixtures into a fresh temporary directory (and one file,
// Outside, beside it), calls open once
// with it, and checks the returned source against the contract: sizes, full
// and partial reads, reads across the end, bad offsets, bad names, missing
// objects, listing (when the source lists), concurrent reads, cancelled
// contexts and Close. Run closes the source at the end.
//
// A source that implements source.Lister but answers List with
// ErrUnsupported (an HTTP mirror without a manifest) is treated as one that
// cannot list; everything else is checked for every source.
func Run(t *testing.T, open func(t *testing.T, dir string) source.Source) {
	t.Helper()
	// The root is one level down, beside a file a transport that let a
	// name escape would serve.
	parent := t.TempDir()
	dir := filepath.Join(parent, "root")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(parent, Outside), []byte("outside the root"), 0o644); err != nil {
		t.Fatal(err)
	}
	WriteFixtures(t, dir)
	src := open(t, dir)
	if src == nil {
		t.Fatal("open returned a nil source")
	}
	fx := map[string][]byte{}
	for _, f := range Fixtures() {
		fx[f.Name] = f.Data
	}
	s := &suite{src: src, fx: fx}
	t.Run("Size", s.testSize)
	t.Run("ReadAll", s.testReadAll)
	t.Run("ReadAt", s.testReadAt)
	t.Run("BadOffset", s.testBadOffset)
	t.Run("BadName", s.testBadName)
	t.Run("NotFound", s.testNotFound)
	t.Run("List", s.testList)
	t.Run("Concurrent", s.testConcurrent)
	t.Run("Cancelled", s.testCancelled)
	t.Run("Close", s.testClose)
}

type suite struct {
	src source.Source
	fx  map[string][]byte
}

func (s *suite) open(t *testing.T, name string) source.Object {
	t.Helper()
	obj, err := s.src.Open(context.Background(), name)
	if err != nil {
		t.Fatalf("Open(%q): %v", name, err)
	}
	t.Cleanup(func() { obj.Close() })
	return obj
}

func (s *suite) testSize(t *testing.T) {
	for _, f := range Fixtures() {
		t.Run(f.Name, func(t *testing.T) {
			obj := s.open(t, f.Name)
			if got, want := obj.Size(), int64(len(f.Data)); got != want {
				t.Errorf("Size() = %d, want %d (bytes written)", got, want)
			}
		})
	}
}

func (s *suite) testReadAll(t *testing.T) {
	for _, f := range Fixtures() {
		t.Run(f.Name, func(t *testing.T) {
			obj := s.open(t, f.Name)
			got, err := source.ReadAll(context.Background(), obj, source.HintData)
			if err != nil {
				t.Fatalf("ReadAll: %v", err)
			}
			if !bytes.Equal(got, f.Data) {
				t.Errorf("ReadAll returned %d bytes differing from the %d written", len(got), len(f.Data))
			}
		})
	}
}

// readCase is one ReadAt of n bytes at off; the expected bytes and error
// follow from the fixture: the bytes that exist in [off, off+n), io.EOF when
// the read crosses the end, and either nil or io.EOF when it ends exactly
// there (as io.ReaderAt allows).
type readCase struct {
	what string
	name string
	off  int64
	n    int
	hint source.Hint
}

func (s *suite) readCases() []readCase {
	big := int64(BigSize)
	return []readCase{
		{"start of small", "a.txt", 0, 5, source.HintHeader},
		{"middle of small", "a.txt", 7, 5, source.HintData},
		{"exactly to the end", "a.txt", 0, 13, source.HintData},
		{"crossing the end", "a.txt", 10, 10, source.HintData},
		{"at the end", "a.txt", 13, 4, source.HintData},
		{"zero bytes inside", "a.txt", 3, 0, source.HintData},
		{"zero bytes at the end", "a.txt", 13, 0, source.HintData},
		{"empty object at 0", "empty", 0, 1, source.HintHeader},
		{"empty object zero bytes", "empty", 0, 0, source.HintHeader},
		{"nested", "dir/sub/c.txt", 7, 6, source.HintIndex},
		{"name with space", "dir/with space.txt", 2, 4, source.HintData},
		{"one byte", "dir2/d.txt", 0, 1, source.HintData},
		{"seq middle", "dir/b.bin", 100, 800, source.HintData},
		{"big header", "big/blob.bin", 0, 64, source.HintHeader},
		{"big index", "big/blob.bin", 4096, 4096, source.HintIndex},
		{"big 64KiB across 1MiB", "big/blob.bin", 1<<20 - 32768, 65536, source.HintData},
		{"big 1MiB unaligned", "big/blob.bin", 12345, 1 << 20, source.HintData},
		{"big tail crossing end", "big/blob.bin", big - 1000, 65536, source.HintData},
		{"big last byte", "big/blob.bin", big - 1, 1, source.HintData},
		{"big whole plus one", "big/blob.bin", 0, BigSize + 1, source.HintData},
	}
}

func (s *suite) testReadAt(t *testing.T) {
	for _, c := range s.readCases() {
		t.Run(c.what, func(t *testing.T) {
			obj := s.open(t, c.name)
			s.checkRead(t, obj, c.name, c.off, c.n, c.hint)
		})
	}
}

// checkRead reads n bytes at off from obj and compares with the fixture.
func (s *suite) checkRead(t testing.TB, obj source.Object, name string, off int64, n int, hint source.Hint) {
	t.Helper()
	data := s.fx[name]
	end := min(off+int64(n), int64(len(data)))
	want := data[off:end]
	buf := make([]byte, n)
	got, err := obj.ReadAt(context.Background(), buf, off, hint)
	switch {
	case off+int64(n) > int64(len(data)):
		if err != io.EOF {
			t.Errorf("ReadAt(%s, off %d, n %d) crossing the end: err = %v, want io.EOF", name, off, n, err)
		}
	case off+int64(n) == int64(len(data)) && n > 0:
		if err != nil && err != io.EOF {
			t.Errorf("ReadAt(%s, off %d, n %d) to the end: err = %v, want nil or io.EOF", name, off, n, err)
		}
	default:
		if err != nil {
			t.Errorf("ReadAt(%s, off %d, n %d): %v", name, off, n, err)
		}
	}
	if got != len(want) {
		t.Fatalf("ReadAt(%s, off %d, n %d) = %d bytes, want %d", name, off, n, got, len(want))
	}
	if !bytes.Equal(buf[:got], want) {
		t.Errorf("ReadAt(%s, off %d, n %d) returned the wrong bytes", name, off, n)
	}
}

func (s *suite) testBadOffset(t *testing.T) {
	cases := []struct {
		name string
		off  int64
	}{
		{"a.txt", -1},
		{"a.txt", 14},
		{"a.txt", 1 << 40},
		{"empty", 1},
		{"empty", -5},
		{"big/blob.bin", BigSize + 1},
		{"big/blob.bin", -1 << 62},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s@%d", c.name, c.off), func(t *testing.T) {
			obj := s.open(t, c.name)
			buf := make([]byte, 8)
			n, err := obj.ReadAt(context.Background(), buf, c.off, source.HintData)
			if !errors.Is(err, source.ErrInvalid) {
				t.Errorf("ReadAt(off %d) of a %d-byte object: err = %v, want ErrInvalid", c.off, obj.Size(), err)
			}
			if n != 0 {
				t.Errorf("ReadAt(off %d) read %d bytes, want 0", c.off, n)
			}
		})
	}
}

// Outside is the name of a file Run writes beside the root directory, not
// in it; BadNames reach for it.
const Outside = "outside.txt"

// BadNames are names every source must refuse with ErrInvalid; each could
// address something outside the root, or is not a name at all.
var BadNames = []string{
	"", ".", "..", "../a.txt", "../" + Outside, "a.txt/../../" + Outside, "dir/../../" + Outside,
	"../../etc/passwd", "/a.txt", "/etc/passwd",
	"a//b", "dir//b.bin", "dir/", "dir/./b.bin", "dir/../a.txt", "./a.txt",
	"a.txt\x00", "nul\x00byte", "back\\slash", "..\\a.txt", "tab\tname",
	"bad\xffutf8",
}

func (s *suite) testBadName(t *testing.T) {
	for _, name := range BadNames {
		t.Run(fmt.Sprintf("%q", name), func(t *testing.T) {
			obj, err := s.src.Open(context.Background(), name)
			if err == nil {
				obj.Close()
				t.Fatalf("Open(%q) succeeded, want ErrInvalid", name)
			}
			if !errors.Is(err, source.ErrInvalid) {
				t.Errorf("Open(%q): err = %v, want ErrInvalid", name, err)
			}
			var se *source.Error
			if !errors.As(err, &se) {
				t.Errorf("Open(%q): err %v is not a *source.Error", name, err)
			}
		})
	}
}

func (s *suite) testNotFound(t *testing.T) {
	for _, name := range []string{"missing", "dir/missing.bin", "nodir/x", "dir", "dir/sub", "a.txt/x", "A.TXT"} {
		t.Run(name, func(t *testing.T) {
			obj, err := s.src.Open(context.Background(), name)
			if err == nil {
				obj.Close()
				t.Fatalf("Open(%q) succeeded, want ErrNotFound", name)
			}
			if !errors.Is(err, source.ErrNotFound) {
				t.Errorf("Open(%q): err = %v, want ErrNotFound", name, err)
			}
			if errors.Is(err, source.ErrTransient) || errors.Is(err, source.ErrInvalid) {
				t.Errorf("Open(%q): err = %v matches a second kind", name, err)
			}
			var se *source.Error
			if !errors.As(err, &se) {
				t.Errorf("Open(%q): err %v is not a *source.Error", name, err)
			}
		})
	}
}

func (s *suite) testList(t *testing.T) {
	if _, err := source.List(context.Background(), s.src, ""); errors.Is(err, source.ErrUnsupported) {
		t.Logf("source cannot list (%v); checking only that it says so", err)
		return
	}
	all := make([]string, 0, len(s.fx))
	for name := range s.fx {
		all = append(all, name)
	}
	sort.Strings(all)
	under := func(prefix string) []string {
		var out []string
		for _, n := range all {
			if strings.HasPrefix(n, prefix) {
				out = append(out, n)
			}
		}
		return out
	}
	cases := []struct {
		prefix string
		want   []string
	}{
		{"", all},
		{"dir/", under("dir/")},
		{"dir", under("dir")},
		{"dir/sub", under("dir/sub")},
		{"dir/sub/c.txt", []string{"dir/sub/c.txt"}},
		{"dir/w", []string{"dir/with space.txt"}},
		{"big/", []string{"big/blob.bin"}},
		{"a", []string{"a.txt"}},
		{"nothing/", nil},
		{"zzz", nil},
		{"dir/sub/c.txt/", nil},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%q", c.prefix), func(t *testing.T) {
			got, err := source.List(context.Background(), s.src, c.prefix)
			if err != nil {
				t.Fatalf("List(%q): %v", c.prefix, err)
			}
			names := make([]string, len(got))
			for i, e := range got {
				names[i] = e.Name
				if e.Size != -1 && e.Size != int64(len(s.fx[e.Name])) {
					t.Errorf("List(%q): %s has size %d, want %d or -1", c.prefix, e.Name, e.Size, len(s.fx[e.Name]))
				}
			}
			if !slices.Equal(names, c.want) {
				t.Errorf("List(%q) = %q, want %q", c.prefix, names, c.want)
			}
		})
	}
	for _, bad := range []string{"../", "/", "/dir", "a//", "dir/../", "x\x00"} {
		t.Run(fmt.Sprintf("bad %q", bad), func(t *testing.T) {
			_, err := source.List(context.Background(), s.src, bad)
			if !errors.Is(err, source.ErrInvalid) {
				t.Errorf("List(%q): err = %v, want ErrInvalid", bad, err)
			}
		})
	}
}

func (s *suite) testConcurrent(t *testing.T) {
	obj := s.open(t, "big/blob.bin")
	const workers, reads = 8, 12
	var wg sync.WaitGroup
	errs := make(chan error, workers*reads)
	data := s.fx["big/blob.bin"]
	for w := range workers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 99))
			for range reads {
				n := 1 + r.IntN(70000)
				off := r.Int64N(int64(len(data)))
				buf := make([]byte, n)
				got, err := obj.ReadAt(context.Background(), buf, off, source.HintData)
				end := min(off+int64(n), int64(len(data)))
				if err != nil && !(err == io.EOF && off+int64(n) >= int64(len(data))) {
					errs <- fmt.Errorf("ReadAt(off %d, n %d): %w", off, n, err)
					continue
				}
				if !bytes.Equal(buf[:got], data[off:end]) {
					errs <- fmt.Errorf("ReadAt(off %d, n %d) returned the wrong bytes", off, n)
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

func (s *suite) testCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	t.Run("Open", func(t *testing.T) {
		obj, err := s.src.Open(ctx, "a.txt")
		if err == nil {
			obj.Close()
			t.Fatal("Open with a cancelled context succeeded")
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Open with a cancelled context: err = %v, want context.Canceled", err)
		}
	})
	t.Run("ReadAt", func(t *testing.T) {
		obj := s.open(t, "big/blob.bin")
		buf := make([]byte, 4096)
		_, err := obj.ReadAt(ctx, buf, 100, source.HintData)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("ReadAt with a cancelled context: err = %v, want context.Canceled", err)
		}
	})
	t.Run("List", func(t *testing.T) {
		_, err := source.List(ctx, s.src, "")
		if errors.Is(err, source.ErrUnsupported) {
			return
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("List with a cancelled context: err = %v, want context.Canceled", err)
		}
	})
}

func (s *suite) testClose(t *testing.T) {
	ctx := context.Background()
	obj, err := s.src.Open(ctx, "a.txt")
	if err != nil {
		t.Fatal(err)
	}
	if err := obj.Close(); err != nil {
		t.Errorf("Object.Close: %v", err)
	}
	buf := make([]byte, 4)
	if _, err := obj.ReadAt(ctx, buf, 0, source.HintData); !errors.Is(err, source.ErrClosed) {
		t.Errorf("ReadAt after Object.Close: err = %v, want ErrClosed", err)
	}
	obj.Close() // A second Close must not panic; its error is unspecified.

	// A source closed while an object of it is open: the object's reads
	// fail cleanly afterwards, and so does Open.
	live, err := s.src.Open(ctx, "big/blob.bin")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.src.Close(); err != nil {
		t.Errorf("Source.Close: %v", err)
	}
	if _, err := s.src.Open(ctx, "a.txt"); !errors.Is(err, source.ErrClosed) {
		t.Errorf("Open after Source.Close: err = %v, want ErrClosed", err)
	}
	if _, err := live.ReadAt(ctx, buf, 0, source.HintData); !errors.Is(err, source.ErrClosed) {
		t.Errorf("ReadAt after Source.Close: err = %v, want ErrClosed", err)
	}
	live.Close()
	s.src.Close() // A second Close must not panic.
}

// FailingOpens wraps a source so that every Open fails with Err (a
// transient connection reset when Err is nil) until Heal, except for names
// Pass accepts (a table's manifest, say); it counts the opens it failed.
// Readers' tests use it to inject open failures of each kind.
type FailingOpens struct {
	source.Source
	Err    error
	Pass   func(name string) bool
	healed atomic.Bool
	failed atomic.Int64
}

// Heal lets every later Open through to the wrapped source.
func (f *FailingOpens) Heal() { f.healed.Store(true) }

// Failed is the number of opens failed so far.
func (f *FailingOpens) Failed() int64 { return f.failed.Load() }

// Open fails as configured, or opens name in the wrapped source.
func (f *FailingOpens) Open(ctx context.Context, name string) (source.Object, error) {
	if f.healed.Load() || f.Pass != nil && f.Pass(name) {
		return f.Source.Open(ctx, name)
	}
	f.failed.Add(1)
	err := f.Err
	if err == nil {
		err = source.Transient(errors.New("connection reset"))
	}
	return nil, &source.Error{Op: "open", Name: name, Err: err}
}

// ChangingReads wraps a source so that the next data reads of its objects
// (as many as Replace asked for) fail with source.ErrChanged, as a remote
// source's reads do once the object behind them is replaced, while a fresh
// open reads the same bytes again; it counts the opens. Readers' tests use
// it to replace tables under running probes.
type ChangingReads struct {
	source.Source
	left  atomic.Int32 // data reads left to fail
	opens atomic.Int64
}

// Replace makes the next n data reads fail with source.ErrChanged.
func (c *ChangingReads) Replace(n int) { c.left.Store(int32(n)) }

// Pending reports whether some of the reads Replace asked for have not
// been met yet.
func (c *ChangingReads) Pending() bool { return c.left.Load() > 0 }

// Opens is the number of objects opened so far.
func (c *ChangingReads) Opens() int64 { return c.opens.Load() }

// Open opens name in the wrapped source, counting it.
func (c *ChangingReads) Open(ctx context.Context, name string) (source.Object, error) {
	obj, err := c.Source.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	c.opens.Add(1)
	return changingObject{obj, c}, nil
}

type changingObject struct {
	source.Object
	src *ChangingReads
}

func (o changingObject) ReadAt(ctx context.Context, p []byte, off int64, hint source.Hint) (int, error) {
	if hint == source.HintData && o.src.left.Add(-1) >= 0 {
		return 0, source.Changed("replaced")
	}
	return o.Object.ReadAt(ctx, p, off, hint)
}
