// Package breaker makes a failing source fail fast. Without it, every probe
// against a dead mirror pays the whole price again: a table open retried
// four times against a server answering 500, or a full request timeout per
// position against one that hangs. A breaker is a source that wraps a
// source and watches its transient failures: after a run of them (or one
// timeout, or one answer carrying Retry-After) it opens, and every call
// fails at once with source.ErrUnavailable until a back-off ends; then one
// call is let through as a probe (half-open), which closes the breaker when
// it succeeds and reopens it, for twice as long, when it fails. A refusal
// matches source.ErrTransient (a transport failure that may pass) but not
// source.IsRetryable, so the retry wrapper above gives up at once.
//
// sony/gobreaker has the same three states, but its open period is one
// fixed Timeout and its trip decision sees only counts, while this one must
// open for as long as the server's Retry-After says, back off
// exponentially across failed probes, and trip at once on a timeout (which
// already cost a whole request's budget). Those are most of the logic, so
// the package has its own small state machine.
package breaker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tbfs/tbfs/source"
)

// Defaults for Options' zero fields.
const (
	DefaultFailures   = 3
	DefaultBackoff    = time.Second
	DefaultMaxBackoff = time.Minute
)

// Options tune a breaker; the zero value uses the defaults.
type Options struct {
	// Failures is how many transient failures in a row open the breaker.
	// Zero means DefaultFailures. A timeout, or an answer that names a
	// Retry-After, opens it at once.
	Failures int
	// Backoff is how long the breaker stays open the first time; each
	// failed probe doubles it, up to MaxBackoff. A Retry-After longer
	// than the back-off is honoured instead (also capped by MaxBackoff).
	Backoff, MaxBackoff time.Duration
	// Now tells the time; nil means time.Now. Tests move a fake clock.
	Now func() time.Time
	// URL names the source in errors, redacted.
	URL string
}

// state is where the breaker is.
type state int

const (
	closed state = iota
	open
	halfOpen // one probe in flight
)

// Source is a source behind a circuit breaker.
type Source struct {
	inner source.Source
	opts  Options

	mu       sync.Mutex
	state    state
	fails    int           // transient failures in a row while closed
	backoff  time.Duration // the next open period
	until    time.Time     // end of the open period
	lastErr  error         // the failure that opened the breaker
	opens    int64
	refusals int64
}

var (
	_ source.Source = (*Source)(nil)
	_ source.Lister = (*Source)(nil)
)

// Wrap puts src behind a breaker.
func Wrap(src source.Source, opts Options) *Source {
	if opts.Failures <= 0 {
		opts.Failures = DefaultFailures
	}
	if opts.Backoff <= 0 {
		opts.Backoff = DefaultBackoff
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = DefaultMaxBackoff
	}
	opts.MaxBackoff = max(opts.MaxBackoff, opts.Backoff)
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Source{inner: src, opts: opts, backoff: opts.Backoff}
}

// Unwrap returns the wrapped source.
func (s *Source) Unwrap() source.Source { return s.inner }

// Stats counts how often the breaker opened and how many calls it refused.
type Stats struct {
	Opens, Refusals int64
	// Open reports whether the breaker is open (or probing) now.
	Open bool
}

// Stats returns a snapshot of the counters.
func (s *Source) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Stats{Opens: s.opens, Refusals: s.refusals, Open: s.state != closed}
}

// admit decides whether a call may reach the source. probe is true for the
// one call of a half-open breaker.
func (s *Source) admit() (probe bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch s.state {
	case closed:
		return false, nil
	case open:
		now := s.opts.Now()
		if !now.Before(s.until) {
			s.state = halfOpen
			return true, nil
		}
		s.refusals++
		return false, s.refusal(s.until.Sub(now))
	default: // halfOpen: the probe decides for everyone
		s.refusals++
		return false, s.refusal(s.opts.Backoff)
	}
}

// refusal is the error of a call the breaker did not let through.
func (s *Source) refusal(wait time.Duration) error {
	return source.WithRetryAfter(source.Transient(fmt.Errorf("%w: not asking for %v after: %v",
		source.ErrUnavailable, wait.Round(time.Millisecond), s.lastErr)), wait)
}

