// Package lichess serves chess tables over HTTP the way lila-tablebase,
// lichess's tablebase server, does, so lichess clients (its web analysis
// board, lichess-bot, GUIs) can point at it: the same routes, keys,
// categories, DTZ50″ convention, move order, status codes, CORS and CBOR.
// Our own values (chesstb's exact DTZ and DTC, DTM50) travel under keys of
// their own, and POST /standard/batch is our addition.
package lichess

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/fxamacker/cbor/v2"
	"github.com/tbfs/tbfs/chess"
	"golang.org/x/sync/errgroup"
)

// Limits that keep one request from occupying the server.
const (
	// MaxBatchFENs is the most positions one batch may hold.
	MaxBatchFENs  = 1000
	maxBatchBytes = 1 << 20
	// maxMainline bounds a line in plies; the 50-move rule ends a line
	// without a zeroing move after 100, and there are few zeroing moves.
	maxMainline    = 1024
	requestTimeout = 60 * time.Second
)

// Observer is told how each probe of a request went, for metrics: its
// duration, whether the position was outside the tables, and the error
// when the tables could not be read.
type Observer func(d time.Duration, outside bool, err error)

// Server answers the API from one prober.
type Server struct {
	p       Prober
	observe Observer
}

// New returns a server over p; observe may be nil.
func New(p Prober, observe Observer) *Server {
	if observe == nil {
		observe = func(time.Duration, bool, error) {}
	}
	return &Server{p: p, observe: observe}
}

// Handler routes the API: GET /standard, GET /standard/mainline, POST
// /standard/batch, and OPTIONS on each for CORS preflight. Every answer
// carries Access-Control-Allow-Origin: *, as the lichess web UI fetches
// the tablebase cross-origin.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /standard", s.standard)
	mux.HandleFunc("GET /standard/mainline", s.mainline)
	mux.HandleFunc("POST /standard/batch", s.batch)
	for _, p := range []string{"/standard", "/standard/mainline", "/standard/batch"} {
		mux.HandleFunc("OPTIONS "+p, preflight)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Add("Vary", "Accept")
		mux.ServeHTTP(w, r)
	})
}

// preflight answers a CORS preflight: any origin, the API's methods, and
// whatever request headers the browser asks for (Accept, Content-Type).
func preflight(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
	if req := r.Header.Get("Access-Control-Request-Headers"); req != "" {
		h.Set("Access-Control-Allow-Headers", req)
	}
	h.Set("Access-Control-Max-Age", "86400")
	w.WriteHeader(http.StatusNoContent)
}

// encoding is the body format a client accepts.
type encoding int

const (
	encJSON encoding = iota
	encCBOR
)

// negotiate reads the Accept header: CBOR when the client prefers
// application/cbor, JSON for application/json, application/*, */* or no
// header; ok is false when it accepts neither (406).
func negotiate(r *http.Request) (enc encoding, ok bool) {
	accept := r.Header.Values("Accept")
	if len(accept) == 0 {
		return encJSON, true
	}
	bestQ := -1.0
	for _, part := range strings.Split(strings.Join(accept, ","), ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		mt, params, err := mime.ParseMediaType(part)
		if err != nil {
			continue
		}
		q := 1.0
		if s, ok := params["q"]; ok {
			if q, err = strconv.ParseFloat(s, 64); err != nil {
				continue
			}
		}
		var e encoding
		switch mt {
		case "application/cbor":
			e = encCBOR
		case "application/json", "application/*", "*/*":
			e = encJSON
		default:
			continue
		}
		if q > 0 && q > bestQ {
			enc, bestQ = e, q
		}
	}
	return enc, bestQ > 0
}

// reply writes v with the status code in the negotiated encoding.
func reply(w http.ResponseWriter, r *http.Request, code int, v any) {
	enc, ok := negotiate(r)
	if !ok {
		enc, code = encJSON, http.StatusNotAcceptable
		v = errorBody{fmt.Sprintf("Accept %q: this server answers application/json or application/cbor", r.Header.Get("Accept"))}
	}
	var b []byte
	var err error
	ctype := "application/json"
	if enc == encCBOR {
		ctype = "application/cbor"
		b, err = cbor.Marshal(v)
	} else {
		b, err = json.Marshal(v)
		b = append(b, '\n')
	}
	if err != nil {
		code, ctype = http.StatusInternalServerError, "application/json"
		b, _ = json.Marshal(errorBody{err.Error()})
	}
	w.Header().Set("Content-Type", ctype)
	w.WriteHeader(code)
	w.Write(b)
}

// errorBody is the body of every error answer. lila sends the message as
// plain text; ours is {"error": "..."} (JSON or CBOR as negotiated), which
// the seed API defined and scripts read.
type errorBody struct {
	Error string `json:"error"`
}

