package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/coreos/go-systemd/v22/activation"
	"github.com/spf13/cobra"

	"github.com/tbfs/tbfs/cmd/internal/accesslog"
	"github.com/tbfs/tbfs/cmd/internal/cli"
	"github.com/tbfs/tbfs/cmd/internal/exepages"
	"github.com/tbfs/tbfs/cmd/internal/promserve"
	"github.com/tbfs/tbfs/cmd/internal/tables"
	"github.com/tbfs/tbfs/lichess"
	"github.com/tbfs/tbfs/source/breaker"
	"github.com/tbfs/tbfs/source/metrics"
)

// serveLong is serve's help text.
const serveLong = `Serves the tables over HTTP as lichess's tablebase server (lila-tablebase)
does, so lichess clients, chess GUIs and bots can point at it:

  GET  /standard?fen=FEN            the position and every move, best first
  GET  /standard/mainline?fen=FEN   the best line until mate or the 50-move draw (404 outside the tables)
  POST /standard/batch              many FENs (JSON {"fens":[...]} or one per line), answered in order
  GET  /metrics                     Prometheus: probes, latency per endpoint, cache and transport counters, Go and process
  GET  /healthz                     "ok"

Answers are JSON, or CBOR for Accept: application/cbor; any origin may
fetch them (CORS). Underscores may stand for spaces in FENs. The first
line printed is the URL the server listens on. SIGINT or SIGTERM stops it:
idle connections are closed at once, requests in flight get 5 seconds.

Load is bounded: at most 64 API requests in flight and 4,000 batch
positions in work; beyond that a request is refused with 503 and
Retry-After (a batch first waits up to 2 s). A client has 10 s to read an
answer once it is ready. In a batch each position answers for itself: one
whose table cannot be read gets {"fen", "error", "status"}. A table
location that keeps failing is not asked again for a back-off (circuit
breaker): its positions get 503 with Retry-After at once.

Every request is logged to standard error (log/slog text: method, path,
status, duration, bytes; never headers, query strings or credentials).

Started by systemd socket activation (LISTEN_FDS, see docs/systemd/), the
server takes the socket systemd passes and ignores --listen.`

// shutdownGrace is how long requests in flight may take after a stop signal.
const shutdownGrace = 5 * time.Second

// newServeCmd is "tbprobe serve".
func newServeCmd() *cobra.Command {
	var tf tableFlags
	var listen string
	cmd := &cobra.Command{
		Use:   "serve [flags]",
		Short: "Serve the tables over HTTP as the lichess tablebase API",
		Long:  serveLong,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "tbprobe serve: unexpected argument %q\n", args[0])
				return cli.Exit(2)
			}
			return cli.Exit(runServe(cmd.Context(), &tf, listen, cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
	tf.register(cmd.Flags())
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:9000", "address to listen on (host:port; port 0 picks a free one)")
	return cmd
}

// runServe serves until ctx ends and returns the exit status.
func runServe(ctx context.Context, tf *tableFlags, listen string, stdout, stderr io.Writer) int {
	log := cli.NewLogger(stderr, slog.LevelInfo)
	ts, err := tf.open(ctx)
	if err != nil {
		log.Error("opening tables", "err", err)
		return 1
	}
	defer ts.Close()
	// A server's caches fill and stay full: keep the heap near them.
	tables.SetMemoryLimit(int64(tf.cacheSize) + ts.set.CacheBudget())
	ln, activated, err := serveListener(listen)
	if err != nil {
		log.Error("listening", "err", err)
		return 1
	}
	fmt.Fprintf(stdout, "listening on http://%s\n", ln.Addr())
	log.Info("serving", "addr", ln.Addr().String(), "socket_activated", activated, "tables", ts.set.URLs(), "version", cli.Version())
	// Start-up (package initialisation, the tables opened) is over: the
	// code only it ran need not stay resident (package exepages says why).
	exepages.Release()
	if err := lichess.Serve(ctx, ln, accesslog.Handler(serveHandler(ts), log), shutdownGrace); err != nil {
		log.Error("serving", "err", err)
		return 1
	}
	log.Info("stopped")
	return 0
}

// serveListener is the socket systemd passed (socket activation), or else
// a new one on addr.
func serveListener(addr string) (ln net.Listener, activated bool, err error) {
	lns, err := activation.Listeners()
	if err != nil {
		return nil, false, fmt.Errorf("systemd socket activation: %w", err)
	}
	for _, l := range lns[min(1, len(lns)):] {
		if l != nil {
			l.Close() // one API, one socket: extra ones are not ours
		}
	}
	if len(lns) > 0 && lns[0] != nil {
		return lns[0], true, nil
	}
	ln, err = net.Listen("tcp", addr)
	return ln, false, err
}

// serveHandler is the lichess API over ts with tbprobe's /metrics and
// /healthz beside it, every request counted and timed by endpoint.
func serveHandler(ts *tableSet) http.Handler {
	m := promserve.New("tbprobe", "/standard", "/standard/mainline", "/standard/batch", "/metrics", "/healthz")
	registerTableMetrics(m, ts)
	mux := http.NewServeMux()
	mux.Handle("/", lichess.New(ts.probe, m.ObserveProbe).Handler())
	mux.Handle("GET /metrics", m.Handler())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "ok\n")
	})
	return m.Instrument(mux)
}

