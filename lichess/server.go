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
	"sync/atomic"
	"time"

	"github.com/fxamacker/cbor/v2"
	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/source"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/semaphore"
)

// Limits that keep one request from occupying the server.
const (
	// MaxBatchFENs is the most positions one batch may hold.
	MaxBatchFENs  = 1000
	maxBatchBytes = 1 << 20
	// maxMainline bounds a line in plies; the 50-move rule ends a line
	// without a zeroing move after 100, and there are few zeroing moves.
	maxMainline = 1024
)

// Limits bound what the server holds at once, so abuse (many concurrent
// batches, clients that never read their answers) meets a refusal, not an
// ever larger heap. The zero value of each field means its default.
type Limits struct {
	// Requests is how many API requests may be in flight at once; more
	// are refused with 503 and Retry-After. Default DefaultRequests.
	Requests int
	// BatchPositions is how many positions of batches may be in work at
	// once, summed over every batch in flight; a batch that would pass it
	// is refused with 503 and Retry-After. Default DefaultBatchPositions.
	BatchPositions int
	// QueueWait is how long a batch may wait for batch work to free up
	// before it is refused. Default DefaultQueueWait.
	QueueWait time.Duration
	// WriteTimeout is how long a client has to take one answer once it
	// is ready; a slower reader's connection is closed, releasing the
	// answer. Default DefaultWriteTimeout.
	WriteTimeout time.Duration
	// RequestTimeout bounds the probing one request may do: a single
	// position not answered by then fails, and the positions of a batch
	// still unanswered get an error entry each. Default
	// DefaultRequestTimeout.
	RequestTimeout time.Duration
}

// Defaults of Limits. A batch's answers take some kilobytes per position
// in memory, so DefaultBatchPositions bounds batch work to tens of MiB; a
// request in flight holds at most one body (maxBatchBytes) while reading it.
const (
	DefaultRequests       = 64
	DefaultBatchPositions = 4 * MaxBatchFENs
	DefaultWriteTimeout   = 10 * time.Second
	DefaultQueueWait      = 2 * time.Second
	DefaultRequestTimeout = 60 * time.Second
)

// retryAfterBusy is the Retry-After, in seconds, of a refusal for load.
const retryAfterBusy = "1"

// Observer is told how each probe of a request went, for metrics: its
// duration, whether the position was outside the tables, and the error
// when the tables could not be read.
type Observer func(d time.Duration, outside bool, err error)

// Server answers the API from one prober.
type Server struct {
	p         Prober
	observe   Observer
	limits    Limits
	requests  chan struct{}       // a token per request in flight
	batchWork *semaphore.Weighted // a unit per batch position in work
	computed  atomic.Int64        // /{variant} answers computed, for /monitor
}

// New returns a server over p with the default Limits; observe may be nil.
func New(p Prober, observe Observer) *Server { return NewLimited(p, observe, Limits{}) }

// NewLimited is New with explicit limits.
func NewLimited(p Prober, observe Observer, l Limits) *Server {
	if observe == nil {
		observe = func(time.Duration, bool, error) {}
	}
	if l.Requests <= 0 {
		l.Requests = DefaultRequests
	}
	if l.BatchPositions <= 0 {
		l.BatchPositions = DefaultBatchPositions
	}
	l.BatchPositions = max(l.BatchPositions, MaxBatchFENs)
	if l.WriteTimeout <= 0 {
		l.WriteTimeout = DefaultWriteTimeout
	}
	if l.QueueWait <= 0 {
		l.QueueWait = DefaultQueueWait
	}
	if l.RequestTimeout <= 0 {
		l.RequestTimeout = DefaultRequestTimeout
	}
	return &Server{p: p, observe: observe, limits: l,
		requests: make(chan struct{}, l.Requests), batchWork: semaphore.NewWeighted(int64(l.BatchPositions))}
}

// busy refuses a request for load: 503 with Retry-After.
func busy(w http.ResponseWriter, r *http.Request, why string) {
	w.Header().Set("Retry-After", retryAfterBusy)
	replyError(w, r, http.StatusServiceUnavailable, errors.New("server busy: "+why+"; try again later"))
}

// limited admits a request when a slot is free, else refuses it at once.
func (s *Server) limited(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		select {
		case s.requests <- struct{}{}:
		default:
			busy(w, r, fmt.Sprintf("%d requests in flight", cap(s.requests)))
			return
		}
		defer func() { <-s.requests }()
		// A client has WriteTimeout to take the answer once it is ready
		// (see reply); until then the request timeout bounds the work.
		http.NewResponseController(w).SetWriteDeadline(time.Now().Add(s.limits.RequestTimeout + s.limits.WriteTimeout))
		h(w, r.WithContext(context.WithValue(r.Context(), writeTimeoutKey{}, s.limits.WriteTimeout)))
	}
}

