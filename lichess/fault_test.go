package lichess_test

import (
	"encoding/json"
	"net/http"
	nethttptest "net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/fxamacker/cbor/v2"
	"github.com/tbfs/tbfs/format/chesstb"
	"github.com/tbfs/tbfs/internal/testenv"
	"github.com/tbfs/tbfs/lichess"
	srchttp "github.com/tbfs/tbfs/source/http"
	"github.com/tbfs/tbfs/source/http/httptest"
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
	inner := httptest.Handler(t, testenv.Testdata(t, "chesstb"))
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
	tb, err := chesstb.Open(chesstb.Options{}, src)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	api := nethttptest.NewServer(lichess.New(tb, nil).Handler())
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
