package listcache_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/source"
	srchttp "github.com/tbfs/tbfs/source/http"
	"github.com/tbfs/tbfs/source/http/mirrortest"
	"github.com/tbfs/tbfs/source/listcache"
	"github.com/tbfs/tbfs/source/metrics"
	"github.com/tbfs/tbfs/source/mmap"
	"github.com/tbfs/tbfs/source/sourcetest"
)

func TestConformance(t *testing.T) {
	sourcetest.Run(t, func(t *testing.T, dir string) source.Source {
		src, err := mmap.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		return listcache.Wrap(src, listcache.Options{})
	})
}

func TestConformanceHTTPWithoutManifest(t *testing.T) {
	sourcetest.Run(t, func(t *testing.T, dir string) source.Source {
		src, err := srchttp.New(mirrortest.Serve(t, dir), srchttp.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return listcache.Wrap(src, listcache.Options{})
	})
}

// serve serves the suite's fixtures over HTTP, with a manifest or without,
// and wraps the source in a listing cache on a clock the test moves.
func serve(t *testing.T, manifest bool) (*listcache.Source, *mirrortest.Slow, *testenv.Clock, *metrics.Counters) {
	t.Helper()
	return serveDir(t, t.TempDir(), manifest)
}

func serveDir(t *testing.T, dir string, manifest bool) (*listcache.Source, *mirrortest.Slow, *testenv.Clock, *metrics.Counters) {
	t.Helper()
	sourcetest.WriteFixtures(t, dir)
	if manifest {
		mirrortest.WriteManifest(t, dir)
	}
	url, slow := mirrortest.ServeSlow(t, dir, 0)
	raw, err := srchttp.New(url, srchttp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := testenv.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	counters := new(metrics.Counters)
	src := listcache.Wrap(metrics.Wrap(raw, counters), listcache.Options{TTL: time.Minute, Now: c.Now})
	t.Cleanup(func() { src.Close() })
	return src, slow, c, counters
}

// openCost opens name and returns the error and how many requests it took.
func openCost(t *testing.T, src source.Source, slow *mirrortest.Slow, name string) (error, int) {
	t.Helper()
	before := slow.Counts().Total()
	obj, err := src.Open(context.Background(), name)
	if err == nil {
		obj.Close()
	}
	return err, slow.Counts().Total() - before
}

// TestListingAnswersMisses: once the manifest is read, a name it does not
// hold is missing without a request and a name it holds is opened with one;
// after the time-to-live the listing is read again. The fixture files are
// the arbiter of what exists.
func TestListingAnswersMisses(t *testing.T) {
	src, slow, c, counters := serve(t, true)
	ctx := context.Background()
	if !src.Listed(ctx) {
		t.Fatal("the manifest was not listed")
	}
	for _, r := range []struct {
		name     string
		missing  bool
		requests int
	}{
		{"a.txt", false, 1},
		{"nope.bin", true, 0},
		{"big/nope", true, 0},
		{"big/blob.bin", false, 1},
	} {
		err, n := openCost(t, src, slow, r.name)
		if r.missing != errors.Is(err, source.ErrNotFound) || (!r.missing && err != nil) {
			t.Errorf("open %s: %v", r.name, err)
		}
		if n != r.requests {
			t.Errorf("open %s took %d requests, want %d", r.name, n, r.requests)
		}
	}
	if got := counters.Stats().Lists; got != 1 {
		t.Errorf("%d listings, want 1", got)
	}
	c.Add(2 * time.Minute)
	if !src.Listed(ctx) {
		t.Fatal("the stale listing was not read again")
	}
	if got := counters.Stats().Lists; got != 2 {
		t.Errorf("%d listings after the TTL, want 2", got)
	}
}

// TestMissesRemembered: a source that cannot list (no manifest) still
// answers a name it was told is missing without a request, until the
// time-to-live runs out.
func TestMissesRemembered(t *testing.T) {
	src, slow, c, _ := serve(t, false)
	if src.Listed(context.Background()) {
		t.Fatal("listed a mirror without a manifest")
	}
	for i, want := range []int{1, 0, 0} {
		err, n := openCost(t, src, slow, "nope.bin")
		if !errors.Is(err, source.ErrNotFound) || n != want {
			t.Errorf("open %d: %v after %d requests, want ErrNotFound after %d", i, err, n, want)
		}
	}
	c.Add(2 * time.Minute)
	if !src.Listed(context.Background()) { // asks for the manifest again
		if err, n := openCost(t, src, slow, "nope.bin"); !errors.Is(err, source.ErrNotFound) || n != 1 {
			t.Errorf("after the TTL: %v after %d requests, want ErrNotFound after 1", err, n)
		}
	}
}

// TestAddedTableFoundAfterTTL: a table added to the mirror (and its
// manifest) is missing while the listing is trusted, then found once the
// time-to-live has passed, and List shows it too.
func TestAddedTableFoundAfterTTL(t *testing.T) {
	dir := t.TempDir()
	src, _, c, _ := serveDir(t, dir, true)
	ctx := context.Background()
	if !src.Listed(ctx) {
		t.Fatal("no listing")
	}
	if err := os.WriteFile(filepath.Join(dir, "new.bin"), []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	mirrortest.WriteManifest(t, dir)
	if _, err := src.Open(ctx, "new.bin"); !errors.Is(err, source.ErrNotFound) {
		t.Fatalf("within the TTL: %v, want the listing's ErrNotFound", err)
	}
	c.Add(2 * time.Minute)
	if !src.Listed(ctx) {
		t.Fatal("no listing after the TTL")
	}
	obj, err := src.Open(ctx, "new.bin")
	if err != nil {
		t.Fatalf("after the TTL: %v", err)
	}
	obj.Close()
	l, err := src.List(ctx, "new")
	if err != nil || len(l) != 1 || l[0] != (source.Entry{Name: "new.bin", Size: 3}) {
		t.Errorf("List(new) = %v, %v", l, err)
	}
}