func replyError(w http.ResponseWriter, r *http.Request, code int, err error) {
	reply(w, r, code, errorBody{err.Error()})
}

// failureCode is the status for a failure to read the tables: 503 when
// trying again may help (a transport hiccup, a timeout), else 500.
func failureCode(err error) int {
	if errors.Is(err, context.DeadlineExceeded) || isTransient(err) {
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// parseQuery reads a position query as lila does: fen (required, '_' may
// stand for spaces) and dtc (never, auxiliary or always; accepted and
// ignored, as there are no op1 tables here). Other parameters are
// ignored, as lila ignores them; a repeated fen or dtc is an error.
func parseQuery(r *http.Request) (chess.Position, error) {
	q := r.URL.Query()
	for _, k := range []string{"fen", "dtc"} {
		if len(q[k]) > 1 {
			return chess.Position{}, fmt.Errorf("%s given %d times", k, len(q[k]))
		}
	}
	switch d := q.Get("dtc"); d {
	case "", "never", "auxiliary", "always":
	default:
		return chess.Position{}, fmt.Errorf("dtc=%q: want never, auxiliary or always", d)
	}
	fen := q.Get("fen")
	if fen == "" {
		return chess.Position{}, errors.New("missing fen parameter")
	}
	return chess.ParseFEN(fen)
}

// answer builds one position's answer, telling the observer.
func (s *Server) answer(ctx context.Context, pos *chess.Position) (*Answer, error) {
	start := time.Now()
	a, err := Build(ctx, s.p, pos)
	s.observe(time.Since(start), err == nil && a.Error != "", err)
	return a, err
}

func (s *Server) standard(w http.ResponseWriter, r *http.Request) {
	s.withPosition(w, r, func(ctx context.Context, pos *chess.Position) {
		a, err := s.answer(ctx, pos)
		if err != nil {
			replyError(w, r, failureCode(err), err)
			return
		}
		reply(w, r, http.StatusOK, a)
	})
}

// withPosition parses the request's position query (400 when it is bad)
// and runs f with it under the request timeout.
func (s *Server) withPosition(w http.ResponseWriter, r *http.Request, f func(ctx context.Context, pos *chess.Position)) {
	pos, err := parseQuery(r)
	if err != nil {
		replyError(w, r, http.StatusBadRequest, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	f(ctx, &pos)
}

// batchRequest is the JSON form of a batch.
type batchRequest struct {
	FENs []string `json:"fens"`
}

// batchEntry is one answer of a batch: the answer, or the FEN and why it
// has none.
type batchEntry struct {
	*Answer
	FEN   string `json:"fen,omitempty"`
	Error string `json:"error,omitempty"`
}

// MarshalJSON writes the answer when there is one, else fen and error.
func (e batchEntry) MarshalJSON() ([]byte, error) {
	if e.Answer != nil {
		return json.Marshal(e.Answer)
	}
	return json.Marshal(struct {
		FEN   string `json:"fen"`
		Error string `json:"error"`
	}{e.FEN, e.Error})
}

// MarshalCBOR is MarshalJSON's CBOR twin.
func (e batchEntry) MarshalCBOR() ([]byte, error) {
	if e.Answer != nil {
		return cbor.Marshal(e.Answer)
	}
	return cbor.Marshal(struct {
		FEN   string `json:"fen"`
		Error string `json:"error"`
	}{e.FEN, e.Error})
}

// batch answers many FENs (JSON {"fens": [...]} or one per line) in order.
// A bad FEN gets an entry with its error, not a failed request; a failure
// to read the tables fails the request.
func (s *Server) batch(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBatchBytes+1))
	if err != nil {
		replyError(w, r, http.StatusBadRequest, fmt.Errorf("reading the body: %w", err))
		return
	}
	if len(body) > maxBatchBytes {
		replyError(w, r, http.StatusRequestEntityTooLarge, fmt.Errorf("body over %d bytes", maxBatchBytes))
		return
	}
	var fens []string
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct == "application/json" {
		var req batchRequest
		dec := json.NewDecoder(strings.NewReader(string(body)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			replyError(w, r, http.StatusBadRequest, fmt.Errorf("body: want {\"fens\": [...]}: %w", err))
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
		replyError(w, r, http.StatusBadRequest, errors.New("no FENs in the body"))
		return
	}
	if len(fens) > MaxBatchFENs {
		replyError(w, r, http.StatusBadRequest, fmt.Errorf("%d FENs, at most %d per batch", len(fens), MaxBatchFENs))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	// The positions are probed on every core at once; each answer goes to
	// its own slot, which keeps the input order.
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
			out[i] = batchEntry{Answer: a}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		replyError(w, r, failureCode(err), err)
		return
	}
	reply(w, r, http.StatusOK, out)
}
