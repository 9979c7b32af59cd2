package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// fuzzServer is the API over the built-in tables, in process.
func fuzzServer(t testing.TB) http.Handler {
	t.Helper()
	var tf tableFlags
	tf.cacheSize = 16 << 20
	ts, err := tf.open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ts.Close() })
	return serveHandler(ts)
}

// FuzzServeStandard sends arbitrary fen parameters: every answer must be
// 200 (an answer, maybe "unknown") or 400 (a JSON error), never a 5xx or
// a panic, and always JSON.
func FuzzServeStandard(f *testing.F) {
	for _, s := range []string{
		"8/8/8/5k2/8/8/1Q6/K7 w - - 0 1", "8/8/8/5k2/8/8/1Q6/K7_b", "", "x", "8/8/8/8/8/8/8/8 w",
		"4k3/8/8/8/8/8/8/4K2R w K - 0 1", "8/8/8/3k4/8/8/8/KQQ5 w", "8/8/8/k7/8/8/K4P2/8 w - - 99999 1",
		"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "8/8/8/8/8/8/8/K1k5 w - e3 0 1",
	} {
		f.Add(s)
	}
	h := fuzzServer(f)
	f.Fuzz(func(t *testing.T, fen string) {
		for _, path := range []string{"/standard", "/standard/mainline"} {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", path+"?fen="+url.QueryEscape(fen), nil))
			ok := rec.Code == 200 || rec.Code == 400 || (path == "/standard/mainline" && rec.Code == 404)
			if !ok {
				t.Fatalf("%s %q: status %d: %s", path, fen, rec.Code, rec.Body)
			}
			if !json.Valid(rec.Body.Bytes()) {
				t.Fatalf("%s %q: body not JSON: %s", path, fen, rec.Body)
			}
		}
	})
}

// FuzzServeBatch sends arbitrary batch bodies in both forms: 200 or a 4xx
// JSON error, never a 5xx.
func FuzzServeBatch(f *testing.F) {
	f.Add("8/8/8/5k2/8/8/1Q6/K7 w\nbad\n", false)
	f.Add(`{"fens":["8/8/8/5k2/8/8/1Q6/K7 w", "x"]}`, true)
	f.Add(`{"fens":null}`, true)
	f.Add(`[]`, true)
	h := fuzzServer(f)
	f.Fuzz(func(t *testing.T, body string, asJSON bool) {
		req := httptest.NewRequest("POST", "/standard/batch", strings.NewReader(body))
		if asJSON {
			req.Header.Set("Content-Type", "application/json")
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 || !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("%q: status %d: %s", body, rec.Code, rec.Body)
		}
	})
}
