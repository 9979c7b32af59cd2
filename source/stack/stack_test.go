package stack_test

import (
	"bytes"
	"context"
	"net/http"
	nethttptest "net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/cache"
	"github.com/tbfs/tbfs/source/http/mirrortest"
	"github.com/tbfs/tbfs/source/mmap"
	"github.com/tbfs/tbfs/source/retry"
	"github.com/tbfs/tbfs/source/s3/s3test"
	"github.com/tbfs/tbfs/source/sourcetest"
	"github.com/tbfs/tbfs/source/stack"
)

// transports opens a directory through each built-in transport by URL, the
// way a front end does.
var transports = []struct {
	name  string
	serve func(t testing.TB, dir string) string // returns the URL
}{
	{"mmap", func(t testing.TB, dir string) string { return dir }},
	{"http", func(t testing.TB, dir string) string {
		mirrortest.WriteManifest(t, dir)
		return mirrortest.Serve(t, dir)
	}},
	{"s3", func(t testing.TB, dir string) string {
		srv, u := s3test.ServeDir(t, dir)
		srv.Setenv(t)
		return u
	}},
}

func TestConformance(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			sourcetest.Run(t, func(t *testing.T, dir string) source.Source {
				st, err := stack.Open(context.Background(), tr.serve(t, dir), stack.Options{BlockSize: 4096})
				if err != nil {
					t.Fatal(err)
				}
				return st
			})
		})
	}
}

// TestColdReadIsOneRequest: through the full stack, a cold read of any
// length is one transport request and the same read again is none.
func TestColdReadIsOneRequest(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			dir := t.TempDir()
			sourcetest.WriteFixtures(t, dir)
			st, err := stack.Open(context.Background(), tr.serve(t, dir), stack.Options{CacheLocal: true})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			obj, err := st.Open(context.Background(), "big/blob.bin")
			if err != nil {
				t.Fatal(err)
			}
			want := sourcetest.Fixtures()[1].Data
			for i, c := range []struct {
				off  int64
				n    int
				reqs int64
			}{
				{12345, 65536, 1},
				{12345, 65536, 0},
				{200000, 1 << 20, 1}, // blocks 3..19, none cached yet
				{200000, 1 << 20, 0},
				{3, 10, 0}, // inside block 0, cached by the first read
			} {
				before := st.Stats().Requests
				buf := make([]byte, c.n)
				n, err := obj.ReadAt(context.Background(), buf, c.off, source.HintData)
				if err != nil || !bytes.Equal(buf[:n], want[c.off:c.off+int64(c.n)]) {
					t.Fatalf("row %d: %v or wrong bytes", i, err)
				}
				if got := st.Stats().Requests - before; got != c.reqs {
					t.Errorf("row %d: read of %d at %d made %d requests, want %d", i, c.n, c.off, got, c.reqs)
				}
			}
		})
	}
}

// TestRetryThroughStack: a server that answers 503 twice to a.txt and then
// serves it is read correctly through the stack, and the retries are
// counted.
func TestRetryThroughStack(t *testing.T) {
	dir := t.TempDir()
	sourcetest.WriteFixtures(t, dir)
	inner := mirrortest.Handler(t, dir)
	var gets atomic.Int64
	srv := nethttptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/a.txt" && gets.Add(1) <= 2 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	st, err := stack.Open(context.Background(), srv.URL, stack.Options{Retry: retry.Policy{
		Sleep: func(ctx context.Context, d time.Duration) error { return ctx.Err() },
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	obj, err := st.Open(context.Background(), "a.txt")
	if err != nil {
		t.Fatal(err)
	}
	got, err := source.ReadAll(context.Background(), obj, source.HintHeader)
	if err != nil || string(got) != "hello, world\n" {
		t.Fatalf("ReadAll = %q, %v", got, err)
	}
	s := st.Stats()
	// The object is opened by its first GET, which fails twice; the
	// read is answered by the bytes that GET brought.
	if s.Retries != 2 || s.Opens != 3 || s.Requests != 0 || s.Errors != 2 {
		t.Errorf("stats %+v, want 2 retries, 3 opens, 0 further requests, 2 errors", s)
	}
}

// TestCacheBudget: a remote location's memory cache has the budget asked
// for (the cache's default for 0), a local one has none unless asked.
func TestCacheBudget(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name   string
		remote bool
		opts   stack.Options
		want   int64
	}{
		{"remote", true, stack.Options{CacheBytes: 64 << 20}, 64 << 20},
		{"remote default", true, stack.Options{}, cache.DefaultBudget},
		{"local", false, stack.Options{CacheBytes: 64 << 20}, 0},
		{"local cached", false, stack.Options{CacheBytes: 8 << 20, CacheLocal: true}, 8 << 20},
	} {
		src, err := mmap.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		st := stack.Wrap(src, c.remote, c.opts)
		if got := st.CacheBudget(); got != c.want {
			t.Errorf("%s: CacheBudget = %d, want %d", c.name, got, c.want)
		}
		st.Close()
	}
}
