package http_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	nethttptest "net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"github.com/tbfs/tbfs/source"
	srchttp "github.com/tbfs/tbfs/source/http"
	"github.com/tbfs/tbfs/source/http/mirrortest"
	"github.com/tbfs/tbfs/source/metrics"
	"github.com/tbfs/tbfs/source/retry"
	"github.com/tbfs/tbfs/source/sourcetest"
)

func TestConformanceWithManifest(t *testing.T) {
	sourcetest.Run(t, func(t *testing.T, dir string) source.Source {
		mirrortest.WriteManifest(t, dir)
		src, err := source.Open(context.Background(), mirrortest.Serve(t, dir))
		if err != nil {
			t.Fatal(err)
		}
		return src
	})
}

func TestConformanceWithoutManifest(t *testing.T) {
	sourcetest.Run(t, func(t *testing.T, dir string) source.Source {
		src, err := srchttp.New(mirrortest.Serve(t, dir), srchttp.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := src.List(context.Background(), ""); !errors.Is(err, source.ErrUnsupported) {
			t.Errorf("List without a manifest: err = %v, want ErrUnsupported", err)
		}
		return src
	})
}

// TestConformanceHeadRefused runs the suite against a server that refuses
// HEAD, so every size comes from the ranged-GET probe.
func TestConformanceHeadRefused(t *testing.T) {
	sourcetest.Run(t, func(t *testing.T, dir string) source.Source {
		inner := mirrortest.Handler(t, dir)
		srv := nethttptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodHead {
				http.Error(w, "no HEAD here", http.StatusMethodNotAllowed)
				return
			}
			inner.ServeHTTP(w, r)
		}))
		t.Cleanup(srv.Close)
		src, err := srchttp.New(srv.URL, srchttp.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return src
	})
}

// fixtureServer serves the suite's fixtures through wrap, counting requests.
func fixtureServer(t *testing.T, wrap func(inner http.Handler) http.Handler) (url string, requests *atomic.Int64) {
	t.Helper()
	dir := t.TempDir()
	sourcetest.WriteFixtures(t, dir)
	inner := mirrortest.Handler(t, dir)
	requests = new(atomic.Int64)
	h := wrap(inner)
	srv := nethttptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/", requests
}

var big = sourcetest.Fixtures()[1].Data // big/blob.bin, the arbiter of read content

// TestStatusKinds checks the error kind each status maps to: the HTTP
// semantics (RFC 9110) decide which failures may pass when retried.
func TestStatusKinds(t *testing.T) {
	cases := []struct {
		status int
		want   error
	}{
		{http.StatusNotFound, source.ErrNotFound},
		{http.StatusGone, source.ErrNotFound},
		{http.StatusUnauthorized, source.ErrPermanent},
		{http.StatusForbidden, source.ErrPermanent},
		{http.StatusBadRequest, source.ErrPermanent},
		{http.StatusTeapot, source.ErrPermanent},
		{http.StatusRequestTimeout, source.ErrTransient},
		{http.StatusTooManyRequests, source.ErrTransient},
		{http.StatusInternalServerError, source.ErrTransient},
		{http.StatusBadGateway, source.ErrTransient},
		{http.StatusServiceUnavailable, source.ErrTransient},
		{http.StatusGatewayTimeout, source.ErrTransient},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.status), func(t *testing.T) {
			var fail atomic.Bool
			url, _ := fixtureServer(t, func(inner http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if fail.Load() {
						http.Error(w, "no", c.status)
						return
					}
					inner.ServeHTTP(w, r)
				})
			})
			src, err := srchttp.New(url, srchttp.Options{OpenRead: -1})
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			obj, err := src.Open(context.Background(), "a.txt")
			if err != nil {
				t.Fatal(err)
			}
			fail.Store(true)
			n, err := obj.ReadAt(context.Background(), make([]byte, 4), 0, source.HintData)
			if !errors.Is(err, c.want) || n != 0 {
				t.Errorf("read answered %d: n=%d err=%v, want 0 and %v", c.status, n, err, c.want)
			}
			if _, err := src.Open(context.Background(), "a.txt"); !errors.Is(err, c.want) {
				t.Errorf("open answered %d: err=%v, want %v", c.status, err, c.want)
			}
			// Opening with the first GET maps the status the same way.
			get, _ := srchttp.New(url, srchttp.Options{})
			if _, err := get.Open(context.Background(), "a.txt"); !errors.Is(err, c.want) {
				t.Errorf("open by GET answered %d: err=%v, want %v", c.status, err, c.want)
			}
		})
	}
}