// registerTableMetrics exposes the block cache and the sources' counters,
// read at each scrape.
func registerTableMetrics(m *promserve.Metrics, ts *tableSet) {
	stat := func(f func(s metrics.Stats) int64) func() float64 {
		return func() float64 { return float64(f(ts.Stats())) }
	}
	m.Gauge("tbprobe_block_cache_bytes", "Decoded table blocks held in memory.", func() float64 {
		used, _ := ts.tb.CacheStats()
		return float64(used)
	})
	m.Gauge("tbprobe_block_cache_peak_bytes", "Most decoded table block bytes ever held.", func() float64 {
		_, peak := ts.tb.CacheStats()
		return float64(peak)
	})
	for _, c := range []struct {
		name, help string
		v          func(metrics.Stats) int64
	}{
		{"tbprobe_source_cache_hits_total", "Source cache blocks served from memory (remote sources).", func(s metrics.Stats) int64 { return s.Hits }},
		{"tbprobe_source_cache_misses_total", "Source cache blocks fetched from the transport.", func(s metrics.Stats) int64 { return s.Misses }},
		{"tbprobe_source_cache_evictions_total", "Source cache blocks dropped to stay within the budget.", func(s metrics.Stats) int64 { return s.Evictions }},
		{"tbprobe_transport_opens_total", "Objects opened on the transport.", func(s metrics.Stats) int64 { return s.Opens }},
		{"tbprobe_transport_requests_total", "Read requests that reached the transport.", func(s metrics.Stats) int64 { return s.Requests }},
		{"tbprobe_transport_bytes_total", "Bytes the transport returned.", func(s metrics.Stats) int64 { return s.Bytes }},
		{"tbprobe_transport_errors_total", "Failed transport calls (a table that does not exist is an answer, not a failure).", func(s metrics.Stats) int64 { return s.Errors }},
		{"tbprobe_transport_retries_total", "Transport calls repeated after a transient failure.", func(s metrics.Stats) int64 { return s.Retries }},
	} {
		m.Counter(c.name, c.help, stat(c.v))
	}
	breakers := func() (sum breaker.Stats, open int) {
		for _, l := range ts.set {
			b := l.BreakerStats()
			sum.Opens += b.Opens
			sum.Refusals += b.Refusals
			if b.Open {
				open++
			}
		}
		return sum, open
	}
	m.Counter("tbprobe_breaker_opens_total", "Times a table location's circuit breaker opened after repeated failures.", func() float64 {
		b, _ := breakers()
		return float64(b.Opens)
	})
	m.Counter("tbprobe_breaker_refusals_total", "Transport calls refused at once by an open circuit breaker.", func() float64 {
		b, _ := breakers()
		return float64(b.Refusals)
	})
	m.Gauge("tbprobe_breaker_open", "Table locations whose circuit breaker is open now.", func() float64 {
		_, open := breakers()
		return float64(open)
	})
}
