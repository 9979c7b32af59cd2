package http_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	nethttptest "net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tbfs/tbfs/source"
	srchttp "github.com/tbfs/tbfs/source/http"
)

// TestOpenIsOneGet: opening an object is one ranged GET, never a HEAD, and
// its bytes answer the reads inside them without another request; a read
// past them is one more GET. The fixture bytes are the arbiter.
func TestOpenIsOneGet(t *testing.T) {
	var heads atomic.Int64
	url, requests := fixtureServer(t, func(inner http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodHead {
				heads.Add(1)
			}
			inner.ServeHTTP(w, r)
		})
	})
	src, _ := srchttp.New(url, srchttp.Options{})
	defer src.Close()
	ctx := context.Background()
	obj, err := src.Open(ctx, "big/blob.bin")
	if err != nil {
		t.Fatal(err)
	}
	if obj.Size() != int64(len(big)) {
		t.Fatalf("size %d, want %d", obj.Size(), len(big))
	}
	for _, r := range []struct {
		off      int64
		n        int
		requests int64
	}{
		{0, 4096, 0},
		{4096, srchttp.DefaultOpenRead - 4096, 0},
		{srchttp.DefaultOpenRead - 10, 20, 1}, // 10 kept bytes, 10 fetched
		{100, 10, 1},                          // the kept bytes were all read once, so dropped
	} {
		before := requests.Load()
		buf := make([]byte, r.n)
		n, err := obj.ReadAt(ctx, buf, r.off, source.HintHeader)
		if err != nil || n != r.n || !bytes.Equal(buf, big[r.off:r.off+int64(r.n)]) {
			t.Fatalf("ReadAt(%d, %d): n=%d err=%v or wrong bytes", r.off, r.n, n, err)
		}
		if got := requests.Load() - before; got != r.requests {
			t.Errorf("ReadAt(%d, %d) took %d requests, want %d", r.off, r.n, got, r.requests)
		}
	}
	if heads.Load() != 0 {
		t.Errorf("%d HEAD requests, want none", heads.Load())
	}
}

// TestOpenMisbehaving: the GET that opens an object checks its answer as a
// read does: another range, a compressed body, a short or stalled body are
// errors of the same kinds; a server that ignores Range or names no total
// size still gives the right size and bytes.
func TestOpenMisbehaving(t *testing.T) {
	cases := []struct {
		what string
		wrap func(w http.ResponseWriter, r *http.Request, inner http.Handler)
		want error // nil: opens, with the fixture's size and bytes
	}{
		{"another range", func(w http.ResponseWriter, r *http.Request, inner http.Handler) {
			r.Header.Set("Range", "bytes=0-9")
			inner.ServeHTTP(w, r)
		}, source.ErrPermanent},
		{"gzip", func(w http.ResponseWriter, r *http.Request, inner http.Handler) {
			w.Header().Set("Content-Encoding", "gzip")
			inner.ServeHTTP(w, r)
		}, source.ErrPermanent},
		{"short body", func(w http.ResponseWriter, r *http.Request, inner http.Handler) {
			rec := nethttptest.NewRecorder()
			inner.ServeHTTP(rec, r)
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			w.Write(rec.Body.Bytes()[:10])
		}, source.ErrTransient},
		{"stall", func(w http.ResponseWriter, r *http.Request, inner http.Handler) {
			w.Header().Set("Content-Range", "bytes 0-65535/200000")
			w.WriteHeader(http.StatusPartialContent)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}, source.ErrTransient},
		{"ignores Range", func(w http.ResponseWriter, r *http.Request, inner http.Handler) {
			r.Header.Del("Range")
			inner.ServeHTTP(w, r)
		}, nil},
		{"no total", func(w http.ResponseWriter, r *http.Request, inner http.Handler) {
			if r.Method == http.MethodHead {
				inner.ServeHTTP(w, r)
				return
			}
			w.Header().Set("Content-Range", "bytes 0-65535/*")
			w.WriteHeader(http.StatusPartialContent)
			w.Write(big[:65536])
		}, nil},
	}
	for _, c := range cases {
		t.Run(c.what, func(t *testing.T) {
			var opened atomic.Bool
			url, _ := fixtureServer(t, func(inner http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if opened.Load() {
						inner.ServeHTTP(w, r)
						return
					}
					c.wrap(w, r, inner)
				})
			})
			// Only the stalled body should meet the short timeout; the
			// other answers must be judged as they are even when the test
			// process is slow.
			var timeout time.Duration // the default
			if c.what == "stall" {
				timeout = 300 * time.Millisecond
			}
			src, _ := srchttp.New(url, srchttp.Options{Timeout: timeout})
			defer src.Close()
			obj, err := src.Open(context.Background(), "big/blob.bin")
			opened.Store(true)
			if c.want != nil {
				if !errors.Is(err, c.want) {
					t.Fatalf("err = %v, want %v", err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if obj.Size() != int64(len(big)) {
				t.Fatalf("size %d, want %d", obj.Size(), len(big))
			}
			buf := make([]byte, 1000)
			if n, err := obj.ReadAt(context.Background(), buf, 150000, source.HintData); err != nil || n != 1000 || !bytes.Equal(buf, big[150000:151000]) {
				t.Errorf("ReadAt: n=%d err=%v or wrong bytes", n, err)
			}
		})
	}
}
