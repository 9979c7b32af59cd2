package breaker_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	nethttptest "net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/breaker"
	srchttp "github.com/tbfs/tbfs/source/http"
	"github.com/tbfs/tbfs/source/http/mirrortest"
	"github.com/tbfs/tbfs/source/retry"
)

// mode is how the test server answers: a status code, or 0 to serve dir.
type faultServer struct {
	requests atomic.Int64
	status   atomic.Int64 // 0: serve the directory
	retry    atomic.Value // Retry-After header value, string
	hang     atomic.Bool  // hold every request until the client gives up
	files    http.Handler
}

func (f *faultServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.requests.Add(1)
	if f.hang.Load() {
		<-r.Context().Done()
		return
	}
	if code := f.status.Load(); code != 0 {
		if ra, _ := f.retry.Load().(string); ra != "" {
			w.Header().Set("Retry-After", ra)
		}
		http.Error(w, "fault", int(code))
		return
	}
	f.files.ServeHTTP(w, r)
}

// serveFaults starts a real loopback HTTP server over a directory holding
// one object, "t", whose answers the test switches between healthy, a
// status code and hanging.
func serveFaults(t *testing.T, timeout time.Duration) (*faultServer, source.Source) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "t"), []byte("table bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := &faultServer{files: mirrortest.Handler(t, dir)}
	srv := nethttptest.NewServer(f)
	t.Cleanup(srv.Close)
	src, err := srchttp.New(srv.URL+"/", srchttp.Options{Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return f, src
}

// TestOpensAfterFailures: against a real server answering 500, the breaker
// lets Failures calls through, then refuses every call without a request
// (ErrUnavailable, a Retry-After hint) until the back-off ends; a failed
// probe doubles the back-off, a good one closes the breaker. The arbiter
// is the server's own request count.
func TestOpensAfterFailures(t *testing.T) {
	f, src := serveFaults(t, 5*time.Second)
	f.status.Store(http.StatusInternalServerError)
	clk := testenv.NewClock(time.Unix(1e9, 0))
	b := breaker.Wrap(src, breaker.Options{Failures: 3, Backoff: time.Second, MaxBackoff: 8 * time.Second, Now: clk.Now})
	ctx := context.Background()
	for i := range 3 {
		if _, err := b.Open(ctx, "t"); !errors.Is(err, source.ErrTransient) {
			t.Fatalf("call %d: %v, want the server's transient failure", i+1, err)
		}
	}
	for range 100 {
		_, err := b.Open(ctx, "t")
		if !errors.Is(err, source.ErrUnavailable) || source.IsRetryable(err) {
			t.Fatalf("open breaker: %v, want ErrUnavailable, not retryable", err)
		}
		if d, ok := source.RetryAfter(err); !ok || d <= 0 || d > time.Second {
			t.Fatalf("refusal hint %v %v, want within the 1s back-off", d, ok)
		}
	}
	if n := f.requests.Load(); n != 3 {
		t.Fatalf("server saw %d requests, want 3: an open breaker sends none", n)
	}
	clk.Add(time.Second)
	if _, err := b.Open(ctx, "t"); !errors.Is(err, source.ErrTransient) {
		t.Fatalf("probe: %v, want the server's failure", err)
	}
	if n := f.requests.Load(); n != 4 {
		t.Fatalf("server saw %d requests, want one probe more", n)
	}
	clk.Add(1500 * time.Millisecond) // less than the doubled 2s back-off
	if _, err := b.Open(ctx, "t"); !errors.Is(err, source.ErrUnavailable) {
		t.Fatalf("after a failed probe: %v, want still open", err)
	}
	f.status.Store(0)
	clk.Add(time.Second)
	obj, err := b.Open(ctx, "t")
	if err != nil {
		t.Fatalf("probe against the healed server: %v", err)
	}
	buf := make([]byte, 5)
	if _, err := obj.ReadAt(ctx, buf, 0, source.HintData); err != nil || string(buf) != "table" {
		t.Fatalf("read %q %v", buf, err)
	}
	if st := b.Stats(); st.Open || st.Opens != 2 || st.Refusals != 101 {
		t.Errorf("stats %+v, want closed after 2 opens and 101 refusals", st)
	}
}

// TestTimeoutOpensAtOnce: a server that never answers costs one request
// timeout, not one per call: the first call's timeout opens the breaker,
// and the next calls are refused with no request. Bounded by the
// transport's request timeout; no sleeps. The breaker's clock is the
// test's: on the wall clock a pause of the test process past the 1 s
// back-off let a probe through to the hung server.
func TestTimeoutOpensAtOnce(t *testing.T) {
	f, src := serveFaults(t, 200*time.Millisecond)
	f.hang.Store(true)
	clk := testenv.NewClock(time.Unix(1e9, 0))
	b := breaker.Wrap(src, breaker.Options{Failures: 3, Now: clk.Now})
	ctx := context.Background()
	if _, err := b.Open(ctx, "t"); !errors.Is(err, source.ErrTransient) {
		t.Fatalf("first call: %v, want a transient timeout", err)
	}
	start := time.Now()
	for range 50 {
		if _, err := b.Open(ctx, "t"); !errors.Is(err, source.ErrUnavailable) {
			t.Fatalf("after a timeout: %v, want ErrUnavailable", err)
		}
	}
	if n := f.requests.Load(); n != 1 {
		t.Errorf("server saw %d requests, want 1", n)
	}
	t.Logf("50 refusals in %v after one 200ms timeout", time.Since(start))
}

// TestRetryAfter: a 503 naming Retry-After opens the breaker at once, for
// as long as the server asked (RFC 9110 §10.2.3), not the shorter back-off.
func TestRetryAfter(t *testing.T) {
	f, src := serveFaults(t, 5*time.Second)
	f.status.Store(http.StatusServiceUnavailable)
	f.retry.Store("120")
	clk := testenv.NewClock(time.Unix(1e9, 0))
	b := breaker.Wrap(src, breaker.Options{Backoff: time.Second, MaxBackoff: 10 * time.Minute, Now: clk.Now})
	ctx := context.Background()
	if _, err := b.Open(ctx, "t"); !errors.Is(err, source.ErrTransient) {
		t.Fatalf("first call: %v", err)
	}
	_, err := b.Open(ctx, "t")
	if d, ok := source.RetryAfter(err); !errors.Is(err, source.ErrUnavailable) || !ok || d != 120*time.Second {
		t.Fatalf("after Retry-After: 120: %v (hint %v), want refused for 120s", err, d)
	}
	f.status.Store(0)
	clk.Add(119 * time.Second)
	if _, err := b.Open(ctx, "t"); !errors.Is(err, source.ErrUnavailable) {
		t.Fatalf("at 119s: %v, want still refused", err)
	}
	clk.Add(time.Second)
	if _, err := b.Open(ctx, "t"); err != nil {
		t.Fatalf("at 120s: %v, want the probe to succeed", err)
	}
	if n := f.requests.Load(); n != 2 {
		t.Errorf("server saw %d requests, want 2", n)
	}
}

// TestAnswersKeepItClosed: answers that are not transient failures (404,
// 403) and the caller's own cancellation never open the breaker: the
// source is alive, or the fault is not the source's.
func TestAnswersKeepItClosed(t *testing.T) {
	f, src := serveFaults(t, 5*time.Second)
	b := breaker.Wrap(src, breaker.Options{Failures: 1})
	ctx := context.Background()
	for range 10 {
		if _, err := b.Open(ctx, "missing"); !errors.Is(err, source.ErrNotFound) {
			t.Fatalf("missing: %v", err)
		}
	}
	f.status.Store(http.StatusForbidden)
	for range 10 {
		if _, err := b.Open(ctx, "t"); !errors.Is(err, source.ErrPermanent) {
			t.Fatalf("forbidden: %v", err)
		}
	}
	f.status.Store(0)
	f.hang.Store(true)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	for range 10 {
		if _, err := b.Open(cctx, "t"); err == nil || errors.Is(err, source.ErrUnavailable) {
			t.Fatalf("cancelled: %v", err)
		}
	}
	if st := b.Stats(); st.Opens != 0 || st.Open {
		t.Errorf("stats %+v, want never opened", st)
	}
}

// TestDeadSourceUnderRetry: with the retry wrapper above it (as in
// source/stack), a source answering 500 costs the first call its attempts
// up to the threshold, and each later call nothing: 100 calls send 3
// requests, where retry alone sends 4 per call.
func TestDeadSourceUnderRetry(t *testing.T) {
	f, src := serveFaults(t, 5*time.Second)
	f.status.Store(http.StatusInternalServerError)
	clk := testenv.NewClock(time.Unix(1e9, 0))
	noSleep := func(context.Context, time.Duration) error { return nil }
	r := retry.Wrap(breaker.Wrap(src, breaker.Options{Failures: 3, Now: clk.Now}), retry.Policy{Sleep: noSleep})
	ctx := context.Background()
	for range 100 {
		if _, err := r.Open(ctx, "t"); err == nil {
			t.Fatal("open of a dead source succeeded")
		}
	}
	if n := f.requests.Load(); n != 3 {
		t.Errorf("100 opens sent %d requests, want 3", n)
	}
	f.requests.Store(0)
	plain := retry.Wrap(src, retry.Policy{Sleep: noSleep})
	for range 10 {
		plain.Open(ctx, "t")
	}
	t.Logf("without the breaker: 10 opens sent %d requests", f.requests.Load())
}

// restartingSource fails every Open as a plugin host does when the plugin
// process broke during the call and is replaced for the next one.
type restartingSource struct{ opens atomic.Int64 }

func (s *restartingSource) Open(ctx context.Context, name string) (source.Object, error) {
	s.opens.Add(1)
	return nil, source.Transient(fmt.Errorf("%w: plugin call failed: connection reset", source.ErrRestarted))
}

func (s *restartingSource) Close() error { return nil }

// TestRestartsAreNotCounted: failures that say the transport's own process
// was replaced (source.ErrRestarted) say nothing about the source, so any
// number of them in a row leaves the breaker closed and every call goes
// through (a plugin killed under many readers at once must not shut its
// source off; TestMountOverFTPPlugin does that through a real mount).
func TestRestartsAreNotCounted(t *testing.T) {
	src := &restartingSource{}
	clk := testenv.NewClock(time.Unix(1e9, 0))
	b := breaker.Wrap(src, breaker.Options{Failures: 3, Backoff: time.Second, MaxBackoff: 8 * time.Second, Now: clk.Now})
	for i := range 10 {
		_, err := b.Open(context.Background(), "t")
		if !errors.Is(err, source.ErrRestarted) || errors.Is(err, source.ErrUnavailable) {
			t.Fatalf("call %d: %v, want the transport's own restart, not a refusal", i+1, err)
		}
	}
	if got := src.opens.Load(); got != 10 {
		t.Errorf("%d of 10 calls reached the transport", got)
	}
}
