package mmap_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/mmap"
	"github.com/tbfs/tbfs/source/sourcetest"
)

func TestConformance(t *testing.T) {
	sourcetest.Run(t, func(t *testing.T, dir string) source.Source {
		src, err := mmap.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		return src
	})
}

// TestOpenURL checks that source.Open picks this transport for plain paths
// and file URLs (the rule of source.Open's contract), and refuses what is not
// a local directory.
func TestOpenURL(t *testing.T) {
	dir := t.TempDir()
	sourcetest.WriteFixtures(t, dir)
	file := filepath.Join(dir, "a.txt")
	cases := []struct {
		url     string
		wantErr error
	}{
		{dir, nil},
		{"file://" + dir, nil},
		{"file://localhost" + dir, nil},
		{"FILE://" + dir, nil},
		{"file://example.com" + dir, source.ErrInvalid},
		{filepath.Join(dir, "missing"), source.ErrNotFound},
		{file, source.ErrInvalid},
	}
	for _, c := range cases {
		t.Run(c.url, func(t *testing.T) {
			src, err := source.Open(context.Background(), c.url)
			if c.wantErr != nil {
				if !errors.Is(err, c.wantErr) {
					t.Fatalf("Open(%q): err = %v, want %v", c.url, err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			obj, err := src.Open(context.Background(), "a.txt")
			if err != nil {
				t.Fatal(err)
			}
			defer obj.Close()
			if obj.Size() != 13 {
				t.Errorf("size %d, want 13 (fixture)", obj.Size())
			}
		})
	}
}

// TestSymlinks checks that symbolic links are followed wherever they lead
// (the reference probers follow them, and table sets spread over disks are
// linked into one directory), that a link loop is listed once and ends, and
// that a dangling link is left out; the arbiter is the layout the test builds.
func TestSymlinks(t *testing.T) {
	outside := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(outside, "far"), []byte("on another disk"), 0o644))
	dir := t.TempDir()
	must(os.WriteFile(filepath.Join(dir, "real"), []byte("inside"), 0o644))
	must(os.Symlink(filepath.Join(outside, "far"), filepath.Join(dir, "abs-out")))
	must(os.Symlink("../"+filepath.Base(outside)+"/far", filepath.Join(dir, "rel-out")))
	must(os.Symlink(outside, filepath.Join(dir, "dir-out")))
	must(os.Symlink("real", filepath.Join(dir, "in")))
	must(os.Symlink(".", filepath.Join(dir, "loop")))
	must(os.Symlink("missing", filepath.Join(dir, "dangling")))
	src, err := mmap.New(dir)
	must(err)
	defer src.Close()
	for _, tc := range []struct{ name, want string }{
		{"abs-out", "on another disk"},
		{"rel-out", "on another disk"},
		{"dir-out/far", "on another disk"},
		{"in", "inside"},
		{"loop/real", "inside"},
	} {
		obj, err := src.Open(context.Background(), tc.name)
		if err != nil {
			t.Errorf("Open(%q): %v", tc.name, err)
			continue
		}
		got, err := source.ReadAll(context.Background(), obj, source.HintData)
		obj.Close()
		if err != nil || string(got) != tc.want {
			t.Errorf("Open(%q) read %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
	if _, err := src.Open(context.Background(), "dangling"); !errors.Is(err, source.ErrNotFound) {
		t.Errorf("Open(dangling): err = %v, want ErrNotFound", err)
	}
	entries, err := src.List(context.Background(), "")
	must(err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name)
	}
	want := []string{"abs-out", "dir-out/far", "in", "real", "rel-out"}
	if !slices.Equal(names, want) {
		t.Errorf("List = %q, want %q: linked files and directories once each, no dangling link", names, want)
	}
	entries, err = src.List(context.Background(), "dir-out/")
	must(err)
	if len(entries) != 1 || entries[0].Name != "dir-out/far" {
		t.Errorf("List(dir-out/) = %v, want [dir-out/far]", entries)
	}
}

// TestCloseDuringReads closes objects and the source while goroutines read;
// the contract is that no read crashes and each either returns the right
// bytes or ErrClosed.
func TestCloseDuringReads(t *testing.T) {
	dir := t.TempDir()
	sourcetest.WriteFixtures(t, dir)
	want := sourcetest.Fixtures()[1].Data // big/blob.bin
	for round := range 20 {
		src, err := mmap.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		obj, err := src.Open(context.Background(), "big/blob.bin")
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		for w := range 4 {
			wg.Go(func() {
				<-start
				buf := make([]byte, 65536)
				for i := range 50 {
					off := int64((w*50+i)*4099) % int64(len(want)-len(buf))
					n, err := obj.ReadAt(context.Background(), buf, off, source.HintData)
					if err != nil {
						if !errors.Is(err, source.ErrClosed) {
							t.Errorf("read during close: %v", err)
						}
						return
					}
					if string(buf[:n]) != string(want[off:off+int64(n)]) {
						t.Errorf("read during close returned wrong bytes")
						return
					}
				}
			})
		}
		close(start)
		if round%2 == 0 {
			obj.Close()
		} else {
			src.Close()
		}
		wg.Wait()
		src.Close()
	}
}

// TestTruncatedInPlace: a mapped file cut short by another program makes
// the pages past its new end fault (SIGBUS), and a pread there comes back
// short. Either way a read there must come back as a permanent error naming
// the file, and the process must live on to read the part that is still
// there. Short reads go through the mapping, long ones through pread; the
// rows cover both.
func TestTruncatedInPlace(t *testing.T) {
	for _, n := range []int{16, 4096} {
		t.Run(fmt.Sprintf("%d-byte reads", n), func(t *testing.T) { testTruncatedInPlace(t, n) })
	}
}

func testTruncatedInPlace(t *testing.T, readLen int) {
	const size = 1 << 16
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i)
	}
	o, name := openFile(t, data)
	ctx := context.Background()
	if err := os.Truncate(name, 4096); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, readLen)
	n, err := o.ReadAt(ctx, buf, size-4096, source.HintData)
	if !errors.Is(err, source.ErrPermanent) || n != 0 {
		t.Fatalf("read past the new end: %d bytes, %v; want a permanent error", n, err)
	}
	var serr *source.Error
	if !errors.As(err, &serr) || serr.Name != "t.bin" {
		t.Errorf("error %v does not name the file", err)
	}
	// The first page is still in the file and reads as written.
	if n, err := o.ReadAt(ctx, buf[:16], 16, source.HintData); err != nil || n != 16 || buf[0] != 16 {
		t.Errorf("read inside the new end: %d bytes %v, %v", n, buf[:16], err)
	}
}

