// Package accesslog writes one structured log line per HTTP request
// through log/slog: method, path, status, duration, bytes written and the
// client's address. Headers, bodies, the query string and any credentials
// in the request URL are never logged, so the log holds no secret a client
// sent.
package accesslog

import (
	"log/slog"
	"net/http"
	"time"
)

// Handler wraps h to log every request it answers on log, at Info.
func Handler(h http.Handler, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rw := &recorder{ResponseWriter: w}
		h.ServeHTTP(rw, r)
		if rw.status == 0 {
			rw.status = http.StatusOK
		}
		log.LogAttrs(r.Context(), slog.LevelInfo, "request",
			slog.String("method", r.Method),
			slog.String("path", r.URL.Path),
			slog.Int("status", rw.status),
			slog.Duration("duration", time.Since(start)),
			slog.Int64("bytes", rw.bytes),
			slog.String("remote", r.RemoteAddr),
		)
	})
}

// recorder notes the status and the body bytes a handler wrote.
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(p)
	r.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the connection's writer
// (Flush, deadlines).
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
