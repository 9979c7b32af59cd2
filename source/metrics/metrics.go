// Package metrics counts what a source does: a wrapper that counts the
// requests that reach the source below it, and the Counters that the cache and
// retry wrappers add their own events to, so a front end reads one Stats
// snapshot for a whole stack.
package metrics

import (
	"context"
	"errors"
	"io"
	"sync/atomic"

	"github.com/tbfs/tbfs/source"
)

// Stats is a snapshot of Counters.
type Stats struct {
	Opens int64
	// Opens counts Open calls that reached the wrapped source; a remote
	// transport sends one request for each (a HEAD, or the GET of the
	// object's first bytes).
	//
	// Requests counts ReadAt calls that reached the wrapped source, less
	// those answered from the bytes Open fetched (source.Prefixed); under
	// a cache, each is one transport request.
	Requests int64
	// Bytes counts the bytes those reads returned, and the bytes Open
	// fetched.
	Bytes int64
	// Lists counts List calls that reached the wrapped source.
	Lists int64
	// Errors counts failed Open, ReadAt and List calls. An answer is not a
	// failure: io.EOF at the end of an object, source.ErrNotFound for a
	// table the location does not hold (every probe of a material with no
	// table asks), nor a call the caller itself cancelled.
	Errors int64
	// Hits counts cache blocks served from memory.
	Hits int64
	// Misses counts cache blocks that had to be fetched.
	Misses int64
	// Joins counts cache blocks a reader waited for because another reader
	// was already fetching them (single-flight).
	Joins int64
	// Evictions counts cache blocks dropped to stay within the budget.
	Evictions int64
	// Retries counts attempts the retry wrapper repeated after a transient
	// failure.
	Retries int64
}

// Counters accumulates events; the zero value is ready and all methods are
// safe for concurrent use. A nil *Counters ignores every event, so wrappers
// can take an optional one.
type Counters struct {
	opens, requests, bytes, lists, errors atomic.Int64
	hits, misses, joins, evictions        atomic.Int64
	retries                               atomic.Int64
	trace                                 atomic.Pointer[Trace]
}

// SetTrace makes the wrappers counting into c record every request they
// pass on into t as well (nil stops that).
func (c *Counters) SetTrace(t *Trace) { c.trace.Store(t) }

func (c *Counters) tracing() *Trace {
	if c == nil {
		return nil
	}
	return c.trace.Load()
}

func add(c *Counters, f func(*Counters) *atomic.Int64, n int64) {
	if c != nil {
		f(c).Add(n)
	}
}

// Hit records n cache blocks served from memory.
func (c *Counters) Hit(n int64) { add(c, func(c *Counters) *atomic.Int64 { return &c.hits }, n) }

// Miss records n cache blocks fetched.
func (c *Counters) Miss(n int64) { add(c, func(c *Counters) *atomic.Int64 { return &c.misses }, n) }

// Join records n cache blocks waited for while another reader fetched them.
func (c *Counters) Join(n int64) { add(c, func(c *Counters) *atomic.Int64 { return &c.joins }, n) }

// Evict records n cache blocks dropped.
func (c *Counters) Evict(n int64) { add(c, func(c *Counters) *atomic.Int64 { return &c.evictions }, n) }

// Retry records one repeated attempt.
func (c *Counters) Retry() { add(c, func(c *Counters) *atomic.Int64 { return &c.retries }, 1) }

// Stats returns a snapshot. Each field is read atomically; the fields are
// not read at one instant together.
func (c *Counters) Stats() Stats {
	if c == nil {
		return Stats{}
	}
	return Stats{
		Opens: c.opens.Load(), Requests: c.requests.Load(), Bytes: c.bytes.Load(),
		Lists: c.lists.Load(), Errors: c.errors.Load(),
		Hits: c.hits.Load(), Misses: c.misses.Load(), Joins: c.joins.Load(),
		Evictions: c.evictions.Load(), Retries: c.retries.Load(),
	}
}

// Source counts the calls that reach the source it wraps.
type Source struct {
	inner source.Source
	c     *Counters
}

var (
	_ source.Source = (*Source)(nil)
	_ source.Lister = (*Source)(nil)
)

// Wrap counts src's opens, reads, bytes, lists and errors into c (a new
// Counters when c is nil).
func Wrap(src source.Source, c *Counters) *Source {
	if c == nil {
		c = new(Counters)
	}
	return &Source{inner: src, c: c}
}

// Counters returns the counters this wrapper adds to.
func (s *Source) Counters() *Counters { return s.c }

// Stats is s.Counters().Stats().
func (s *Source) Stats() Stats { return s.c.Stats() }

// Unwrap returns the wrapped source.
func (s *Source) Unwrap() source.Source { return s.inner }

func (s *Source) failed(err error) {
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, source.ErrNotFound) || errors.Is(err, context.Canceled) {
		return
	}
	s.c.errors.Add(1)
}

// Open counts one open.
func (s *Source) Open(ctx context.Context, name string) (source.Object, error) {
	s.c.opens.Add(1)
	obj, err := observe(s.c.tracing(), ctx, func(ctx context.Context) (source.Object, error) { return s.inner.Open(ctx, name) })
	s.failed(err)
	if err != nil {
		return nil, err
	}
	if pf, ok := obj.(source.Prefixed); ok {
		s.c.bytes.Add(pf.PrefixLen())
	}
	return &object{Object: obj, s: s}, nil
}

// List counts one listing; a source that cannot list is not counted as an
// error.
func (s *Source) List(ctx context.Context, prefix string) ([]source.Entry, error) {
	s.c.lists.Add(1)
	entries, err := observe(s.c.tracing(), ctx, func(ctx context.Context) ([]source.Entry, error) { return source.List(ctx, s.inner, prefix) })
	if !errors.Is(err, source.ErrUnsupported) {
		s.failed(err)
	}
	return entries, err
}

// Close closes the wrapped source.
func (s *Source) Close() error { return s.inner.Close() }

type object struct {
	source.Object
	s *Source
}

// Version passes on the version of the object below.
func (o *object) Version() string { return source.VersionOf(o.Object) }

func (o *object) ReadAt(ctx context.Context, p []byte, off int64, hint source.Hint) (int, error) {
	if pf, ok := o.Object.(source.Prefixed); ok && pf.Holds(off, len(p)) {
		return o.Object.ReadAt(ctx, p, off, hint) // no request: Open brought the bytes
	}
	o.s.c.requests.Add(1)
	n, err := observe(o.s.c.tracing(), ctx, func(ctx context.Context) (int, error) { return o.Object.ReadAt(ctx, p, off, hint) })
	o.s.c.bytes.Add(int64(n))
	o.s.failed(err)
	return n, err
}
