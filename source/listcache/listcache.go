// Package listcache answers "is there such an object?" without a request
// where it can. A table search asks for many names that do not exist (each
// table kind's folder, then the root; the sub-tables of materials a set
// leaves out), and over object storage each such miss would cost a round
// trip per process. The wrapper lists the source once, in the background,
// when the first object is opened; once the listing is in, a name it does not
// hold fails with source.ErrNotFound at once, and a source that cannot list
// still remembers each name it was told is missing. Both answers are
// trusted for a time-to-live and then asked again, so a table added to the
// store is found within it.
package listcache

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/tbfs/tbfs/source"
)

// DefaultTTL is how long a listing and a remembered miss are trusted when
// Options.TTL is zero.
const DefaultTTL = 5 * time.Minute

// maxMissing bounds the misses remembered one by one.
const maxMissing = 1 << 16

// Options tune a Source; the zero value is usable.
type Options struct {
	// TTL is how long a listing or a miss is trusted. Zero means
	// DefaultTTL; a negative value trusts them for the life of the
	// source.
	TTL time.Duration
	// Now tells the time; nil means time.Now. Tests move it.
	Now func() time.Time
}

// Source wraps a source with a listing and a memory of misses.
type Source struct {
	inner source.Source
	ttl   time.Duration
	now   func() time.Time

	ctx    context.Context // ends at Close; the background listing runs under it
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	listing *listing
	missing map[string]time.Time // name -> when it was found missing
}

// listing is one listing of the source, in flight until done is closed.
type listing struct {
	done    chan struct{}
	at      time.Time
	names   map[string]bool // nil when the listing failed
	entries []source.Entry  // sorted by name, as listed
	// missed is set once an open found a name missing while the listing
	// was in flight. The lookups that follow a miss (the next place to
	// search) wait for the listing, which left with the first lookups and
	// is due about when they return, rather than send requests of their
	// own.
	missed bool
}

var (
	_ source.Source = (*Source)(nil)
	_ source.Lister = (*Source)(nil)
)

// Wrap returns src with its lookups cached under opts.
func Wrap(src source.Source, opts Options) *Source {
	s := &Source{inner: src, ttl: opts.TTL, now: opts.Now, missing: map[string]time.Time{}}
	if s.ttl == 0 {
		s.ttl = DefaultTTL
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s
}

// Unwrap returns the wrapped source.
func (s *Source) Unwrap() source.Source { return s.inner }

func (s *Source) fresh(at time.Time) bool { return s.ttl < 0 || s.now().Sub(at) < s.ttl }

// known answers from the listing or the misses when they can: missing is
// true when name is known not to exist. A listing is started when there is
// none or the last one is stale; Open waits for one in flight only after a
// miss (see listing.missed).
func (s *Source) known(ctx context.Context, name string) (missing bool) {
	s.mu.Lock()
	if l := s.listing; l != nil && l.missed {
		select {
		case <-l.done:
		default:
			s.mu.Unlock()
			select {
			case <-l.done:
			case <-ctx.Done():
			}
			s.mu.Lock()
		}
	}
	defer s.mu.Unlock()
	if at, ok := s.missing[name]; ok {
		if s.fresh(at) {
			return true
		}
		delete(s.missing, name)
	}
	l := s.listing
	if l != nil {
		select {
		case <-l.done:
			if !s.fresh(l.at) {
				l = nil
			} else if l.names != nil {
				return !l.names[name]
			}
		default:
			return false // in flight
		}
	}
	if l == nil && s.ctx.Err() == nil {
		if _, ok := s.inner.(source.Lister); ok {
			s.startListing()
		}
	}
	return false
}

// startListing lists the source in the background. s.mu is held.
func (s *Source) startListing() {
	l := &listing{done: make(chan struct{}), at: s.now()}
	s.listing = l
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer close(l.done)
		entries, err := source.List(s.ctx, s.inner, "")
		if err != nil {
			return // no listing: misses are remembered one by one
		}
		names := make(map[string]bool, len(entries))
		for _, e := range entries {
			names[e.Name] = true
		}
		s.mu.Lock()
		l.names, l.entries = names, entries
		s.mu.Unlock()
	}()
}

// Listed waits for the listing in flight (starting one when there is none
// or it is stale) and reports whether a usable listing is held now: false
// when the source cannot list, the listing failed or ctx ended first.
func (s *Source) Listed(ctx context.Context) bool {
	s.known(ctx, "") // starts a listing when one is due
	s.mu.Lock()
	l := s.listing
	s.mu.Unlock()
	if l == nil {
		return false
	}
	select {
	case <-l.done:
	case <-ctx.Done():
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return l.names != nil
}

// Open fails with source.ErrNotFound at once for a name the listing does not
// hold or that was found missing within the time-to-live, and otherwise
// opens the object below.
func (s *Source) Open(ctx context.Context, name string) (source.Object, error) {
	if err := source.CheckName(name); err != nil {
		return nil, &source.Error{Op: "open", Name: name, Err: err}
	}
	if s.known(ctx, name) {
		return nil, &source.Error{Op: "open", Name: name, Err: source.ErrNotFound}
	}
	// A miss dates from when the lookup began, so one that raced with the
	// object's upload is not trusted for a whole TTL after it.
	asked := s.now()
	obj, err := s.inner.Open(ctx, name)
	if errors.Is(err, source.ErrNotFound) {
		s.mu.Lock()
		if len(s.missing) >= maxMissing {
			// Bounded: a flood of made-up names must not grow it forever.
			clear(s.missing)
		}
		s.missing[name] = asked
		if l := s.listing; l != nil {
			select {
			case <-l.done:
			default:
				l.missed = true
			}
		}
		s.mu.Unlock()
	}
	return obj, err
}

// List answers from the listing when one is held within the time-to-live,
// and lists the source below otherwise.
func (s *Source) List(ctx context.Context, prefix string) ([]source.Entry, error) {
	if err := source.CheckPrefix(prefix); err != nil {
		return nil, &source.Error{Op: "list", Name: prefix, Err: err}
	}
	if err := ctx.Err(); err != nil {
		return nil, &source.Error{Op: "list", Name: prefix, Err: err}
	}
	s.mu.Lock()
	var held []source.Entry
	if l := s.listing; l != nil && l.names != nil && s.fresh(l.at) {
		held = l.entries
	}
	s.mu.Unlock()
	if held == nil || s.ctx.Err() != nil {
		return source.List(ctx, s.inner, prefix) // closed: the source below says so
	}
	out := []source.Entry{}
	for _, e := range held {
		if strings.HasPrefix(e.Name, prefix) {
			out = append(out, e)
		}
	}
	return out, nil
}

// Close stops a listing in flight, waits for it, and closes the source
// below.
func (s *Source) Close() error {
	s.cancel()
	s.wg.Wait()
	return s.inner.Close()
}