// noSleep is a retry policy that records its waits instead of sleeping.
func noSleep(waits *[]time.Duration, attempts int) retry.Policy {
	var mu sync.Mutex
	return retry.Policy{Attempts: attempts, Base: 10 * time.Millisecond, Max: time.Second,
		Sleep: func(ctx context.Context, d time.Duration) error {
			mu.Lock()
			*waits = append(*waits, d)
			mu.Unlock()
			return ctx.Err()
		}}
}

// TestRetryThenSuccess: a server answers 500, then 503, then serves the
// range; through the retry wrapper the read succeeds with the right bytes
// after exactly two retries, waiting Base then 2*Base.
func TestRetryThenSuccess(t *testing.T) {
	var reads atomic.Int64
	url, requests := fixtureServer(t, func(inner http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet {
				switch reads.Add(1) {
				case 1:
					http.Error(w, "boom", http.StatusInternalServerError)
					return
				case 2:
					http.Error(w, "busy", http.StatusServiceUnavailable)
					return
				}
			}
			inner.ServeHTTP(w, r)
		})
	})
	raw, err := srchttp.New(url, srchttp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var waits []time.Duration
	c := new(metrics.Counters)
	p := noSleep(&waits, 4)
	p.Counters = c
	src := retry.Wrap(raw, p)
	defer src.Close()
	obj, err := src.Open(context.Background(), "big/blob.bin")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 65536)
	n, err := obj.ReadAt(context.Background(), buf, 5000, source.HintData)
	if err != nil || n != len(buf) || !bytes.Equal(buf, big[5000:5000+65536]) {
		t.Fatalf("ReadAt after 500, 503: n=%d err=%v (bytes equal: %v)", n, err, bytes.Equal(buf[:n], big[5000:5000+n]))
	}
	if got := c.Stats().Retries; got != 2 {
		t.Errorf("retries = %d, want 2", got)
	}
	if len(waits) != 2 || waits[0] != 10*time.Millisecond || waits[1] != 20*time.Millisecond {
		t.Errorf("waits = %v, want [10ms 20ms]", waits)
	}
	if got := requests.Load(); got != 4 { // HEAD + 3 GETs
		t.Errorf("requests = %d, want 4", got)
	}
}

// TestRetryBounded: a server that always answers 503 costs exactly Attempts
// requests and the error stays transient.
func TestRetryBounded(t *testing.T) {
	url, requests := fixtureServer(t, func(inner http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet {
				http.Error(w, "busy", http.StatusServiceUnavailable)
				return
			}
			inner.ServeHTTP(w, r)
		})
	})
	raw, _ := srchttp.New(url, srchttp.Options{OpenRead: -1})
	var waits []time.Duration
	src := retry.Wrap(raw, noSleep(&waits, 3))
	defer src.Close()
	obj, err := src.Open(context.Background(), "a.txt")
	if err != nil {
		t.Fatal(err)
	}
	before := requests.Load()
	_, err = obj.ReadAt(context.Background(), make([]byte, 4), 0, source.HintData)
	if !errors.Is(err, source.ErrTransient) {
		t.Errorf("err = %v, want ErrTransient", err)
	}
	if got := requests.Load() - before; got != 3 {
		t.Errorf("GETs = %d, want 3 (Attempts)", got)
	}
}

// TestTruncatedBody: the server announces the range but closes the
// connection halfway; the read fails transiently and returns no bytes as
// if they were the range.
func TestTruncatedBody(t *testing.T) {
	url, _ := fixtureServer(t, func(inner http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodGet {
				inner.ServeHTTP(w, r)
				return
			}
			rec := nethttptest.NewRecorder()
			inner.ServeHTTP(rec, r)
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			body := rec.Body.Bytes()
			w.Write(body[:len(body)/2])
			// Returning with fewer bytes than Content-Length makes the
			// server close the connection.
		})
	})
	src, _ := srchttp.New(url, srchttp.Options{OpenRead: -1})
	defer src.Close()
	obj, err := src.Open(context.Background(), "big/blob.bin")
	if err != nil {
		t.Fatal(err)
	}
	n, err := obj.ReadAt(context.Background(), make([]byte, 100000), 777, source.HintData)
	if !errors.Is(err, source.ErrTransient) || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("err = %v, want ErrTransient wrapping io.ErrUnexpectedEOF", err)
	}
	if n != 0 {
		t.Errorf("n = %d, want 0", n)
	}
}

