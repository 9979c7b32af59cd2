package mirrortest

import (
	"net"
	"net/http"
	nethttptest "net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
	"time"
)

// Slow puts a fixed delay in front of every request a handler answers and
// counts the requests, so tests and benchmarks can see round trips instead of
// bytes: with a delay far above a loopback request's own cost, a client's
// wall time divided by the delay is the number of round trips on its critical
// path, and the counts say how many requests it sent.
type Slow struct {
	h     http.Handler
	delay time.Duration

	mu       sync.Mutex
	counts   Counts
	inflight int
	arrivals []time.Time // since the last Reset
}

// Counts is what a Slow server has answered.
type Counts struct {
	Heads int // HEAD requests
	Gets  int // GET requests that are not listings
	Lists int // GET requests with an S3 list-type query (ListObjectsV2)
	Other int // any other method
	// MaxInFlight is the most requests that were being answered at once.
	MaxInFlight int
}

// Total is every request counted.
func (c Counts) Total() int { return c.Heads + c.Gets + c.Lists + c.Other }

// Delay wraps h so each request waits d before h sees it. A request whose
// client goes away during the wait is not passed on.
func Delay(h http.Handler, d time.Duration) *Slow { return &Slow{h: h, delay: d} }

// ServeHTTP counts the request, waits, then lets the wrapped handler answer.
func (s *Slow) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	switch {
	case r.Method == http.MethodHead:
		s.counts.Heads++
	case r.Method == http.MethodGet && r.URL.Query().Has("list-type"):
		s.counts.Lists++
	case r.Method == http.MethodGet:
		s.counts.Gets++
	default:
		s.counts.Other++
	}
	s.inflight++
	s.counts.MaxInFlight = max(s.counts.MaxInFlight, s.inflight)
	s.arrivals = append(s.arrivals, time.Now())
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inflight--
		s.mu.Unlock()
	}()
	t := time.NewTimer(s.delay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done():
		return
	}
	s.h.ServeHTTP(w, r)
}

// Counts returns the counts so far.
func (s *Slow) Counts() Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts
}

// Reset sets every count back to zero.
func (s *Slow) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts = Counts{MaxInFlight: s.inflight}
	s.arrivals = nil
}

// Waves counts the round trips on the critical path of what a client sent
// since start (which it took just before sending anything): a request
// that arrives k delays after start was sent after k answers, one after
// another, so it is in wave k+1; the result is the last wave, 0 when
// nothing arrived. Unlike wall time it does not grow with the client's CPU
// time, as long as that stays under one delay per wave.
func (s *Slow) Waves(start time.Time) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	last := 0
	for _, a := range s.arrivals {
		if a.Before(start) {
			continue
		}
		last = max(last, int(a.Sub(start)/s.delay)+1)
	}
	return last
}

// ServeSlow is Serve with every request delayed by d: dir over HTTP on a
// free loopback port, with Range, HEAD and conditional requests. It returns
// the base URL (ending in a slash) and the counting wrapper.
func ServeSlow(t testing.TB, dir string, d time.Duration) (string, *Slow) {
	t.Helper()
	slow := Delay(Handler(t, dir), d)
	srv := nethttptest.NewServer(slow)
	t.Cleanup(srv.Close)
	return srv.URL + "/", slow
}

// ServeSlowListed is ServeSlow for a mirror that publishes a manifest of
// dir (made when the server starts; dir itself is not written).
func ServeSlowListed(t testing.TB, dir string, d time.Duration) (string, *Slow) {
	t.Helper()
	slow := Delay(WithManifest(t, dir, Handler(t, dir)), d)
	srv := nethttptest.NewServer(slow)
	t.Cleanup(srv.Close)
	return srv.URL + "/", slow
}

// ProxySlow starts a reverse proxy on a free loopback port that forwards
// every request to target (a loopback http:// URL, such as an S3 test
// server's endpoint) after a delay of d. It returns the proxy's base URL
// (without a trailing slash, as an endpoint is written) and the counting
// wrapper. Requests keep their Host header, so signed S3 requests stay
// valid when the client signs for the proxy's address.
func ProxySlow(t testing.TB, target string, d time.Duration) (string, *Slow) {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil || u.Scheme != "http" {
		t.Fatalf("mirrortest: proxy target %q is not an http URL", target)
	}
	if host := u.Hostname(); host != "localhost" {
		if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
			t.Fatalf("mirrortest: proxy target %q is not on loopback", target)
		}
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
			pr.Out.Host = pr.In.Host // the signature covers the Host the client saw
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if r.Context().Err() != nil {
				return // the client gave up (a request it no longer needed)
			}
			http.Error(w, "proxy: "+err.Error(), http.StatusBadGateway)
		},
	}
	slow := Delay(rp, d)
	srv := nethttptest.NewServer(slow)
	t.Cleanup(srv.Close)
	return srv.URL, slow
}
