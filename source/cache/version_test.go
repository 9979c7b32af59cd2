package cache_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/cache"
	srchttp "github.com/tbfs/tbfs/source/http"
	"github.com/tbfs/tbfs/source/http/mirrortest"
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
	inner, err := srchttp.New(mirrortest.Serve(t, dir), srchttp.Options{})
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

// TestChangedDropsOldBlocks: when a read through an object opened before
// the server replaced it fails with ErrChanged, every block the cache held
// of the old version is dropped (Used falls to zero), not left to hold the
// budget. Arbiters: the transport's ErrChanged and the cache's own byte
// count.
func TestChangedDropsOldBlocks(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "t.bin")
	if err := os.WriteFile(file, bytes.Repeat([]byte("a"), 100<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	inner, err := srchttp.New(mirrortest.Serve(t, dir), srchttp.Options{OpenRead: -1})
	if err != nil {
		t.Fatal(err)
	}
	c := cache.Wrap(inner, cache.Options{Budget: 1 << 20, BlockSize: 16 << 10})
	defer c.Close()
	ctx := context.Background()
	obj, err := c.Open(ctx, "t.bin")
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	buf := make([]byte, 32<<10)
	if _, err := obj.ReadAt(ctx, buf, 0, source.HintData); err != nil {
		t.Fatal(err)
	}
	if c.Used() == 0 {
		t.Fatal("nothing cached after a read")
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(file, later, later); err != nil {
		t.Fatal(err)
	}
	if _, err := obj.ReadAt(ctx, buf, 64<<10, source.HintData); !errors.Is(err, source.ErrChanged) {
		t.Fatalf("read after the replacement: %v, want ErrChanged", err)
	}
	if u := c.Used(); u != 0 {
		t.Errorf("%d bytes of the old version still cached", u)
	}
}