// stallServer sends the headers and the first bytes of a range, then stalls
// until the client goes away.
func stallServer(t *testing.T) string {
	url, _ := fixtureServer(t, func(inner http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodGet {
				inner.ServeHTTP(w, r)
				return
			}
			rec := nethttptest.NewRecorder()
			inner.ServeHTTP(rec, r)
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			w.Write(rec.Body.Bytes()[:10])
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		})
	})
	return url
}

// TestSlowBody: a body that stalls past the per-request timeout fails
// transiently instead of hanging.
func TestSlowBody(t *testing.T) {
	src, _ := srchttp.New(stallServer(t), srchttp.Options{Timeout: 300 * time.Millisecond, OpenRead: -1})
	defer src.Close()
	obj, err := src.Open(context.Background(), "big/blob.bin")
	if err != nil {
		t.Fatal(err)
	}
	_, err = obj.ReadAt(context.Background(), make([]byte, 5000), 0, source.HintData)
	if !errors.Is(err, source.ErrTransient) {
		t.Errorf("err = %v, want ErrTransient", err)
	}
}

// TestCancelDuringBody: cancelling the caller's context while the body
// stalls ends the read with context.Canceled, which is not retryable.
func TestCancelDuringBody(t *testing.T) {
	src, _ := srchttp.New(stallServer(t), srchttp.Options{OpenRead: -1})
	defer src.Close()
	obj, err := src.Open(context.Background(), "big/blob.bin")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := obj.ReadAt(ctx, make([]byte, 5000), 0, source.HintData)
		done <- err
	}()
	cancel()
	err = <-done
	if !errors.Is(err, context.Canceled) || source.IsRetryable(err) {
		t.Errorf("err = %v, want context.Canceled and not retryable", err)
	}
}

// ignoreRange serves every GET whole with 200, as a server without Range
// support does.
func ignoreRange(inner http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Del("Range")
		inner.ServeHTTP(w, r)
	})
}

// TestIgnoresRange: when the server sends the whole object, reads within
// MaxIgnoredRange are cut out of it (the fixture bytes are the arbiter), and
// reads beyond fail permanently instead of returning other bytes.
func TestIgnoresRange(t *testing.T) {
	url, _ := fixtureServer(t, ignoreRange)
	src, _ := srchttp.New(url, srchttp.Options{MaxIgnoredRange: 200000, OpenRead: -1})
	defer src.Close()
	obj, err := src.Open(context.Background(), "big/blob.bin")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		off  int64
		n    int
		want error
	}{
		{0, 100, nil},
		{12345, 1000, nil},
		{199000, 1000, nil},
		{199000, 1001, source.ErrPermanent},
		{1 << 20, 64, source.ErrPermanent},
	}
	for _, c := range cases {
		buf := make([]byte, c.n)
		n, err := obj.ReadAt(context.Background(), buf, c.off, source.HintData)
		if c.want != nil {
			if !errors.Is(err, c.want) || n != 0 {
				t.Errorf("ReadAt(%d, %d): n=%d err=%v, want 0 and %v", c.off, c.n, n, err, c.want)
			}
			continue
		}
		if err != nil || n != c.n || !bytes.Equal(buf, big[c.off:c.off+int64(c.n)]) {
			t.Errorf("ReadAt(%d, %d): n=%d err=%v or wrong bytes", c.off, c.n, n, err)
		}
	}
	refuse, _ := srchttp.New(url, srchttp.Options{MaxIgnoredRange: -1, OpenRead: -1})
	obj2, err := refuse.Open(context.Background(), "a.txt")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := obj2.ReadAt(context.Background(), make([]byte, 3), 2, source.HintData); !errors.Is(err, source.ErrPermanent) {
		t.Errorf("with MaxIgnoredRange < 0: err = %v, want ErrPermanent", err)
	}
}

