// Package limit bounds how many requests a source has in flight at once. A
// probe opens its tables and reads their blocks concurrently; without a
// bound, a burst of probes would open as many connections to the server as
// it asks for reads.
package limit

import (
	"context"

	"github.com/tbfs/tbfs/source"
)

// DefaultRequests is the bound used when Wrap is given zero.
const DefaultRequests = 32

// Source lets at most n calls (Open, ReadAt, List) reach the source below
// at once; the others wait for a slot or for their context to end.
type Source struct {
	inner source.Source
	slots chan struct{}
}

var (
	_ source.Source = (*Source)(nil)
	_ source.Lister = (*Source)(nil)
)

// Wrap bounds src to n calls in flight (DefaultRequests when n ≤ 0).
func Wrap(src source.Source, n int) *Source {
	if n <= 0 {
		n = DefaultRequests
	}
	return &Source{inner: src, slots: make(chan struct{}, n)}
}

// Unwrap returns the wrapped source.
func (s *Source) Unwrap() source.Source { return s.inner }

// acquire takes a slot, or fails with ctx's error once ctx is done.
func (s *Source) acquire(ctx context.Context) error {
	select {
	case s.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Source) release() { <-s.slots }

// Open opens the named object once a slot is free.
func (s *Source) Open(ctx context.Context, name string) (source.Object, error) {
	if err := s.acquire(ctx); err != nil {
		return nil, &source.Error{Op: "open", Name: name, Err: err}
	}
	obj, err := s.inner.Open(ctx, name)
	s.release()
	if err != nil {
		return nil, err
	}
	return &object{Object: obj, s: s, name: name}, nil
}

// List lists once a slot is free.
func (s *Source) List(ctx context.Context, prefix string) ([]source.Entry, error) {
	if err := s.acquire(ctx); err != nil {
		return nil, &source.Error{Op: "list", Name: prefix, Err: err}
	}
	defer s.release()
	return source.List(ctx, s.inner, prefix)
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

// ReadAt reads once a slot is free.
func (o *object) ReadAt(ctx context.Context, p []byte, off int64, hint source.Hint) (int, error) {
	if err := o.s.acquire(ctx); err != nil {
		return 0, &source.Error{Op: "read", Name: o.name, Err: err}
	}
	defer o.s.release()
	return o.Object.ReadAt(ctx, p, off, hint)
}
