// Package promserve is the Prometheus side of the tablebase HTTP server,
// on prometheus/client_golang: a registry with the Go runtime, process and
// build-info collectors, the probe counters and latency histogram the
// lichess API reports to, per-endpoint request counts and latency
// histograms, and the /metrics handler that exposes them.
package promserve

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// LatencyBuckets are the upper bounds, in seconds, of the latency
// histograms: from a warm cached probe (microseconds) to a cold remote one.
var LatencyBuckets = []float64{0.00001, 0.00003, 0.0001, 0.0003, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1, 3, 10}

// Metrics holds the server's series. The zero value is not usable; call New.
type Metrics struct {
	reg      *prometheus.Registry
	probes   *prometheus.CounterVec
	probeDur prometheus.Histogram
	requests *prometheus.CounterVec
	reqDur   *prometheus.HistogramVec
	// routes are the paths with series of their own; any other path
	// is counted as "other", so a scanner cannot grow the label set.
	routes map[string]bool
}

// New returns metrics for a server whose endpoints are paths (each gets
// its own request series; every other path is "other"). Series are named
// namespace_..., e.g. tbprobe_probes_total.
func New(namespace string, paths ...string) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), routes: map[string]bool{}}
	for _, p := range paths {
		m.routes[p] = true
	}
	m.probes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "probes_total",
		Help: "Positions probed, by outcome: ok, outside (no table or outside the tables' domain), failed (transport or corrupt data).",
	}, []string{"result"})
	for _, r := range []string{"ok", "outside", "failed"} {
		m.probes.WithLabelValues(r) // every outcome shows, at 0, from the start
	}
	m.probeDur = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: namespace, Name: "probe_duration_seconds",
		Help: "Time to answer one position with all its moves.", Buckets: LatencyBuckets,
	})
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "http_requests_total", Help: "HTTP requests by path and status code.",
	}, []string{"path", "code"})
	m.reqDur = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: namespace, Name: "http_request_duration_seconds",
		Help: "Time from a request's arrival to the end of its answer, by path.", Buckets: LatencyBuckets,
	}, []string{"path"})
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewBuildInfoCollector(),
		m.probes, m.probeDur, m.requests, m.reqDur,
	)
	return m
}

// ObserveProbe records one probe of a request: its duration and outcome.
// Its signature is lichess.Observer's.
func (m *Metrics) ObserveProbe(d time.Duration, outside bool, err error) {
	result := "ok"
	switch {
	case err != nil:
		result = "failed"
	case outside:
		result = "outside"
	}
	m.probes.WithLabelValues(result).Inc()
	m.probeDur.Observe(d.Seconds())
}

// Counter adds a counter read from value at each scrape (a total kept
// elsewhere, such as a source's transport counters).
func (m *Metrics) Counter(name, help string, value func() float64) {
	m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, value))
}

// Gauge adds a gauge read from value at each scrape.
func (m *Metrics) Gauge(name, help string, value func() float64) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, value))
}

// Handler serves the registry in the Prometheus exposition formats.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Instrument wraps h to count every request and time it, by path.
func (m *Metrics) Instrument(h http.Handler) http.Handler {
	byPath := map[string]http.Handler{}
	for p := range m.routes {
		byPath[p] = m.instrumentPath(p, h)
	}
	other := m.instrumentPath("other", h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ih, ok := byPath[r.URL.Path]; ok {
			ih.ServeHTTP(w, r)
			return
		}
		other.ServeHTTP(w, r)
	})
}

func (m *Metrics) instrumentPath(path string, h http.Handler) http.Handler {
	labels := prometheus.Labels{"path": path}
	return promhttp.InstrumentHandlerDuration(m.reqDur.MustCurryWith(labels),
		promhttp.InstrumentHandlerCounter(m.requests.MustCurryWith(labels), h))
}