// writeTimeoutKey carries the server's WriteTimeout to reply.
type writeTimeoutKey struct{}

// Handler routes the API as lila-tablebase's router does: GET
// /{variant} and /{variant}/mainline for standard, atomic and antichess
// (any other variant is a 400), GET /monitor, and our POST
// /standard/batch, with OPTIONS on each for CORS preflight. Every answer
// carries Access-Control-Allow-Origin: *, as the lichess web UI fetches
// the tablebase cross-origin.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /monitor", s.monitor)
	mux.HandleFunc("GET /{variant}", s.limited(s.variant(s.standard, s.unknownVariant)))
	mux.HandleFunc("GET /{variant}/mainline", s.limited(s.variant(s.mainline, s.unknownVariantMainline)))
	mux.HandleFunc("POST /standard/batch", s.limited(s.batch))
	for _, p := range []string{"/{variant}", "/{variant}/mainline", "/standard/batch"} {
		mux.HandleFunc("OPTIONS "+p, preflight)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Add("Vary", "Accept")
		mux.ServeHTTP(w, r)
	})
}

// variant routes a request by its {variant} path segment: standard to
// standard, atomic and antichess to other, anything else a 400 with
// lila's (axum's) message.
func (s *Server) variant(standard, other http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		switch v := r.PathValue("variant"); v {
		case "standard":
			standard(w, r)
		case "atomic", "antichess":
			other(w, r)
		default:
			replyError(w, r, http.StatusBadRequest, fmt.Errorf("Invalid URL: unknown variant `%s`, expected one of `standard`, `atomic`, `antichess`", v))
		}
	}
}

// unknownVariant answers /atomic and /antichess. No tables of those
// variants are read here, nor their rules: every position is unknown, as
// lila answers a position its variant tables do not hold, and its moves
// are not listed. The FEN must be well-formed; a position standard chess
// refuses may be one the variant allows.
func (s *Server) unknownVariant(w http.ResponseWriter, r *http.Request) {
	fen, err := parseVariantQuery(r)
	if err != nil {
		replyError(w, r, http.StatusBadRequest, err)
		return
	}
	s.computed.Add(1)
	reply(w, r, http.StatusOK, &Answer{FEN: fen, Position: Position{Category: Unknown}, Moves: []Move{},
		Error: "no " + r.PathValue("variant") + " tables are served"})
}

// unknownVariantMainline answers /atomic/mainline and
// /antichess/mainline: no table holds the position (404, lila's
// MissingTable).
func (s *Server) unknownVariantMainline(w http.ResponseWriter, r *http.Request) {
	if _, err := parseVariantQuery(r); err != nil {
		replyError(w, r, http.StatusBadRequest, err)
		return
	}
	replyError(w, r, http.StatusNotFound, fmt.Errorf("%w: no %s tables are served", errOutside, r.PathValue("variant")))
}

