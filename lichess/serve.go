package lichess

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// Serve serves h on ln until ctx is done, then shuts down gracefully:
// connections with no request in flight (idle keep-alive ones, and new
// ones whose first request has not arrived) are closed at once, requests
// in flight get grace to finish, and what is left after that is closed.
// A shutdown is not an error: Serve returns nil then, and an error when
// serving failed or a request outlasted the grace and was cut off. (net/http's Shutdown alone waits up to five
// seconds for a new connection to send its first request, which outlasts
// any short grace and made a plain SIGTERM look like a failure.)
func Serve(ctx context.Context, ln net.Listener, h http.Handler, grace time.Duration) error {
	var mu sync.Mutex
	quiet := map[net.Conn]bool{} // connections with no request in flight
	stopping := false
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		// A backstop: API requests set their own write deadlines (see
		// Limits.WriteTimeout), everything else must be written by then.
		WriteTimeout: 2 * DefaultRequestTimeout,
		IdleTimeout:  2 * time.Minute,
		// In-flight requests keep their context through the grace period.
		BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
		ConnState: func(c net.Conn, st http.ConnState) {
			mu.Lock()
			defer mu.Unlock()
			switch st {
			case http.StateNew, http.StateIdle:
				if stopping {
					c.Close()
					return
				}
				quiet[c] = true
			default:
				delete(quiet, c)
			}
		},
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	srv.SetKeepAlivesEnabled(false)
	mu.Lock()
	stopping = true
	for c := range quiet {
		c.Close()
	}
	mu.Unlock()
	shut, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	err := srv.Shutdown(shut)
	if errors.Is(err, context.DeadlineExceeded) {
		srv.Close()
		err = fmt.Errorf("shutdown: requests still in flight after %v were cut off", grace)
	}
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}