// TestWrongRange: a server that answers 206 with another range than asked
// is caught; its bytes are not returned.
func TestWrongRange(t *testing.T) {
	url, _ := fixtureServer(t, func(inner http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if rg := r.Header.Get("Range"); rg != "" && rg != "bytes=0-0" {
				r.Header.Set("Range", "bytes=0-9")
			}
			inner.ServeHTTP(w, r)
		})
	})
	src, _ := srchttp.New(url, srchttp.Options{OpenRead: -1})
	defer src.Close()
	obj, err := src.Open(context.Background(), "big/blob.bin")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := obj.ReadAt(context.Background(), make([]byte, 10), 500, source.HintData); !errors.Is(err, source.ErrPermanent) || n != 0 {
		t.Errorf("n=%d err=%v, want 0 and ErrPermanent", n, err)
	}
}

// TestOneRequestPerRead: a cold read inside an object is one GET, whatever
// its size (the requirement for tablebase access).
func TestOneRequestPerRead(t *testing.T) {
	url, requests := fixtureServer(t, func(inner http.Handler) http.Handler { return inner })
	src, _ := srchttp.New(url, srchttp.Options{OpenRead: -1})
	defer src.Close()
	obj, err := src.Open(context.Background(), "big/blob.bin")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 65536, 1 << 20} {
		before := requests.Load()
		if _, err := obj.ReadAt(context.Background(), make([]byte, n), 3, source.HintData); err != nil {
			t.Fatal(err)
		}
		if got := requests.Load() - before; got != 1 {
			t.Errorf("read of %d bytes took %d requests, want 1", n, got)
		}
	}
}

// TestConnectionRefused: nothing listens, which is transient.
func TestConnectionRefused(t *testing.T) {
	srv := nethttptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	src, _ := srchttp.New(url, srchttp.Options{})
	if _, err := src.Open(context.Background(), "a.txt"); !errors.Is(err, source.ErrTransient) {
		t.Errorf("err = %v, want ErrTransient", err)
	}
}

// TestNewRejects: URLs that cannot name a mirror.
func TestNewRejects(t *testing.T) {
	for _, u := range []string{"ftp://host/x", "http://", "http:///path", "://bad", "http://h/x?\x7f"} {
		if _, err := srchttp.New(u, srchttp.Options{}); !errors.Is(err, source.ErrInvalid) {
			t.Errorf("New(%q): err = %v, want ErrInvalid", u, err)
		}
	}
}

// TestParseManifest: rows from the manifest format of the package
// documentation.
func TestParseManifest(t *testing.T) {
	cases := []struct {
		text string
		want []source.Entry
		bad  bool
	}{
		{text: "", want: nil},
		{text: "# only a comment\n\n", want: nil},
		{text: "5 b\n3 a\n", want: []source.Entry{{Name: "a", Size: 3}, {Name: "b", Size: 5}}},
		{text: "0 with space.txt\r\n", want: []source.Entry{{Name: "with space.txt", Size: 0}}},
		{text: "10 dir/x\n", want: []source.Entry{{Name: "dir/x", Size: 10}}},
		{text: "x a\n", bad: true},
		{text: "-1 a\n", bad: true},
		{text: "+1 a\n", bad: true},
		{text: "1\n", bad: true},
		{text: "1 ../etc/passwd\n", bad: true},
		{text: "1 /abs\n", bad: true},
		{text: "1 a\n2 a\n", bad: true},
		{text: "1  a\n", want: []source.Entry{{Name: " a", Size: 1}}}, // names may begin with a space
		{text: "99999999999999999999 a\n", bad: true},
	}
	for _, c := range cases {
		got, err := srchttp.ParseManifest(strings.NewReader(c.text))
		if c.bad {
			if err == nil {
				t.Errorf("ParseManifest(%q) accepted it", c.text)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseManifest(%q): %v", c.text, err)
			continue
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("ParseManifest(%q) = %v, want %v", c.text, got, c.want)
		}
		var buf bytes.Buffer
		if err := srchttp.WriteManifest(&buf, got); err != nil {
			t.Fatal(err)
		}
		again, err := srchttp.ParseManifest(&buf)
		if err != nil || fmt.Sprint(again) != fmt.Sprint(got) {
			t.Errorf("round trip of %v gave %v, %v", got, again, err)
		}
	}
}

// TestBadManifest: a malformed manifest is a permanent listing error.
func TestBadManifest(t *testing.T) {
	dir := t.TempDir()
	sourcetest.WriteFixtures(t, dir)
	if err := writeFile(dir+"/MANIFEST", "12 a.txt\nnot a line\n"); err != nil {
		t.Fatal(err)
	}
	src, _ := srchttp.New(mirrortest.Serve(t, dir), srchttp.Options{})
	if _, err := src.List(context.Background(), ""); !errors.Is(err, source.ErrPermanent) || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("err = %v, want ErrPermanent naming line 2", err)
	}
}

