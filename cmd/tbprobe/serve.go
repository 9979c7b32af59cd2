package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/tbfs/tbfs/internal/cli"
	"github.com/tbfs/tbfs/lichess"
)

// serveLong is serve's help text.
const serveLong = `Serves the tables over HTTP as lichess's tablebase server (lila-tablebase)
does, so lichess clients, chess GUIs and bots can point at it:

  GET  /standard?fen=FEN            the position and every move, best first
  GET  /standard/mainline?fen=FEN   the best line until mate or the 50-move draw (404 outside the tables)
  POST /standard/batch              many FENs (JSON {"fens":[...]} or one per line), answered in order
  GET  /metrics                     Prometheus text: probes, latency, cache and transport counters
  GET  /healthz                     "ok"

Answers are JSON, or CBOR for Accept: application/cbor; any origin may
fetch them (CORS). Underscores may stand for spaces in FENs. The first
line printed is the URL the server listens on. SIGINT or SIGTERM stops it:
idle connections are closed at once, requests in flight get 5 seconds.`

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
	ts, err := tf.open(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "tbprobe serve: %v\n", err)
		return 1
	}
	defer ts.Close()
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		fmt.Fprintf(stderr, "tbprobe serve: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "listening on http://%s\n", ln.Addr())
	if err := lichess.Serve(ctx, ln, serveHandler(ts), shutdownGrace); err != nil {
		fmt.Fprintf(stderr, "tbprobe serve: %v\n", err)
		return 1
	}
	return 0
}

// serveHandler is the lichess API over ts with tbprobe's /metrics and
// /healthz beside it, every request counted.
func serveHandler(ts *tableSet) http.Handler {
	m := newServerMetrics()
	mux := http.NewServeMux()
	mux.Handle("/", lichess.New(ts.tb, m.observe).Handler())
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		m.write(w, ts)
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "ok\n")
	})
	return m.count(mux)
}
