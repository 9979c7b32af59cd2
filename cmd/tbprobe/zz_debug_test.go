package main

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/tbfs/tbfs/internal/testenv"
	"github.com/tbfs/tbfs/source/http/httptest"
)

func TestZZDebug(t *testing.T) {
	dir := filepath.Join(testenv.Shared(t, "chesstb"), "shipped")
	positions := coldPositions(t, dir, 40)
	var mu sync.Mutex
	var log []string
	var t0 time.Time
	h := httptest.WithManifest(t, dir, httptest.Handler(t, dir))
	tr := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		log = append(log, fmt.Sprintf("%6.0fms %s %s %s", float64(time.Since(t0).Microseconds())/1000, r.Method, r.URL.Path, r.Header.Get("Range")))
		mu.Unlock()
		h.ServeHTTP(w, r)
	})
	slow := httptest.Delay(tr, coldDelay)
	srv := nethttptestNewServer(slow)
	defer srv.Close()
	for i := range positions {
		mu.Lock()
		log = nil
		t0 = time.Now()
		mu.Unlock()
		tf := tableFlags{tables: urlList{srv.URL + "/"}, cacheSize: 64 << 20}
		ts, _ := tf.open(context.Background())
		start := time.Now()
		ts.tb.Probe(context.Background(), &positions[i])
		d := time.Since(start)
		ts.Close()
		if d > 125*time.Millisecond {
			mu.Lock()
			fmt.Printf("=== %s %v\n", positions[i].FEN(), d)
			for _, l := range log {
				fmt.Println(l)
			}
			mu.Unlock()
		}
	}
}
