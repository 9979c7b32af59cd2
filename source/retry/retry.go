// Package retry repeats operations of a source that failed transiently
// (errors matching source.ErrTransient), with exponential backoff, a bounded
// number of attempts, and respect for the caller's context. Every other error
// — not found, invalid, permanent, cancelled — is returned at once.
//
// Transports do not retry on their own; this wrapper is the one place that
// does, so the attempts a read may cost are bounded in one place.
package retry

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/metrics"
)

// Policy says how often and how patiently to retry. The zero value means
// the defaults given on each field.
type Policy struct {
	// Attempts is the total number of tries, the first included. Zero
	// means 4; 1 disables retrying.
	Attempts int
	// Base is the wait before the second try; each later wait doubles.
	// Zero means 100ms.
	Base time.Duration
	// Max caps each wait. Zero means 5s.
	Max time.Duration
	// Sleep waits for d or until ctx is done, returning ctx's error in the
	// latter case. Nil means a timer-based wait of a random duration in
	// [d/2, d], which keeps many clients from retrying in step. Tests
	// inject a Sleep that returns at once and records d.
	Sleep func(ctx context.Context, d time.Duration) error
	// Counters, when set, counts each retry.
	Counters *metrics.Counters
}

func (p Policy) attempts() int {
	if p.Attempts <= 0 {
		return 4
	}
	return p.Attempts
}

// Backoff returns the wait before try number attempt+1 (attempt counts from
// 1): Base doubled attempt-1 times, capped at Max.
func (p Policy) Backoff(attempt int) time.Duration {
	base, maxd := p.Base, p.Max
	if base <= 0 {
		base = 100 * time.Millisecond
	}
	if maxd <= 0 {
		maxd = 5 * time.Second
	}
	d := base
	for i := 1; i < attempt && d < maxd; i++ {
		d *= 2
	}
	return min(d, maxd)
}

func (p Policy) sleep(ctx context.Context, d time.Duration) error {
	if p.Sleep != nil {
		return p.Sleep(ctx, d)
	}
	d = d/2 + rand.N(d/2+1)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Do calls f until it succeeds, fails with an error that is not transient,
// the attempts run out or ctx is done. The last error is returned; when the
// attempts run out it says how many there were and still matches
// source.ErrTransient.
func (p Policy) Do(ctx context.Context, f func() error) error {
	n := p.attempts()
	for attempt := 1; ; attempt++ {
		err := f()
		if err == nil || !source.IsRetryable(err) {
			return err
		}
		if attempt >= n {
			return fmt.Errorf("gave up after %d attempts: %w", n, err)
		}
		if ctx.Err() != nil {
			return err
		}
		if serr := p.sleep(ctx, p.Backoff(attempt)); serr != nil {
			return errors.Join(err, serr)
		}
		p.Counters.Retry()
	}
}

// Source retries the operations of the source it wraps.
type Source struct {
	inner source.Source
	p     Policy
}

var (
	_ source.Source = (*Source)(nil)
	_ source.Lister = (*Source)(nil)
)

// Wrap returns src with its Open, ReadAt and List retried under p.
func Wrap(src source.Source, p Policy) *Source { return &Source{inner: src, p: p} }

// Unwrap returns the wrapped source.
func (s *Source) Unwrap() source.Source { return s.inner }

// Open opens the named object, retrying transient failures.
func (s *Source) Open(ctx context.Context, name string) (source.Object, error) {
	var obj source.Object
	err := s.p.Do(ctx, func() error {
		var err error
		obj, err = s.inner.Open(ctx, name)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &object{Object: obj, p: s.p}, nil
}

// List lists under prefix, retrying transient failures.
func (s *Source) List(ctx context.Context, prefix string) ([]source.Entry, error) {
	var out []source.Entry
	err := s.p.Do(ctx, func() error {
		var err error
		out, err = source.List(ctx, s.inner, prefix)
		return err
	})
	return out, err
}

// Close closes the wrapped source.
func (s *Source) Close() error { return s.inner.Close() }

type object struct {
	source.Object
	p Policy
}

// Version passes on the version of the object below.
func (o *object) Version() string { return source.VersionOf(o.Object) }

// ReadAt retries what is still missing after a transient failure, so bytes a
// failed attempt did deliver are kept. io.EOF is not transient, so a read
// that reaches the end returns at once.
func (o *object) ReadAt(ctx context.Context, p []byte, off int64, hint source.Hint) (int, error) {
	done := 0
	err := o.p.Do(ctx, func() error {
		n, err := o.Object.ReadAt(ctx, p[done:], off+int64(done), hint)
		done += n
		return err
	})
	return done, err
}
