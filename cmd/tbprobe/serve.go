package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"runtime"
	"strings"
	"time"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/format/chesstb"
	"github.com/tbfs/tbfs/render"
	"golang.org/x/sync/errgroup"
)

// serveUsage is printed for serve -h.
const serveUsage = `usage: tbprobe serve [--listen ADDR] [--tables URL]... [--cache-size SIZE] [--plugin-dir DIR]

Serves the tables over HTTP with the lichess tablebase API's shape, so chess
GUIs and bots can point at it:

  GET  /standard?fen=FEN            the position and every move, best first
  GET  /standard/mainline?fen=FEN   the best line to the end (404 outside the tables)
  POST /standard/batch              many FENs (JSON {"fens":[...]} or one per line), answered in order
  GET  /metrics                     Prometheus text: probes, latency, cache and transport counters
  GET  /healthz                     "ok"

Underscores may stand for spaces in FENs. The first line printed is the URL
the server listens on.

`

// Limits that keep one request from occupying the server.
const (
	maxBatchFENs   = 1000
	maxBatchBytes  = 1 << 20
	maxMainline    = 1024 // plies; a DTZ-optimal line never comes close
	requestTimeout = 60 * time.Second
)

// runServe implements "tbprobe serve".
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, serveUsage)
		fs.PrintDefaults()
	}
	var tf tableFlags
	tf.register(fs)
	listen := fs.String("listen", "127.0.0.1:9000", "address to listen on (host:port; port 0 picks a free one)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "tbprobe serve: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	ts, err := tf.open(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "tbprobe serve: %v\n", err)
		return 1
	}
	defer ts.Close()
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintf(stderr, "tbprobe serve: %v\n", err)
		return 1
	}
	srv := &http.Server{
		Handler:           newServer(ts).handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	fmt.Fprintf(stdout, "listening on http://%s\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		fmt.Fprintf(stderr, "tbprobe serve: %v\n", err)
		return 1
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil {
		fmt.Fprintf(stderr, "tbprobe serve: shutdown: %v\n", err)
		return 1
	}
	return 0
}

// server answers the HTTP API from one table set.
type server struct {
	ts *tableSet
	m  *serverMetrics
}

func newServer(ts *tableSet) *server { return &server{ts: ts, m: newServerMetrics()} }

// handler routes the API.
func (s *server) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /standard", s.standard)
	mux.HandleFunc("GET /standard/mainline", s.mainline)
	mux.HandleFunc("POST /standard/batch", s.batch)
	mux.HandleFunc("GET /metrics", s.metrics)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "ok\n")
	})
	return s.m.count(mux)
}

// lichessValues are the fields a /standard answer gives both for the
// position and for the position after each move, in lichess's order.
type lichessValues struct {
	Checkmate            bool            `json:"checkmate"`
	Stalemate            bool            `json:"stalemate"`
	VariantWin           bool            `json:"variant_win"`
	VariantLoss          bool            `json:"variant_loss"`
	InsufficientMaterial bool            `json:"insufficient_material"`
	Category             render.Category `json:"category"`
	DTZ                  *int            `json:"dtz"`
	PreciseDTZ           *int            `json:"precise_dtz"`
	DTM                  *int            `json:"dtm"`
	DTC                  *int            `json:"dtc"`
	DTCPair              *render.DTC     `json:"dtc_pair"`
	DTM50                *int            `json:"dtm50"`
}

// lichessMove is one move of a /standard answer: the values of the position
// after the move, for the side to move there, as lichess gives them.
type lichessMove struct {
	UCI     string `json:"uci"`
	SAN     string `json:"san"`
	Zeroing bool   `json:"zeroing"`
	lichessValues
}

// lichessAnswer is the /standard answer for a position. Category is
// "unknown" and the distances null where no table answers, as on lichess;
// Error says why.
type lichessAnswer struct {
	FEN string `json:"fen"`
	lichessValues
	Moves []lichessMove `json:"moves"`
	Error string        `json:"error,omitempty"`
}

// unknownCategory is lichess's category for a position no table covers.
const unknownCategory render.Category = "unknown"

// newLichessValues gives the lichess fields of a position whose rendered
// values are v. The chesstb DTZ is exact, so precise_dtz always equals dtz.
func newLichessValues(pos *chess.Position, checkmate, stalemate bool, v *render.Values) lichessValues {
	lv := lichessValues{
		Checkmate: checkmate, Stalemate: stalemate, InsufficientMaterial: pos.InsufficientMaterial(),
		Category: v.Category, DTZ: v.DTZ, PreciseDTZ: v.DTZ, DTM: v.DTM, DTM50: v.DTM50,
	}
	if lv.Category == "" {
		lv.Category = unknownCategory
	}
	if v.DTC != nil {
		plies := v.DTC.Plies
		lv.DTC, lv.DTCPair = &plies, v.DTC
	}
	return lv
}

