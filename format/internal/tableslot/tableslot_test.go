package tableslot

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tbfs/tbfs/source"
)

var (
	errMissing   = errors.New("missing")
	errCorrupt   = errors.New("corrupt")
	errTransient = errors.New("transient")
	errClosed    = errors.New("closed")
)

// clock is a hand-driven time source.
type clock struct{ t atomic.Int64 }

func (c *clock) Now() time.Time          { return time.Unix(0, c.t.Load()) }
func (c *clock) Advance(d time.Duration) { c.t.Add(int64(d)) }
func newPolicy(c *clock, ttl time.Duration) Policy {
	return Policy{
		Keep:    func(err error) bool { return errors.Is(err, errMissing) || errors.Is(err, errCorrupt) },
		Expires: func(err error) bool { return errors.Is(err, errMissing) },
		TTL:     ttl,
		Now:     c.Now,
	}
}

// opener answers each open with the next of its outcomes and counts the
// opens.
type opener struct {
	outs  []error // nil: a new value
	opens int
}

type table struct{ n int }

func (o *opener) open(context.Context) (*table, error) {
	err := o.outs[min(o.opens, len(o.outs)-1)]
	o.opens++
	if err != nil {
		return nil, err
	}
	return &table{o.opens}, nil
}

// TestRemembered: which failures are answered again without an open, and
// for how long.
func TestRemembered(t *testing.T) {
	type step struct {
		advance   time.Duration // before the Get
		wantErr   error
		wantOpens int // opens so far, after the Get
	}
	tests := []struct {
		name  string
		ttl   time.Duration
		outs  []error
		steps []step
	}{
		{"value kept", time.Minute, []error{nil}, []step{{0, nil, 1}, {time.Hour, nil, 1}}},
		{"miss within TTL", time.Minute, []error{errMissing, nil}, []step{
			{0, errMissing, 1}, {59 * time.Second, errMissing, 1}, {time.Second, nil, 2}, {time.Hour, nil, 2}}},
		{"miss asked again stays a miss", time.Minute, []error{errMissing}, []step{
			{0, errMissing, 1}, {time.Minute, errMissing, 2}, {time.Second, errMissing, 2}, {time.Minute, errMissing, 3}}},
		{"TTL 0 asks every time", 0, []error{errMissing, errMissing, nil}, []step{
			{0, errMissing, 1}, {0, errMissing, 2}, {0, nil, 3}, {0, nil, 3}}},
		{"negative TTL never asks again", -1, []error{errMissing, nil}, []step{
			{0, errMissing, 1}, {1000 * time.Hour, errMissing, 1}}},
		{"corrupt does not expire", time.Minute, []error{errCorrupt, nil}, []step{
			{0, errCorrupt, 1}, {time.Hour, errCorrupt, 1}}},
		{"transient not kept", time.Minute, []error{errTransient, errTransient, nil}, []step{
			{0, errTransient, 1}, {0, errTransient, 2}, {0, nil, 3}, {0, nil, 3}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c clock
			s := New[string, *table](newPolicy(&c, tt.ttl), errClosed)
			o := &opener{outs: tt.outs}
			for i, st := range tt.steps {
				c.Advance(st.advance)
				v, err := s.Get(context.Background(), "k", o.open)
				if !errors.Is(err, st.wantErr) || (err == nil) != (v != nil) {
					t.Fatalf("step %d: Get = %v, %v; want error %v", i, v, err, st.wantErr)
				}
				if o.opens != st.wantOpens {
					t.Fatalf("step %d: %d opens, want %d", i, o.opens, st.wantOpens)
				}
			}
		})
	}
}

// TestMissDatesFromAsk: a miss counts its TTL from when the open began,
// not when it ended, so a slow lookup that raced a table's appearance is
// not trusted for a whole TTL after it.
func TestMissDatesFromAsk(t *testing.T) {
	var c clock
	s := New[string, *table](newPolicy(&c, time.Minute), errClosed)
	opens := 0
	open := func(context.Context) (*table, error) {
		opens++
		if opens == 1 {
			c.Advance(30 * time.Second) // the lookup takes a while
			return nil, errMissing
		}
		return &table{}, nil
	}
	s.Get(context.Background(), "k", open)
	c.Advance(30 * time.Second) // a minute since the ask, half since the answer
	if _, err := s.Get(context.Background(), "k", open); err != nil || opens != 2 {
		t.Fatalf("Get = %v after %d opens; want the table, opened again", err, opens)
	}
}

// TestConcurrentGetOpensOnce: callers of one key wait for a single open
// and share its value; another key opens on its own.
func TestConcurrentGetOpensOnce(t *testing.T) {
	for _, n := range []int{2, 8, 64} {
		s := New[int, *table](Policy{}, errClosed)
		var opens atomic.Int32
		release := make(chan struct{})
		open := func(context.Context) (*table, error) {
			opens.Add(1)
			<-release
			return &table{}, nil
		}
		got := make([]*table, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				v, err := s.Get(context.Background(), 1, open)
				if err != nil {
					t.Error(err)
				}
				got[i] = v
			})
		}
		close(release)
		wg.Wait()
		if opens.Load() != 1 {
			t.Errorf("%d callers: %d opens, want 1", n, opens.Load())
		}
		for i := range got {
			if got[i] == nil || got[i] != got[0] {
				t.Fatalf("%d callers: caller %d got %p, caller 0 %p", n, i, got[i], got[0])
			}
		}
		if v, _ := s.Get(context.Background(), 2, open); v == got[0] || opens.Load() != 2 {
			t.Errorf("another key shared the first key's open")
		}
	}
}