// TestReadLengths reads a file at lengths on both sides of the switch from
// the mapping to pread, at its start, middle and end; the arbiter is the
// bytes the test wrote, and io.ReaderAt's contract for a read that runs past
// the end (the bytes that are there, with io.EOF).
func TestReadLengths(t *testing.T) {
	data := make([]byte, 3*4096+123)
	for i := range data {
		data[i] = byte(i * 7)
	}
	o, _ := openFile(t, data)
	ctx := context.Background()
	size := int64(len(data))
	for _, n := range []int{1, 127, 128, 129, 4096, 5000, len(data)} {
		for _, off := range []int64{0, 4095, size - int64(n), size - int64(n)/2, size} {
			if off < 0 {
				continue
			}
			buf := make([]byte, n)
			got, err := o.ReadAt(ctx, buf, off, source.HintData)
			want := int(min(int64(n), size-off))
			if got != want || !bytes.Equal(buf[:got], data[off:off+int64(want)]) {
				t.Errorf("%d bytes at %d: read %d bytes (want %d) or wrong bytes", n, off, got, want)
			}
			switch {
			case want < n && !errors.Is(err, io.EOF):
				t.Errorf("%d bytes at %d: err %v, want io.EOF for a read past the end", n, off, err)
			case want == n && err != nil:
				t.Errorf("%d bytes at %d: %v", n, off, err)
			}
		}
	}
}

// openFile writes data to t.bin in a fresh directory and opens it through
// the transport; it returns the object and the file's path. Both are
// closed when the test ends.
func openFile(t testing.TB, data []byte) (source.Object, string) {
	t.Helper()
	dir := t.TempDir()
	name := filepath.Join(dir, "t.bin")
	if err := os.WriteFile(name, data, 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := mmap.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	o, err := src.Open(context.Background(), "t.bin")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	return o, name
}

// BenchmarkReadAt prices one read of a table's cell (3 bytes, from the
// mapping) and of a compressed block (5,000 bytes, through pread) from a
// file whose pages are in the page cache.
func BenchmarkReadAt(b *testing.B) {
	data := make([]byte, 1<<20)
	for i := range data {
		data[i] = byte(i)
	}
	o, _ := openFile(b, data)
	ctx := context.Background()
	for _, n := range []int{3, 5000} {
		b.Run(fmt.Sprintf("%dB", n), func(b *testing.B) {
			buf := make([]byte, n)
			b.SetBytes(int64(n))
			var off int64
			for b.Loop() {
				if _, err := o.ReadAt(ctx, buf, off, source.HintData); err != nil {
					b.Fatal(err)
				}
				off = (off + 4099) % int64(len(data)-n)
			}
		})
	}
}