// answer probes one position with its moves. The moves are in
// render.Collect's order: the prober's DTZ root ranking with the 50-move
// rule at the FEN's clock, the natural order for a lichess-shaped answer,
// as lichess orders its moves by DTZ. (The mainline ignores the rule; see
// mainline.) A position outside the tables
// is an answer (category unknown, Error set); an error return means the
// tables could not be read.
func (s *server) answer(ctx context.Context, pos *chess.Position) (*lichessAnswer, error) {
	start := time.Now()
	rep, err := render.Collect(ctx, s.ts.tb, pos, true)
	s.m.observe(time.Since(start), rep, err)
	if err != nil {
		return nil, err
	}
	a := &lichessAnswer{
		FEN:           rep.FEN,
		lichessValues: newLichessValues(pos, rep.Checkmate, rep.Stalemate, &rep.Values),
		Error:         rep.Error,
		Moves:         make([]lichessMove, 0, len(rep.Moves)),
	}
	for _, rm := range rep.Moves {
		m, err := pos.ParseMove(rm.UCI)
		if err != nil {
			return nil, fmt.Errorf("move %s listed but not legal: %w", rm.UCI, err)
		}
		child := pos.Play(m)
		lm := lichessMove{
			UCI: rm.UCI, SAN: rm.SAN, Zeroing: pos.IsZeroing(m),
			lichessValues: newLichessValues(&child, child.IsCheckmate(), child.IsStalemate(), &rm.Values),
		}
		a.Moves = append(a.Moves, lm)
	}
	return a, nil
}

// parseFENParam reads the fen query parameter, '_' standing for spaces.
func parseFENParam(r *http.Request) (chess.Position, error) {
	fen := r.URL.Query().Get("fen")
	if fen == "" {
		return chess.Position{}, errors.New("missing fen parameter")
	}
	return chess.ParseFEN(fen)
}

func (s *server) standard(w http.ResponseWriter, r *http.Request) {
	pos, err := parseFENParam(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	a, err := s.answer(ctx, &pos)
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, err)
		return
	}
	writeJSON(w, http.StatusOK, a)
}

// mainlineStep is one move of the mainline, lichess's shape.
type mainlineStep struct {
	UCI        string `json:"uci"`
	SAN        string `json:"san"`
	DTZ        int    `json:"dtz"`
	PreciseDTZ int    `json:"precise_dtz"`
}

// mainlineAnswer is lichess's /standard/mainline answer.
type mainlineAnswer struct {
	Mainline   []mainlineStep `json:"mainline"`
	Winner     *string        `json:"winner"`
	DTZ        int            `json:"dtz"`
	PreciseDTZ int            `json:"precise_dtz"`
}