// monitor is lila's GET /monitor, its two counters in its InfluxDB line
// form (text/plain): answers cached, none here, and answers computed for
// /{variant} requests.
func (s *Server) monitor(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintf(w, "tablebase cache=0u,cache_miss=%du", s.computed.Load())
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
	if d, ok := r.Context().Value(writeTimeoutKey{}).(time.Duration); ok {
		// A client that does not read its answer within d loses the
		// connection, and the server the answer's memory.
		http.NewResponseController(w).SetWriteDeadline(time.Now().Add(d))
	}
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

// replyFailure answers a failure to read the tables with failureCode's
// status, and a Retry-After when the failure names one (a table server's
// own, or an open circuit breaker's).
func replyFailure(w http.ResponseWriter, r *http.Request, err error) {
	if d, ok := source.RetryAfter(err); ok {
		w.Header().Set("Retry-After", strconv.FormatInt(int64(max(d.Round(time.Second), time.Second)/time.Second), 10))
	}
	replyError(w, r, failureCode(err), err)
}

// failureCode is the status for a failure to read the tables: 503 when
// trying again may help (a transport hiccup, a timeout, a table server
// not being asked for a while), else 500.
func failureCode(err error) int {
	if errors.Is(err, context.DeadlineExceeded) || isTransient(err) || errors.Is(err, source.ErrUnavailable) ||
		errors.Is(err, source.ErrChanged) { // the next try opens the new version
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// parseQuery reads a position query as lila does: fen (required, read as
// lila reads it, see chess.ParseFENLenient) and dtc (never, auxiliary or
// always; accepted and ignored, as there are no op1 tables here). Other
// parameters are ignored, as lila ignores them; a repeated fen or dtc is
// an error.
func parseQuery(r *http.Request) (chess.Position, error) {
	fen, err := queryFEN(r)
	if err != nil {
		return chess.Position{}, err
	}
	return chess.ParseFENLenient(fen)
}

// parseVariantQuery is parseQuery for a variant whose rules are not known
// here: the FEN must be well-formed, but a position standard chess
// refuses is not an error. It returns the FEN as given.
func parseVariantQuery(r *http.Request) (string, error) {
	fen, err := queryFEN(r)
	if err != nil {
		return "", err
	}
	if _, err := chess.ParseFENLenient(fen); errors.Is(err, chess.ErrBadFEN) {
		return "", err
	}
	return fen, nil
}

// queryFEN checks a position query's parameters and returns its FEN.
func queryFEN(r *http.Request) (string, error) {
	q := r.URL.Query()
	for _, k := range []string{"fen", "dtc"} {
		if len(q[k]) > 1 {
			return "", fmt.Errorf("%s given %d times", k, len(q[k]))
		}
	}
	switch d := q.Get("dtc"); d {
	case "", "never", "auxiliary", "always":
	default:
		return "", fmt.Errorf("dtc=%q: want never, auxiliary or always", d)
	}
	fen := q.Get("fen")
	if fen == "" {
		return "", errors.New("missing fen parameter")
	}
	return fen, nil
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
		s.computed.Add(1)
		a, err := s.answer(ctx, pos)
		if err != nil {
			replyFailure(w, r, err)
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
	ctx, cancel := context.WithTimeout(r.Context(), s.limits.RequestTimeout)
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
	// Status is, for a position whose tables could not be read, the
	// status a single request for it would have had (503 or 500); zero
	// for a bad FEN.
	Status int `json:"status,omitempty"`
}

// failedEntry is the wire form of an entry without an answer.
type failedEntry struct {
	FEN    string `json:"fen"`
	Error  string `json:"error"`
	Status int    `json:"status,omitempty"`
}

// MarshalJSON writes the answer when there is one, else fen and error
// (and the status of a table failure).
func (e batchEntry) MarshalJSON() ([]byte, error) {
	if e.Answer != nil {
		return json.Marshal(e.Answer)
	}
	return json.Marshal(failedEntry{e.FEN, e.Error, e.Status})
}

// MarshalCBOR is MarshalJSON's CBOR twin.
func (e batchEntry) MarshalCBOR() ([]byte, error) {
	if e.Answer != nil {
		return cbor.Marshal(e.Answer)
	}
	return cbor.Marshal(failedEntry{e.FEN, e.Error, e.Status})
}

// batch answers many FENs (JSON {"fens": [...]} or one per line) in order.
// Each position answers for itself: a bad FEN, or one whose table cannot be
// read (a corrupt table, a failing transport), gets an entry with its error,
// and the others their answers. Only when every position failed to read
// its tables does the request fail as a whole, as a single position would.
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
	// A batch waits a little for work units (it holds a request slot
	// meanwhile, so the wait is bounded too), then is refused.
	qctx, qcancel := context.WithTimeout(r.Context(), s.limits.QueueWait)
	err = s.batchWork.Acquire(qctx, int64(len(fens)))
	qcancel()
	if err != nil {
		busy(w, r, fmt.Sprintf("%d batch positions in work", s.limits.BatchPositions))
		return
	}
	// The work units are given back once the answers are in, before they
	// are written: a client slow to read holds its request slot (bounded
	// by the write deadline), not other batches' work.
	released := false
	release := func() {
		if !released {
			released = true
			s.batchWork.Release(int64(len(fens)))
		}
	}
	defer release()
	ctx, cancel := context.WithTimeout(r.Context(), s.limits.RequestTimeout)
	defer cancel()
	// The positions are probed on every core at once; each answer goes to
	// its own slot, which keeps the input order.
	out := make([]batchEntry, len(fens))
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	var failed atomic.Int64
	var lastErr atomic.Value
	for i, fen := range fens {
		g.Go(func() error {
			pos, err := chess.ParseFENLenient(fen)
			if err != nil {
				out[i] = batchEntry{FEN: fen, Error: err.Error()}
				return nil
			}
			a, err := s.answer(ctx, &pos)
			if err != nil {
				failed.Add(1)
				lastErr.Store(fmt.Errorf("%s: %w", fen, err))
				out[i] = batchEntry{FEN: fen, Error: err.Error(), Status: failureCode(err)}
				return nil
			}
			out[i] = batchEntry{Answer: a}
			return nil
		})
	}
	g.Wait()
	release()
	if n := failed.Load(); n > 0 && n == int64(len(fens)) {
		replyFailure(w, r, lastErr.Load().(error))
		return
	}
	reply(w, r, http.StatusOK, out)
}
