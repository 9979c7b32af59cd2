package cache_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/cache"
	srchttp "github.com/tbfs/tbfs/source/http"
	"github.com/tbfs/tbfs/source/http/httptest"
)

// TestReplacedObject: an object opened again after the server replaced it
// with one of the same size reads as the new version, not from blocks the
// cache kept of the old one. The arbiter is the file the loopback HTTP
// server serves, which names its version by Last-Modified.
func TestReplacedObject(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "t.bin")
	old, repl := bytes.Repeat([]byte("a"), 100<<10), bytes.Repeat([]byte("b"), 100<<10)
	stamp := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	write := func(data []byte, at time.Time) {
		t.Helper()
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(file, at, at); err != nil {
			t.Fatal(err)
		}
	}
	write(old, stamp)
	inner, err := srchttp.New(httptest.Serve(t, dir), srchttp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := cache.Wrap(inner, cache.Options{Budget: 1 << 20, BlockSize: 16 << 10})
	defer c.Close()
	read := func() []byte {
		t.Helper()
		ctx := context.Background()
		obj, err := c.Open(ctx, "t.bin")
		if err != nil {
			t.Fatal(err)
		}
		defer obj.Close()
		b, err := source.ReadAll(ctx, obj, source.HintData)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if !bytes.Equal(read(), old) {
		t.Fatal("first read differs from the served file")
	}
	write(repl, stamp.Add(time.Hour))
	if !bytes.Equal(read(), repl) {
		t.Fatal("the object opened again was read from blocks of the replaced version")
	}
}
