package lichess_test

import (
	"context"
	"encoding/json"
	"net/http"
	nethttptest "net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fxamacker/cbor/v2"
	"github.com/tbfs/tbfs/chessprobe"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/lichess"
	"github.com/tbfs/tbfs/source/breaker"
	srchttp "github.com/tbfs/tbfs/source/http"
	"github.com/tbfs/tbfs/source/http/mirrortest"
	"github.com/tbfs/tbfs/source/retry"
	"github.com/tbfs/tbfs/source/stack"
)

// TestTransportFailureIsServerError reads the fixture tables over real HTTP
// from a server that answers 503 to everything while failing is set: a
// position whose table cannot be read is a server error (5xx with an
// error body), never a 200 with the position called unknown, and a 404
// only where the tables truly lack the material. Once the table server
// recovers, the same request is answered.
func TestTransportFailureIsServerError(t *testing.T) {
	var failing atomic.Bool
	failing.Store(true)
	inner := mirrortest.Handler(t, testenv.Testdata(t, "chesstb"))
	tables := nethttptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if failing.Load() {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(tables.Close)
	src, err := srchttp.New(tables.URL+"/", srchttp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	api := nethttptest.NewServer(lichess.New(chessprobe.New(tablebaseOver(t, src), nil), nil).Handler())
	t.Cleanup(api.Close)

	const fen = "8/8/8/5k2/8/8/1Q6/K7 w - - 0 1"
	for _, path := range []string{"/standard", "/standard/mainline"} {
		code, _, b := fetch(t, "GET", api.URL+path+"?fen="+url.QueryEscape(fen), nil, "")
		var e map[string]any
		if code/100 != 5 || json.Unmarshal(b, &e) != nil || e["error"] == nil {
			t.Errorf("%s while the tables fail: status %d, body %s", path, code, b)
		}
	}
	failing.Store(false)
	code, _, b := fetch(t, "GET", api.URL+"/standard?fen="+url.QueryEscape(fen), map[string]string{"Accept": "application/cbor"}, "")
	var a map[string]any
	if code != 200 || cbor.Unmarshal(b, &a) != nil || a["category"] != "win" {
		t.Errorf("after recovery: status %d, %v", code, a)
	}
}

// TestDeadSourceFailsFast: over source/stack (with its circuit breaker), a
// table server answering 500 costs the first request its few attempts;
// every later request is refused with 503 and a Retry-After (RFC 9110
// §10.2.3), without asking the dead server again. Arbiter: the server's
// own request count. Calls admitted before the breaker opened may still be
// in flight after the first answer, but with 4 requests in flight at most
// (MaxRequests) and 3 failures opening the breaker, no more than 3+4 ever
// reach the server, however the calls interleave; without the breaker
// every request would cost at least 4 attempts.
func TestDeadSourceFailsFast(t *testing.T) {
	var requests atomic.Int64
	tables := nethttptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		http.Error(w, "down", http.StatusInternalServerError)
	}))
	t.Cleanup(tables.Close)
	st, err := stack.Open(context.Background(), tables.URL+"/", stack.Options{
		Retry: retry.Policy{Sleep: func(context.Context, time.Duration) error { return nil }},
		// An hour's back-off: no half-open probe can fall inside the test,
		// however slow the machine.
		Breaker:     breaker.Options{Backoff: time.Hour, Failures: 3},
		MaxRequests: 4,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	api := nethttptest.NewServer(lichess.New(chessprobe.New(tablebaseOver(t, st), nil), nil).Handler())
	t.Cleanup(api.Close)
	const fen = "8/8/8/5k2/8/8/1Q6/K7 w - - 0 1"
	code, _, b := fetch(t, "GET", api.URL+"/standard?fen="+url.QueryEscape(fen), nil, "")
	if code != 503 {
		t.Fatalf("first request: %d %s, want 503", code, b)
	}
	for range 50 {
		code, h, b := fetch(t, "GET", api.URL+"/standard?fen="+url.QueryEscape(fen), nil, "")
		if code != 503 || h.Get("Retry-After") == "" {
			t.Fatalf("later request: %d, Retry-After %q, %s", code, h.Get("Retry-After"), b)
		}
	}
	if n := requests.Load(); n > 3+4 {
		t.Errorf("51 requests asked the dead server %d times, want at most 7", n)
	}
	t.Logf("51 requests asked the dead server %d times", requests.Load())
}
