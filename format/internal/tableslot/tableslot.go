// Package tableslot opens a table once per key while concurrent callers
// wait, and remembers the outcome: an open table until it is forgotten, a
// lasting failure (a missing or corrupt table) for as long as the Policy
// says, a transient one not at all, so the next call tries again.
package tableslot

import (
	"context"
	"iter"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tbfs/tbfs/source"
)

// Policy says which failed opens a slot remembers and for how long.
type Policy struct {
	// Keep reports whether a failed open is final and is remembered; any
	// other failure is returned and the next call opens again. Nil keeps
	// none.
	Keep func(error) bool
	// Expires reports whether a remembered failure is asked again once TTL
	// has passed since its open began (a missing table that may yet
	// appear). Nil: every remembered failure is kept for good.
	Expires func(error) bool
	// TTL is how long an expiring failure is remembered; zero asks again
	// every time, negative never.
	TTL time.Duration
	// Now tells the time for TTL; nil means time.Now.
	Now func() time.Time
}

// Lasting is the policy of a reader of tables over sources: it remembers
// every failed open that is not momentary (source.Momentary), so a burst
// of probes sends no request for a table known to be missing, refused or
// corrupt, and asks again once ttl has passed, so a table uploaded later,
// a mended bucket policy or a table whose copy was still being written
// when it was first opened is found without a restart.
func Lasting(ttl time.Duration, now func() time.Time) Policy {
	return Policy{
		Keep:    func(err error) bool { return !source.Momentary(err) },
		Expires: func(error) bool { return true },
		TTL:     ttl,
		Now:     now,
	}
}

func (p *Policy) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// Slot opens one value at most once. The zero Slot is ready to use; it
// must not be copied after first use.
type Slot[V comparable] struct {
	mu   sync.Mutex                // serialises opening
	done atomic.Pointer[result[V]] // the outcome once it is final
}

type result[V comparable] struct {
	v   V
	err error
	at  time.Time // when the open that failed began
	// closed marks the outcome Close left: it never expires.
	closed bool
}

// fresh reports whether r may be answered: it is an open value, a failure
// that does not expire, or an expiring one still within its TTL.
func fresh[V comparable](p *Policy, r *result[V]) bool {
	if r == nil {
		return false
	}
	if r.err == nil || r.closed || p.TTL < 0 || p.Expires == nil || !p.Expires(r.err) {
		return true
	}
	return p.now().Sub(r.at) < p.TTL
}

// Get returns the slot's value, calling open when there is none yet (or
// the remembered failure has expired). Concurrent callers wait for one
// open and share its outcome.
func (s *Slot[V]) Get(ctx context.Context, p *Policy, open func(context.Context) (V, error)) (V, error) {
	if r := s.done.Load(); fresh(p, r) {
		return r.v, r.err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.done.Load(); fresh(p, r) {
		return r.v, r.err
	}
	// A miss dates from when the lookup began: one that started before the
	// table appeared must not be trusted for a whole TTL after it.
	var asked time.Time
	if p.Expires != nil {
		asked = p.now()
	}
	v, err := open(ctx)
	if err != nil && (p.Keep == nil || !p.Keep(err)) {
		var zero V
		return zero, err
	}
	s.done.Store(&result[V]{v: v, err: err, at: asked})
	return v, err
}

// Peek returns the slot's remembered value and whether it has an outcome
// at all (open or failed, expired or not), without opening anything.
func (s *Slot[V]) Peek() (v V, done bool) {
	if r := s.done.Load(); r != nil {
		return r.v, true
	}
	return v, false
}

// Forget empties the slot when it still holds v (its object was replaced),
// so the next Get opens again. It reports whether it did; the caller then
// releases v.
func (s *Slot[V]) Forget(v V) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.done.Load(); r != nil && r.err == nil && r.v == v {
		s.done.Store(nil)
		return true
	}
	return false
}

// Close makes every later Get fail with closed, waiting for an open under
// way, and returns the value the slot held, for the caller to release.
func (s *Slot[V]) Close(closed error) (v V, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.done.Swap(&result[V]{err: closed, closed: true})
	if r != nil && r.err == nil {
		return r.v, true
	}
	return v, false
}

// Set is a Slot per key, made on first use. It is safe for concurrent use.
type Set[K comparable, V comparable] struct {
	policy Policy
	closed error

	mu    sync.RWMutex
	slots map[K]*Slot[V] // nil once closed
}

// New returns an empty Set whose slots follow p; after Close its Get fails
// with closed.
func New[K comparable, V comparable](p Policy, closed error) *Set[K, V] {
	return &Set[K, V]{policy: p, closed: closed, slots: make(map[K]*Slot[V])}
}

func (s *Set[K, V]) slot(key K) *Slot[V] {
	s.mu.RLock()
	sl := s.slots[key]
	s.mu.RUnlock()
	return sl
}

// Get returns key's value, opening it with open when needed (see
// Slot.Get), or the Set's closed error after Close.
func (s *Set[K, V]) Get(ctx context.Context, key K, open func(context.Context) (V, error)) (V, error) {
	sl := s.slot(key)
	if sl == nil {
		s.mu.Lock()
		if s.slots == nil {
			s.mu.Unlock()
			var zero V
			return zero, s.closed
		}
		if sl = s.slots[key]; sl == nil {
			sl = &Slot[V]{}
			s.slots[key] = sl
		}
		s.mu.Unlock()
	}
	return sl.Get(ctx, &s.policy, open)
}

// Peek returns key's remembered value and whether it has an outcome (see
// Slot.Peek).
func (s *Set[K, V]) Peek(key K) (v V, done bool) {
	if sl := s.slot(key); sl != nil {
		return sl.Peek()
	}
	return v, false
}

// Forget empties key's slot when it still holds v (see Slot.Forget).
func (s *Set[K, V]) Forget(key K, v V) bool {
	if sl := s.slot(key); sl != nil {
		return sl.Forget(v)
	}
	return false
}

// All yields each key with its open value (failures left out).
func (s *Set[K, V]) All() iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		s.mu.RLock()
		defer s.mu.RUnlock()
		for k, sl := range s.slots {
			if r := sl.done.Load(); r != nil && r.err == nil {
				if !yield(k, r.v) {
					return
				}
			}
		}
	}
}

// Close makes every later Get fail with the Set's closed error and returns
// the values open, for the caller to release. A second Close returns none.
func (s *Set[K, V]) Close() []V {
	s.mu.Lock()
	slots := s.slots
	s.slots = nil
	s.mu.Unlock()
	var open []V
	for _, sl := range slots {
		if v, ok := sl.Close(s.closed); ok {
			open = append(open, v)
		}
	}
	return open
}
