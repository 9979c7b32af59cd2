package diskcache_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tbfs/tbfs/source/diskcache"
	srchttp "github.com/tbfs/tbfs/source/http"
	"github.com/tbfs/tbfs/source/http/mirrortest"
)

// TestReplacedObjectAcrossRemounts: a table replaced on the server by one
// of the same size between two mounts is read as the new one: blocks cached
// from the old version are never served for it. The arbiter is the file the
// loopback HTTP server serves, which names its version by Last-Modified.
func TestReplacedObjectAcrossRemounts(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "t.bin")
	old, repl := bytes.Repeat([]byte("a"), 100<<10), bytes.Repeat([]byte("b"), 100<<10)
	if err := os.WriteFile(file, old, 0o644); err != nil {
		t.Fatal(err)
	}
	stamp := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.Chtimes(file, stamp, stamp); err != nil {
		t.Fatal(err)
	}
	url := mirrortest.Serve(t, dir)
	cdir := t.TempDir()
	mount := func() *diskcache.Source {
		t.Helper()
		src, err := srchttp.New(url, srchttp.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { src.Close() })
		c, err := diskcache.Wrap(src, diskcache.Options{Dir: cdir, Budget: 1 << 20, BlockSize: 16 << 10, Location: url})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if got := readAll(t, mount(), "t.bin"); !bytes.Equal(got, old) {
		t.Fatal("first mount: read differs from the served file")
	}
	if err := os.WriteFile(file, repl, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(file, stamp.Add(time.Hour), stamp.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, mount(), "t.bin"); !bytes.Equal(got, repl) {
		t.Fatal("second mount served blocks of the replaced version")
	}
}
