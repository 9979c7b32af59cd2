package source

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Sentinel errors. Every error a source returns matches at most one of the
// first four with errors.Is, so callers can decide what to do without parsing
// messages.
var (
	// ErrNotFound means the named object does not exist.
	ErrNotFound = errors.New("object not found")
	// ErrInvalid means the request itself was wrong: a bad name or URL, or a
	// range outside the object. Retrying cannot help.
	ErrInvalid = errors.New("invalid request")
	// ErrTransient means the transport failed in a way that may succeed when
	// tried again (a 5xx answer, a reset connection, a timeout).
	ErrTransient = errors.New("transient transport failure")
	// ErrPermanent means the transport failed in a way that retrying will
	// not fix (denied access, a missing bucket, a server that breaks the
	// protocol).
	ErrPermanent = errors.New("permanent transport failure")
	// ErrUnsupported means the source lacks an optional ability, such as
	// listing.
	ErrUnsupported = errors.New("not supported by this source")
	// ErrClosed means the source or object was used after Close.
	ErrClosed = errors.New("source closed")
	// ErrChanged means an object was replaced after it was opened: its
	// version (an ETag, a modification time) differs from the one its
	// first bytes came from. Mixing bytes of two versions of a table could
	// give wrong values, so such a read fails; it always comes together
	// with ErrPermanent, since retrying reads the same new version.
	ErrChanged = errors.New("object changed since it was opened")
	// ErrUnavailable means a source failed so often lately that it is not
	// being asked at all until a back-off ends (an open circuit breaker).
	// It comes together with ErrTransient (it is a transport failure that
	// may pass) but IsRetryable is false for it: retrying at once cannot
	// help, trying again after RetryAfter may.
	ErrUnavailable = errors.New("source unavailable after repeated failures")
	// ErrRestarted means the transport's own process (a plugin) broke
	// during the call and a fresh one serves the next. It comes together
	// with ErrTransient and is retryable, but it says nothing about what
	// the transport reaches, so a circuit breaker does not count it.
	ErrRestarted = errors.New("transport process restarted")
)

// retryAfterError carries a server's (or a breaker's) hint of how long to
// wait before asking again.
type retryAfterError struct {
	err   error
	after time.Duration
}

func (e *retryAfterError) Error() string             { return e.err.Error() }
func (e *retryAfterError) Unwrap() error             { return e.err }
func (e *retryAfterError) RetryAfter() time.Duration { return e.after }

// WithRetryAfter attaches a wait hint to err (an HTTP Retry-After, say);
// the result still matches everything err matches.
func WithRetryAfter(err error, d time.Duration) error {
	if err == nil || d <= 0 {
		return err
	}
	return &retryAfterError{err: err, after: d}
}

// RetryAfter returns the wait hint err carries, if any.
func RetryAfter(err error) (time.Duration, bool) {
	var h interface{ RetryAfter() time.Duration }
	if errors.As(err, &h) {
		if d := h.RetryAfter(); d > 0 {
			return d, true
		}
	}
	return 0, false
}

// Changed reports that an object was replaced after it was opened,
// describing how; the result matches ErrChanged and ErrPermanent.
func Changed(format string, args ...any) error {
	return Permanent(fmt.Errorf("%w: %s", ErrChanged, fmt.Sprintf(format, args...)))
}

// Error carries the operation, the object and the location that failed
// together with the cause, which wraps one of the sentinel errors.
type Error struct {
	Op   string // "open", "read", "list", "size", ...
	Name string // object name within the source, if any
	URL  string // where the source lives, with any credentials removed
	Err  error  // the cause; wraps a sentinel error
}

// Error formats the failure as "op name (url): cause". The URL is expected
// redacted already; the whole text is passed through RedactText as well, so
// a cause that quotes a URL (a library's error) leaks no credential either.
func (e *Error) Error() string {
	s := e.Op
	if e.Name != "" {
		s += " " + e.Name
	}
	if e.URL != "" {
		s += " (" + e.URL + ")"
	}
	return RedactText(s + ": " + e.Err.Error())
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// kindError attaches a sentinel kind to a cause so both match errors.Is.
type kindError struct {
	kind  error
	cause error
}

func (e *kindError) Error() string {
	if e.cause == nil {
		return e.kind.Error()
	}
	return e.kind.Error() + ": " + e.cause.Error()
}

func (e *kindError) Unwrap() []error {
	if e.cause == nil {
		return []error{e.kind}
	}
	return []error{e.kind, e.cause}
}

// Transient marks cause as retryable: the result matches ErrTransient and
// still matches cause.
func Transient(cause error) error { return &kindError{kind: ErrTransient, cause: cause} }

// Permanent marks cause as not retryable: the result matches ErrPermanent
// and still matches cause.
func Permanent(cause error) error { return &kindError{kind: ErrPermanent, cause: cause} }

// Invalid reports a bad request described by format and args; the result
// matches ErrInvalid.
func Invalid(format string, args ...any) error {
	return &kindError{kind: ErrInvalid, cause: fmt.Errorf(format, args...)}
}

// IsRetryable reports whether err is worth trying again at once: a
// transient failure, unless it is a refusal of an open breaker
// (ErrUnavailable), which stays the same until its back-off ends.
func IsRetryable(err error) bool {
	return errors.Is(err, ErrTransient) && !errors.Is(err, ErrUnavailable)
}

// Momentary reports whether a failed call may well succeed when made again
// soon, so a reader should not remember it: a transient transport failure,
// a source backing off (ErrUnavailable), an object replaced mid-call, a
// cancelled or timed-out context. Any other failure (a missing object, a
// refusal, a bad request) says something about the object that lasts.
func Momentary(err error) bool {
	return errors.Is(err, ErrTransient) || errors.Is(err, ErrChanged) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