// done records the outcome of a call that was let through.
func (s *Source) done(ctx context.Context, probe bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case err != nil && ctx.Err() != nil:
		// The caller gave up or ran out of its own time: that says
		// nothing about the source. An unfinished probe lets the next
		// call probe instead.
		if probe {
			s.state, s.until = open, s.opts.Now()
		}
	case errors.Is(err, source.ErrRestarted):
		// The transport's own process broke and is replaced: nothing
		// learnt about the source. A probe that ends so lets the next
		// call probe.
		if probe {
			s.state, s.until = open, s.opts.Now()
		}
	case err == nil || !source.IsRetryable(err):
		// The source answered (an object, a 404, a permanent refusal):
		// it is alive.
		s.state, s.fails, s.backoff = closed, 0, s.opts.Backoff
	case s.state == open:
		// Opened already by a call that failed alongside this one.
	default:
		s.fails++
		hint, hinted := source.RetryAfter(err)
		if !probe && s.fails < s.opts.Failures && !hinted && !isTimeout(err) {
			return
		}
		if probe {
			s.backoff = min(2*s.backoff, s.opts.MaxBackoff)
		}
		wait := s.backoff
		if hinted {
			wait = max(wait, min(hint, s.opts.MaxBackoff))
		}
		s.state, s.until, s.lastErr = open, s.opts.Now().Add(wait), err
		s.opens++
	}
}

// isTimeout reports whether err is a request that ran out of time.
func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// call runs f behind the breaker.
func (s *Source) call(ctx context.Context, f func() error) error {
	probe, err := s.admit()
	if err != nil {
		return err
	}
	err = f()
	s.done(ctx, probe, err)
	return err
}

// Open opens the named object unless the breaker is open.
func (s *Source) Open(ctx context.Context, name string) (source.Object, error) {
	var obj source.Object
	err := s.call(ctx, func() error {
		var err error
		obj, err = s.inner.Open(ctx, name)
		return err
	})
	if obj == nil {
		if err != nil && errors.Is(err, source.ErrUnavailable) {
			err = &source.Error{Op: "open", Name: name, URL: s.opts.URL, Err: err}
		}
		return nil, err
	}
	return &object{Object: obj, s: s, name: name}, err
}

// List lists unless the breaker is open.
func (s *Source) List(ctx context.Context, prefix string) ([]source.Entry, error) {
	var out []source.Entry
	err := s.call(ctx, func() error {
		var err error
		out, err = source.List(ctx, s.inner, prefix)
		return err
	})
	if err != nil && errors.Is(err, source.ErrUnavailable) && out == nil {
		err = &source.Error{Op: "list", Name: prefix, URL: s.opts.URL, Err: err}
	}
	return out, err
}

// Close closes the wrapped source.
func (s *Source) Close() error { return s.inner.Close() }

type object struct {
	source.Object
	s    *Source
	name string
}

// Version passes on the version of the object below.
func (o *object) Version() string { return source.VersionOf(o.Object) }

// ReadAt reads unless the breaker is open. A read the object can answer
// from bytes it already holds (its first bytes, fetched by Open) needs no
// request and is never refused.
func (o *object) ReadAt(ctx context.Context, p []byte, off int64, hint source.Hint) (int, error) {
	if h, ok := o.Object.(source.Prefixed); ok && h.Holds(off, len(p)) {
		return o.Object.ReadAt(ctx, p, off, hint)
	}
	var n int
	err := o.s.call(ctx, func() error {
		var err error
		n, err = o.Object.ReadAt(ctx, p, off, hint)
		return err
	})
	if err != nil && n == 0 && errors.Is(err, source.ErrUnavailable) {
		err = &source.Error{Op: "read", Name: o.name, URL: o.s.opts.URL, Err: err}
	}
	return n, err
}

// PrefixLen passes on how many bytes the object below fetched on Open.
func (o *object) PrefixLen() int64 {
	if h, ok := o.Object.(source.Prefixed); ok {
		return h.PrefixLen()
	}
	return 0
}

// Holds passes on whether the object below holds a range already.
func (o *object) Holds(off int64, n int) bool {
	h, ok := o.Object.(source.Prefixed)
	return ok && h.Holds(off, n)
}
