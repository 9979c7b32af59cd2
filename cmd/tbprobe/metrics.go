package main

import (
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tbfs/tbfs/source/breaker"
)

// latencyBuckets are the upper bounds, in seconds, of the probe latency
// histogram: from a warm cached probe (microseconds) to a cold remote one.
var latencyBuckets = []float64{0.00001, 0.00003, 0.0001, 0.0003, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1, 3, 10}

// serverMetrics counts what the HTTP API did, for /metrics.
type serverMetrics struct {
	probesOK, probesOutside, probesFailed atomic.Int64

	mu       sync.Mutex
	buckets  []int64 // cumulative counts are computed when written
	n        int64
	sum      float64
	requests map[string]int64 // "path code" -> count
}

func newServerMetrics() *serverMetrics {
	return &serverMetrics{buckets: make([]int64, len(latencyBuckets)), requests: map[string]int64{}}
}

// observe records one probe of a request (a position with its moves, or
// a mainline): its duration and outcome.
func (m *serverMetrics) observe(d time.Duration, outside bool, err error) {
	switch {
	case err != nil:
		m.probesFailed.Add(1)
	case outside:
		m.probesOutside.Add(1)
	default:
		m.probesOK.Add(1)
	}
	m.latency(d)
}

func (m *serverMetrics) latency(d time.Duration) {
	s := d.Seconds()
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, ub := range latencyBuckets {
		if s <= ub {
			m.buckets[i]++
			break
		}
	}
	m.n++
	m.sum += s
}

// statusWriter remembers the status code a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	code int
}

// Unwrap gives http.ResponseController the connection's own writer, so
// the API can set write deadlines through this wrapper.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) WriteHeader(code int) {
	w.code = code
	w.ResponseWriter.WriteHeader(code)
}

// count wraps h to count requests by route and status code. Paths outside
// the API are counted together, so a scanner cannot grow the label set.
func (m *serverMetrics) count(h http.Handler) http.Handler {
	known := map[string]bool{"/standard": true, "/standard/mainline": true, "/standard/batch": true, "/metrics": true, "/healthz": true}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
		h.ServeHTTP(sw, r)
		path := r.URL.Path
		if !known[path] {
			path = "other"
		}
		m.mu.Lock()
		m.requests[path+" "+strconv.Itoa(sw.code)]++
		m.mu.Unlock()
	})
}

// write prints every metric in the Prometheus text exposition format.
func (m *serverMetrics) write(w io.Writer, ts *tableSet) {
	fmt.Fprintln(w, "# HELP tbprobe_probes_total Positions probed, by outcome: ok, outside (no table or outside the tables' domain), failed (transport or corrupt data).")
	fmt.Fprintln(w, "# TYPE tbprobe_probes_total counter")
	fmt.Fprintf(w, "tbprobe_probes_total{result=\"ok\"} %d\n", m.probesOK.Load())
	fmt.Fprintf(w, "tbprobe_probes_total{result=\"outside\"} %d\n", m.probesOutside.Load())
	fmt.Fprintf(w, "tbprobe_probes_total{result=\"failed\"} %d\n", m.probesFailed.Load())

	m.mu.Lock()
	fmt.Fprintln(w, "# HELP tbprobe_probe_duration_seconds Time to answer one position with all its moves.")
	fmt.Fprintln(w, "# TYPE tbprobe_probe_duration_seconds histogram")
	var cum int64
	for i, ub := range latencyBuckets {
		cum += m.buckets[i]
		fmt.Fprintf(w, "tbprobe_probe_duration_seconds_bucket{le=\"%s\"} %d\n", strconv.FormatFloat(ub, 'g', -1, 64), cum)
	}
	fmt.Fprintf(w, "tbprobe_probe_duration_seconds_bucket{le=\"+Inf\"} %d\n", m.n)
	fmt.Fprintf(w, "tbprobe_probe_duration_seconds_sum %s\n", strconv.FormatFloat(m.sum, 'g', -1, 64))
	fmt.Fprintf(w, "tbprobe_probe_duration_seconds_count %d\n", m.n)
	keys := make([]string, 0, len(m.requests))
	for k := range m.requests {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Fprintln(w, "# HELP tbprobe_http_requests_total HTTP requests by path and status code.")
	fmt.Fprintln(w, "# TYPE tbprobe_http_requests_total counter")
	for _, k := range keys {
		var path, code string
		fmt.Sscan(k, &path, &code)
		fmt.Fprintf(w, "tbprobe_http_requests_total{path=%q,code=%q} %d\n", path, code, m.requests[k])
	}
	m.mu.Unlock()

	used, peak := ts.tb.CacheStats()
	st := ts.Stats()
	var br breaker.Stats
	var brOpen int64
	for _, l := range ts.set {
		b := l.BreakerStats()
		br.Opens += b.Opens
		br.Refusals += b.Refusals
		if b.Open {
			brOpen++
		}
	}
	for _, c := range []struct {
		name, help, typ string
		v               int64
	}{
		{"tbprobe_block_cache_bytes", "Decoded table blocks held in memory.", "gauge", used},
		{"tbprobe_block_cache_peak_bytes", "Most decoded table block bytes ever held.", "gauge", peak},
		{"tbprobe_source_cache_hits_total", "Source cache blocks served from memory (remote sources).", "counter", st.Hits},
		{"tbprobe_source_cache_misses_total", "Source cache blocks fetched from the transport.", "counter", st.Misses},
		{"tbprobe_source_cache_evictions_total", "Source cache blocks dropped to stay within the budget.", "counter", st.Evictions},
		{"tbprobe_transport_opens_total", "Objects opened on the transport.", "counter", st.Opens},
		{"tbprobe_transport_requests_total", "Read requests that reached the transport.", "counter", st.Requests},
		{"tbprobe_transport_bytes_total", "Bytes the transport returned.", "counter", st.Bytes},
		{"tbprobe_transport_errors_total", "Failed transport calls.", "counter", st.Errors},
		{"tbprobe_transport_retries_total", "Transport calls repeated after a transient failure.", "counter", st.Retries},
		{"tbprobe_breaker_opens_total", "Times a table location's circuit breaker opened after repeated failures.", "counter", br.Opens},
		{"tbprobe_breaker_refusals_total", "Transport calls refused at once by an open circuit breaker.", "counter", br.Refusals},
		{"tbprobe_breaker_open", "Table locations whose circuit breaker is open now.", "gauge", brOpen},
	} {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n%s %d\n", c.name, c.help, c.name, c.typ, c.name, c.v)
	}
}
