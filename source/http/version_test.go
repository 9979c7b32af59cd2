package http_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	nethttptest "net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tbfs/tbfs/source"
	srchttp "github.com/tbfs/tbfs/source/http"
)

// servedVersion is one version of the single object a versionServer serves.
type servedVersion struct {
	data []byte
	mod  time.Time
}

// versionServer serves one object, "t.bin", whose current version the test
// swaps. validator decides what the server says about versions; obey
// whether it honours If-Match and If-Unmodified-Since (RFC 9110 §13).
func versionServer(t *testing.T, cur *atomic.Pointer[servedVersion], validator string, obey bool) string {
	t.Helper()
	srv := nethttptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := cur.Load()
		tag := fmt.Sprintf(`"%x-%x"`, v.mod.UnixNano(), len(v.data))
		mod := v.mod
		switch validator {
		case "strong":
			w.Header().Set("ETag", tag)
		case "weak":
			w.Header().Set("ETag", "W/"+tag)
		case "last-modified":
		case "none":
			mod = time.Time{} // ServeContent then sends no Last-Modified
		}
		if !obey {
			r.Header.Del("If-Match")
			r.Header.Del("If-Unmodified-Since")
		}
		http.ServeContent(w, r, "t.bin", mod, bytes.NewReader(v.data))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/"
}

// TestReplacedObject: an object replaced by another of the same size after
// Open must not be read as if it were the old one: the bytes of two
// versions of a table mixed give wrong values. Every server that sends a
// validator gets the read refused with ErrChanged, whether it enforces the
// precondition (412) or not (the answer's validator differs); the version
// the object was opened as still reads, and a server without validators can
// only be trusted, which the last row documents.
func TestReplacedObject(t *testing.T) {
	old := &servedVersion{data: bytes.Repeat([]byte("a"), 4096), mod: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	repl := &servedVersion{data: bytes.Repeat([]byte("b"), 4096), mod: old.mod.Add(time.Hour)}
	for _, c := range []struct {
		validator   string
		obey        bool
		wantChanged bool
	}{
		{"strong", true, true},
		{"strong", false, true},
		{"weak", true, true},
		{"weak", false, true},
		{"last-modified", true, true},
		{"last-modified", false, true},
		{"none", true, false},
	} {
		// Both ways of opening: a HEAD, and a GET of the first 64 bytes,
		// which the reads below lie past.
		for _, openRead := range []int{-1, 64} {
			t.Run(fmt.Sprintf("%s/obey=%v/open=%d", c.validator, c.obey, openRead), func(t *testing.T) {
				var cur atomic.Pointer[servedVersion]
				cur.Store(old)
				src, err := srchttp.New(versionServer(t, &cur, c.validator, c.obey), srchttp.Options{OpenRead: openRead})
				if err != nil {
					t.Fatal(err)
				}
				defer src.Close()
				ctx := context.Background()
				obj, err := src.Open(ctx, "t.bin")
				if err != nil {
					t.Fatal(err)
				}
				defer obj.Close()
				buf := make([]byte, 16)
				if _, err := obj.ReadAt(ctx, buf, 100, source.HintData); err != nil || !bytes.Equal(buf, old.data[100:116]) {
					t.Fatalf("read of the version opened: %q, %v", buf, err)
				}
				cur.Store(repl)
				n, err := obj.ReadAt(ctx, buf, 200, source.HintData)
				if !c.wantChanged {
					if err != nil || !bytes.Equal(buf, repl.data[200:216]) {
						t.Fatalf("without validators: %q, %v, want the served bytes", buf, err)
					}
					return
				}
				if !errors.Is(err, source.ErrChanged) || !errors.Is(err, source.ErrPermanent) || n != 0 {
					t.Fatalf("read after replacement: n=%d err=%v, want 0 bytes and ErrChanged (permanent)", n, err)
				}
				cur.Store(old)
				if _, err := obj.ReadAt(ctx, buf, 300, source.HintData); err != nil || !bytes.Equal(buf, old.data[300:316]) {
					t.Fatalf("read once the opened version is back: %q, %v", buf, err)
				}
			})
		}
	}
}

// TestETagTurnsStrong: Apache sends a weak ETag for a file modified within
// the last second and the same tag strong once that second has passed
// (ap_make_etag), so an object opened just after it was written reads on
// with the strong tag; the same tag is the same version under RFC 9110's
// weak comparison, and another tag is still a change.
func TestETagTurnsStrong(t *testing.T) {
	data := bytes.Repeat([]byte("x"), 4096)
	var tag, weak atomic.Value
	tag.Store(`"1000-5f"`)
	weak.Store(true)
	srv := nethttptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		etag := tag.Load().(string)
		if weak.Load().(bool) {
			etag = "W/" + etag
		}
		w.Header().Set("ETag", etag)
		http.ServeContent(w, r, "t.bin", time.Time{}, bytes.NewReader(data))
	}))
	t.Cleanup(srv.Close)
	src, err := srchttp.New(srv.URL+"/", srchttp.Options{OpenRead: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	ctx := context.Background()
	obj, err := src.Open(ctx, "t.bin")
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	weak.Store(false)
	buf := make([]byte, 100)
	if _, err := obj.ReadAt(ctx, buf, 1000, source.HintData); err != nil {
		t.Errorf("read after the tag turned strong: %v", err)
	}
	tag.Store(`"2000-5f"`)
	if _, err := obj.ReadAt(ctx, buf, 2000, source.HintData); !errors.Is(err, source.ErrChanged) {
		t.Errorf("read after the tag changed: %v, want ErrChanged", err)
	}
}