// FuzzParseManifest: the parser never panics, and what it accepts holds
// only valid, distinct names with sizes, sorted, and survives a round trip.
func FuzzParseManifest(f *testing.F) {
	for _, s := range []string{"1 a\n", "# c\n\n0 x y\n", "1 ../a\n", "5 b\n3 a\n", "1 a\n1 a\n", "-1 a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		entries, err := srchttp.ParseManifest(strings.NewReader(text))
		if err != nil {
			return
		}
		for i, e := range entries {
			if source.CheckName(e.Name) != nil || e.Size < 0 || i > 0 && entries[i-1].Name >= e.Name {
				t.Fatalf("accepted entry %+v at %d", e, i)
			}
		}
		var buf bytes.Buffer
		if err := srchttp.WriteManifest(&buf, entries); err != nil {
			t.Fatal(err)
		}
		again, err := srchttp.ParseManifest(&buf)
		if err != nil || fmt.Sprint(again) != fmt.Sprint(entries) {
			t.Fatalf("round trip: %v, %v", again, err)
		}
	})
}

// TestDirectoryRedirect: a server that redirects a directory name to its
// listing (as nginx and Apache do) does not turn the listing into an
// object.
func TestDirectoryRedirect(t *testing.T) {
	url, _ := fixtureServer(t, func(inner http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/dir":
				http.Redirect(w, r, "/dir/", http.StatusMovedPermanently)
			case "/dir/":
				w.Write([]byte("<html>listing</html>"))
			default:
				inner.ServeHTTP(w, r)
			}
		})
	})
	src, _ := srchttp.New(url, srchttp.Options{})
	defer src.Close()
	if _, err := src.Open(context.Background(), "dir"); !errors.Is(err, source.ErrNotFound) {
		t.Errorf("Open(dir): err = %v, want ErrNotFound", err)
	}
	if _, err := src.Open(context.Background(), "dir/b.bin"); err != nil {
		t.Errorf("Open(dir/b.bin): %v", err)
	}
}

// TestConformanceSubpath serves the mirror below a path, with the base URL
// given without its trailing slash.
func TestConformanceSubpath(t *testing.T) {
	sourcetest.Run(t, func(t *testing.T, dir string) source.Source {
		mirrortest.WriteManifest(t, dir)
		srv := nethttptest.NewServer(http.StripPrefix("/mirror/tables", mirrortest.Handler(t, dir)))
		t.Cleanup(srv.Close)
		src, err := source.Open(context.Background(), srv.URL+"/mirror/tables")
		if err != nil {
			t.Fatal(err)
		}
		return src
	})
}

// TestContentEncoding: a server that compresses the body anyway would send
// other bytes than the object's; that is refused.
func TestContentEncoding(t *testing.T) {
	url, _ := fixtureServer(t, func(inner http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet {
				w.Header().Set("Content-Encoding", "gzip")
			}
			inner.ServeHTTP(w, r)
		})
	})
	src, _ := srchttp.New(url, srchttp.Options{OpenRead: -1})
	defer src.Close()
	obj, err := src.Open(context.Background(), "a.txt")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := obj.ReadAt(context.Background(), make([]byte, 4), 0, source.HintData); !errors.Is(err, source.ErrPermanent) || n != 0 {
		t.Errorf("n=%d err=%v, want 0 and ErrPermanent", n, err)
	}
}

// TestParseManifestHostileReaders: the parser gives the same entries when
// fed one byte at a time, and reports a reader's failure.
func TestParseManifestHostileReaders(t *testing.T) {
	text := "3 a\n# c\n5 dir/b c\n"
	want, err := srchttp.ParseManifest(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	got, err := srchttp.ParseManifest(iotest.OneByteReader(strings.NewReader(text)))
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("one byte at a time: %v, %v; want %v", got, err, want)
	}
	boom := errors.New("boom")
	if _, err := srchttp.ParseManifest(io.MultiReader(strings.NewReader("3 a\n"), iotest.ErrReader(boom))); !errors.Is(err, boom) {
		t.Errorf("failing reader: err = %v, want %v", err, boom)
	}
}