// mainline follows the DTZ-optimal move (Fathom's root ranking, the one the
// engines use, priced on DTC's line where a material has DTC) until the
// game ends in checkmate. The 50-move rule is ignored, as lichess does.
// Each step's dtz is the value after the move, for the side to move then.
func (s *server) mainline(w http.ResponseWriter, r *http.Request) {
	pos, err := parseFENParam(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	start := time.Now()
	res, err := s.ts.tb.Probe(ctx, &pos)
	s.m.observeProbe(time.Since(start), err)
	if err != nil {
		if outsideTables(err) {
			writeError(w, http.StatusNotFound, err)
		} else {
			writeError(w, http.StatusServiceUnavailable, err)
		}
		return
	}
	ans := mainlineAnswer{Mainline: []mainlineStep{}, DTZ: res.DTZ, PreciseDTZ: res.DTZ}
	if res.WDL == 0 {
		writeJSON(w, http.StatusOK, ans)
		return
	}
	winner := "w"
	if (res.WDL > 0) != (pos.SideToMove() == chess.White) {
		winner = "b"
	}
	ans.Winner = &winner
	cur := pos
	for len(ans.Mainline) < maxMainline && !cur.IsCheckmate() {
		// The line ignores the 50-move rule, as DTZ does: ranking at clock
		// 0 keeps every step in Fathom's clean bands, where a clock past
		// the limit would fold wins and losses together.
		cur.SetHalfmoveClock(0)
		moves, err := s.ts.tb.RankMoves(ctx, &cur, chesstb.RankOptions{Ranker: chesstb.RankDTZ})
		if err != nil {
			writeError(w, http.StatusServiceUnavailable, fmt.Errorf("mainline at %s: %w", cur.FEN(), err))
			return
		}
		if len(moves) == 0 || moves[0].Category == chesstb.Draw {
			break
		}
		best := moves[0]
		ans.Mainline = append(ans.Mainline, mainlineStep{
			UCI: best.Move.UCI(), SAN: cur.SAN(best.Move), DTZ: best.After.DTZ, PreciseDTZ: best.After.DTZ,
		})
		cur = cur.Play(best.Move)
	}
	if !cur.IsCheckmate() {
		writeError(w, http.StatusServiceUnavailable, fmt.Errorf("mainline from %s did not reach mate within %d plies", pos.FEN(), maxMainline))
		return
	}
	writeJSON(w, http.StatusOK, ans)
}

// batchRequest is the JSON form of a batch.
type batchRequest struct {
	FENs []string `json:"fens"`
}

// batchEntry is one answer of a batch: the lichess answer, or the FEN and
// why it has none.
type batchEntry struct {
	*lichessAnswer
	FEN   string `json:"fen,omitempty"`
	Error string `json:"error,omitempty"`
}

// MarshalJSON writes the answer when there is one, else fen and error.
func (e batchEntry) MarshalJSON() ([]byte, error) {
	if e.lichessAnswer != nil {
		return json.Marshal(e.lichessAnswer)
	}
	return json.Marshal(struct {
		FEN   string `json:"fen"`
		Error string `json:"error"`
	}{e.FEN, e.Error})
}

// batch answers many FENs in order. A bad FEN gets an entry with its error,
// not a failed request; a transport failure fails the request.
func (s *server) batch(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBatchBytes+1))
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Errorf("reading the body: %w", err))
		return
	}
	if len(body) > maxBatchBytes {
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Errorf("body over %d bytes", maxBatchBytes))
		return
	}
	var fens []string
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct == "application/json" {
		var req batchRequest
		dec := json.NewDecoder(strings.NewReader(string(body)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			writeError(w, http.StatusBadRequest, fmt.Errorf("body: want {\"fens\": [...]}: %w", err))
			return
		}
		fens = req.FENs
	} else {
		sc := bufio.NewScanner(strings.NewReader(string(body)))
		sc.Buffer(make([]byte, 4096), maxBatchBytes)
		for sc.Scan() {
			if line := strings.TrimSpace(sc.Text()); line != "" {
				fens = append(fens, line)
			}
		}
	}
	if len(fens) == 0 {
		writeError(w, http.StatusBadRequest, errors.New("no FENs in the body"))
		return
	}
	if len(fens) > maxBatchFENs {
		writeError(w, http.StatusBadRequest, fmt.Errorf("%d FENs, at most %d per batch", len(fens), maxBatchFENs))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	// The positions are probed on every core at once, so a batch whose
	// positions need different blocks decodes them side by side; each
	// answer goes to its own slot, which keeps the input order.
	out := make([]batchEntry, len(fens))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, fen := range fens {
		g.Go(func() error {
			pos, err := chess.ParseFEN(fen)
			if err != nil {
				out[i] = batchEntry{FEN: fen, Error: err.Error()}
				return nil
			}
			a, err := s.answer(gctx, &pos)
			if err != nil {
				return fmt.Errorf("%s: %w", fen, err)
			}
			out[i] = batchEntry{lichessAnswer: a}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		writeError(w, http.StatusServiceUnavailable, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *server) metrics(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	s.m.write(w, s.ts)
}

// outsideTables reports whether a probe error says the position has no
// answer in these tables (no table, outside their domain, not derivable)
// rather than that the tables could not be read.
func outsideTables(err error) bool {
	if errors.Is(err, chesstb.ErrCorrupt) || errors.Is(err, chesstb.ErrClosed) {
		return false
	}
	return errors.Is(err, chesstb.ErrNoTable) || errors.Is(err, chesstb.ErrBadPosition) ||
		errors.Is(err, chesstb.ErrUnsupported) || errors.Is(err, chesstb.ErrUnresolved)
}

// writeJSON sends v as the response.
func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(append(b, '\n'))
}

// writeError sends {"error": "..."} with the status code.
func writeError(w http.ResponseWriter, code int, err error) {
	b, _ := json.Marshal(struct {
		Error string `json:"error"`
	}{err.Error()})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(append(b, '\n'))
}
