package diskcache_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/diskcache"
	srchttp "github.com/tbfs/tbfs/source/http"
	"github.com/tbfs/tbfs/source/http/mirrortest"
	"github.com/tbfs/tbfs/source/sourcetest"
)

// mounter opens the disk cache over a fresh HTTP source of url each time,
// as a remount does.
type mounter struct {
	t     *testing.T
	url   string
	dir   string
	clock *testenv.Clock
}

func (m *mounter) mount(ttl time.Duration) *diskcache.Source {
	m.t.Helper()
	src, err := srchttp.New(m.url, srchttp.Options{})
	if err != nil {
		m.t.Fatal(err)
	}
	c, err := diskcache.Wrap(src, diskcache.Options{Dir: m.dir, Budget: 16 << 20, BlockSize: 64 << 10,
		Location: m.url, MetadataTTL: ttl, Now: m.clock.Now})
	if err != nil {
		m.t.Fatal(err)
	}
	m.t.Cleanup(func() { c.Close() })
	return c
}

// reads is the read pattern both mounts make: a table's header, a block
// inside, and a range across blocks.
var reads = []struct {
	off int64
	n   int
}{{0, 4096}, {300_000, 2000}, {600_000, 200_000}}

// readPattern reads every row of reads from name, comparing with want.
func readPattern(t *testing.T, src source.Source, name string, want []byte) {
	t.Helper()
	obj, err := src.Open(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	for _, r := range reads {
		buf := make([]byte, r.n)
		if _, err := obj.ReadAt(context.Background(), buf, r.off, source.HintData); err != nil || !bytes.Equal(buf, want[r.off:r.off+int64(r.n)]) {
			t.Fatalf("ReadAt(%d, %d): %v or wrong bytes", r.off, r.n, err)
		}
	}
}

// TestRemountIsFree: a first mount with a disk cache sends no more
// requests than the transport alone; a remount within the metadata TTL
// answers the same reads, and a table known to be missing, with no request
// at all; after the TTL one request revalidates the object and its blocks
// still come from disk. The fixture file is the arbiter of the bytes.
func TestRemountIsFree(t *testing.T) {
	dir := t.TempDir()
	sourcetest.WriteFixtures(t, dir)
	mirrortest.WriteManifest(t, dir)
	want, err := os.ReadFile(filepath.Join(dir, "big", "blob.bin"))
	if err != nil {
		t.Fatal(err)
	}
	url, slow := mirrortest.ServeSlow(t, dir, 0)
	bare, err := srchttp.New(url, srchttp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	readPattern(t, bare, "big/blob.bin", want)
	alone := slow.Counts().Total()

	m := &mounter{t: t, url: url, dir: t.TempDir(), clock: testenv.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}
	slow.Reset()
	first := m.mount(5 * time.Minute)
	readPattern(t, first, "big/blob.bin", want)
	if _, err := first.Open(context.Background(), "no/such.table"); !errors.Is(err, source.ErrNotFound) {
		t.Fatalf("missing table: %v", err)
	}
	if got := slow.Counts().Total() - 1; got > alone { // less the 404
		t.Errorf("first mount: %d requests, the transport alone %d", got, alone)
	}
	listing, err := first.List(context.Background(), "")
	if err != nil || len(listing) != len(sourcetest.Fixtures()) {
		t.Fatalf("listing: %v, %v", listing, err)
	}

	m.clock.Add(time.Minute)
	slow.Reset()
	second := m.mount(5 * time.Minute)
	readPattern(t, second, "big/blob.bin", want)
	if _, err := second.Open(context.Background(), "no/such.table"); !errors.Is(err, source.ErrNotFound) {
		t.Fatalf("missing table after remount: %v", err)
	}
	if again, err := second.List(context.Background(), ""); err != nil || fmt.Sprint(again) != fmt.Sprint(listing) {
		t.Errorf("listing after remount: %v, %v; want %v", again, err, listing)
	}
	if c := slow.Counts(); c.Total() != 0 {
		t.Errorf("remount within the TTL: %+v, want no request", c)
	}

	m.clock.Add(10 * time.Minute)
	slow.Reset()
	third := m.mount(5 * time.Minute)
	readPattern(t, third, "big/blob.bin", want)
	if c := slow.Counts(); c.Total() != 1 {
		t.Errorf("remount after the TTL: %+v, want the one request that revalidates", c)
	}
}

// TestReplacedWithinTTL: a table replaced on the server between mounts is
// served, within the TTL, as the version the cache recorded, and never
// mixed with the new one: the first block that is not on disk fails with
// ErrChanged, after which the table opens as the new version. The arbiter
// is the file the loopback server serves (versioned by Last-Modified).
func TestReplacedWithinTTL(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "t.bin")
	old, repl := bytes.Repeat([]byte("a"), 300<<10), bytes.Repeat([]byte("b"), 300<<10)
	stamp := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	put := func(data []byte, at time.Time) {
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(file, at, at); err != nil {
			t.Fatal(err)
		}
	}
	put(old, stamp)
	url := mirrortest.Serve(t, dir)
	m := &mounter{t: t, url: url, dir: t.TempDir(), clock: testenv.NewClock(stamp)}
	ctx := context.Background()
	read := func(src source.Source, off int64) ([]byte, error) {
		obj, err := src.Open(ctx, "t.bin")
		if err != nil {
			return nil, err
		}
		defer obj.Close()
		buf := make([]byte, 1000)
		_, err = obj.ReadAt(ctx, buf, off, source.HintData)
		return buf, err
	}
	if b, err := read(m.mount(time.Hour), 0); err != nil || !bytes.Equal(b, old[:1000]) {
		t.Fatalf("first mount: %v", err)
	}
	put(repl, stamp.Add(time.Hour))
	m.clock.Add(time.Minute)
	second := m.mount(time.Hour)
	if b, err := read(second, 0); err != nil || !bytes.Equal(b, old[:1000]) {
		t.Fatalf("cached block within the TTL: %v, or not the recorded version", err)
	}
	if _, err := read(second, 200_000); !errors.Is(err, source.ErrChanged) {
		t.Fatalf("uncached block of a replaced table: err = %v, want ErrChanged", err)
	}
	for _, off := range []int64{0, 200_000} {
		if b, err := read(second, off); err != nil || !bytes.Equal(b, repl[:1000]) {
			t.Fatalf("after the change was seen, read at %d: %v, or not the new version", off, err)
		}
	}
}