// TestForget: forgetting the value a slot holds makes the next Get open
// again; forgetting a value it no longer holds (a reader of the old
// version arriving late) does nothing.
func TestForget(t *testing.T) {
	s := New[string, *table](Policy{}, errClosed)
	o := &opener{outs: []error{nil}}
	ctx := context.Background()
	old, _ := s.Get(ctx, "k", o.open)
	if !s.Forget("k", old) {
		t.Fatal("Forget of the held value did nothing")
	}
	if v, done := s.Peek("k"); done || v != nil {
		t.Fatalf("Peek after Forget = %v, %v", v, done)
	}
	cur, _ := s.Get(ctx, "k", o.open)
	if cur == old || o.opens != 2 {
		t.Fatalf("Get after Forget gave the old value (%d opens)", o.opens)
	}
	if s.Forget("k", old) || s.Forget("other", cur) {
		t.Fatal("Forget of a value not held dropped something")
	}
	if v, _ := s.Get(ctx, "k", o.open); v != cur || o.opens != 2 {
		t.Fatal("a stale Forget dropped the current value")
	}
	// A remembered failure is not forgotten by a nil value.
	m := New[string, *table](Policy{Keep: func(error) bool { return true }}, errClosed)
	m.Get(ctx, "k", (&opener{outs: []error{errCorrupt}}).open)
	if m.Forget("k", nil) {
		t.Fatal("Forget(nil) dropped a remembered failure")
	}
}

// TestPeek: Peek reports an outcome without opening, expired or not.
func TestPeek(t *testing.T) {
	var c clock
	s := New[string, *table](newPolicy(&c, 0), errClosed)
	if _, done := s.Peek("k"); done {
		t.Fatal("Peek of an unknown key reports an outcome")
	}
	o := &opener{outs: []error{errMissing}}
	s.Get(context.Background(), "k", o.open)
	if v, done := s.Peek("k"); !done || v != nil || o.opens != 1 {
		t.Fatalf("Peek of a remembered miss = %v, %v (%d opens)", v, done, o.opens)
	}
}

// TestClose: Close hands back the open values once, and every later Get
// fails with the closed error without opening, through the Set or through
// a slot already looked up.
func TestClose(t *testing.T) {
	var c clock
	s := New[string, *table](newPolicy(&c, 0), errClosed)
	o := &opener{outs: []error{nil, errMissing, errTransient}}
	ctx := context.Background()
	a, _ := s.Get(ctx, "a", o.open)
	s.Get(ctx, "b", o.open)
	s.Get(ctx, "c", o.open)
	sl := s.slot("b")
	got := s.Close()
	if len(got) != 1 || got[0] != a {
		t.Fatalf("Close returned %v, want [%p]", got, a)
	}
	if again := s.Close(); len(again) != 0 {
		t.Fatalf("second Close returned %v", again)
	}
	for _, k := range []string{"a", "b", "new"} {
		if v, err := s.Get(ctx, k, o.open); v != nil || !errors.Is(err, errClosed) {
			t.Errorf("Get(%s) after Close = %v, %v", k, v, err)
		}
	}
	c.Advance(time.Hour)
	if v, err := sl.Get(ctx, &s.policy, o.open); v != nil || !errors.Is(err, errClosed) {
		t.Errorf("slot Get after Close = %v, %v", v, err)
	}
	if o.opens != 3 {
		t.Errorf("%d opens after Close, want none", o.opens-3)
	}
	if s.Forget("a", a) {
		t.Error("Forget after Close dropped a value")
	}
	for k, v := range s.All() {
		t.Errorf("All after Close yields %s=%v", k, v)
	}
}

// TestAll: All yields the open values only.
func TestAll(t *testing.T) {
	s := New[string, *table](Policy{Keep: func(error) bool { return true }}, errClosed)
	ctx := context.Background()
	a, _ := s.Get(ctx, "a", (&opener{outs: []error{nil}}).open)
	s.Get(ctx, "b", (&opener{outs: []error{errCorrupt}}).open)
	got := map[string]*table{}
	for k, v := range s.All() {
		got[k] = v
	}
	if len(got) != 1 || got["a"] != a {
		t.Fatalf("All = %v, want only a", got)
	}
}

// TestLasting: the policy of a reader over sources keeps every failure but
// a momentary one (source.Momentary's list) and lets each expire after the
// TTL, a corrupt table's too (its copy may have been half written).
func TestLasting(t *testing.T) {
	refused := fmt.Errorf("open t: %w", source.Permanent(errors.New("403 Forbidden")))
	tests := []struct {
		err           error
		keep, expires bool
	}{
		{errMissing, true, true},
		{refused, true, true},
		{source.Invalid("bad name"), true, true},
		{errCorrupt, true, true},
		{fmt.Errorf("read: %w", source.Transient(errors.New("503"))), false, false},
		{source.Changed("etag %q became %q", "a", "b"), false, false},
		{fmt.Errorf("open: %w", context.Canceled), false, false},
		{context.DeadlineExceeded, false, false},
	}
	var c clock
	p := Lasting(time.Minute, c.Now)
	for _, tt := range tests {
		if got := p.Keep(tt.err); got != tt.keep {
			t.Errorf("Keep(%v) = %v, want %v", tt.err, got, tt.keep)
		}
		if got := tt.keep && p.Expires(tt.err); got != tt.expires {
			t.Errorf("Expires(%v) = %v, want %v", tt.err, got, tt.expires)
		}
	}
	if p.TTL != time.Minute || p.now() != c.Now() {
		t.Errorf("TTL %v, now %v; want a minute and the clock", p.TTL, p.now())
	}
}
