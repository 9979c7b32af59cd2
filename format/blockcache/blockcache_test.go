package blockcache

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

func block(n int) func() ([]byte, error) {
	return func() ([]byte, error) { return make([]byte, n), nil }
}

// The budget is the arbiter: the bytes held never exceed it, and the least
// recently used block is the one dropped.
func TestBudgetEvictsLeastRecentlyUsed(t *testing.T) {
	ctx := context.Background()
	c := New(3 * (100 + entryOverhead))
	for b := range uint64(3) {
		if _, err := c.Get(ctx, Key{File: 1, Block: b}, block(100)); err != nil {
			t.Fatal(err)
		}
	}
	c.Peek(Key{File: 1, Block: 0}) // block 1 is now the oldest
	if _, err := c.Get(ctx, Key{File: 1, Block: 3}, block(100)); err != nil {
		t.Fatal(err)
	}
	for b, want := range []bool{true, false, true, true} {
		if _, ok := c.Peek(Key{File: 1, Block: uint64(b)}); ok != want {
			t.Errorf("block %d cached %v, want %v", b, ok, want)
		}
	}
	if used, peak := c.Stats(); used > c.max || peak > c.max {
		t.Errorf("used %d peak %d over the budget %d", used, peak, c.max)
	}
}

func TestConcurrentMissesDecodeOnce(t *testing.T) {
	c := New(1 << 20)
	var decodes atomic.Int32
	release := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = c.Get(context.Background(), Key{File: 2}, func() ([]byte, error) {
				decodes.Add(1)
				<-release
				return make([]byte, 10), nil
			})
		}()
	}
	close(release)
	wg.Wait()
	if n := decodes.Load(); n != 1 {
		t.Fatalf("%d decodes", n)
	}
	// Once cached, a block is never decoded again.
	before := decodes.Load()
	if _, err := c.Get(context.Background(), Key{File: 2}, block(10)); err != nil {
		t.Fatal(err)
	}
	if decodes.Load() != before {
		t.Error("a cached block was decoded again")
	}
}

func TestFailuresAreNotRemembered(t *testing.T) {
	c := New(1 << 20)
	boom := errors.New("transient")
	if _, err := c.Get(context.Background(), Key{File: 3}, func() ([]byte, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
	if _, err := c.Get(context.Background(), Key{File: 3}, block(1)); err != nil {
		t.Fatalf("the retry after a failure got %v", err)
	}
}

type lazy struct{ evicted atomic.Bool }

func (l *lazy) MarkEvicted() { l.evicted.Store(true) }

func TestDropFileTellsEvictable(t *testing.T) {
	c := New(1 << 20)
	v := &lazy{}
	if _, err := c.GetValue(context.Background(), Key{File: 4}, func() (any, int64, error) { return v, 10, nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(context.Background(), Key{File: 5}, block(10)); err != nil {
		t.Fatal(err)
	}
	c.DropFile(4)
	if !v.evicted.Load() {
		t.Error("the dropped block was not told")
	}
	if _, ok := c.Peek(Key{File: 5}); !ok {
		t.Error("DropFile dropped another file's block")
	}
	if a, b := NewFileID(), NewFileID(); a == b {
		t.Error("NewFileID repeated an id")
	}
}

// counted is a Shared value that records its references.
type counted struct{ refs atomic.Int32 }

func newCounted() *counted {
	c := &counted{}
	c.refs.Store(1) // the cache's
	return c
}
func (c *counted) Acquire()     { c.refs.Add(1) }
func (c *counted) MarkEvicted() { c.refs.Add(-1) }
func (c *counted) release()     { c.refs.Add(-1) }

// The arbiter is the Shared contract: every value handed out carries one
// reference for its caller, the cache gives up its own exactly once when it
// drops the value, and a value nobody holds any more has no reference left.
func TestSharedValuesAreCounted(t *testing.T) {
	ctx := context.Background()
	c := New(10 + entryOverhead) // room for one value
	a := newCounted()
	get := func(key Key, v *counted) *counted {
		t.Helper()
		got, err := c.GetValue(ctx, key, func() (any, int64, error) { return v, 10, nil })
		if err != nil {
			t.Fatal(err)
		}
		return got.(*counted)
	}
	first := get(Key{File: 6}, a) // decoded: the cache's reference and the caller's
	if n := a.refs.Load(); n != 2 {
		t.Fatalf("after the decode %d references, want 2", n)
	}
	again := get(Key{File: 6}, nil) // a hit
	peeked, ok := c.Peek(Key{File: 6})
	if !ok || again != a || peeked.(*counted) != a {
		t.Fatal("the cached value was not handed out")
	}
	if n := a.refs.Load(); n != 4 {
		t.Fatalf("after a hit and a peek %d references, want 4", n)
	}
	if !c.Has(Key{File: 6}) || a.refs.Load() != 4 {
		t.Fatalf("Has: cached %v, %d references (it must take none)", c.Has(Key{File: 6}), a.refs.Load())
	}
	b := newCounted()
	get(Key{File: 6, Block: 1}, b).release() // evicts a
	if n := a.refs.Load(); n != 3 {
		t.Fatalf("after its eviction %d references, want the 3 callers'", n)
	}
	first.release()
	again.release()
	peeked.(*counted).release()
	if n := a.refs.Load(); n != 0 {
		t.Errorf("released by everyone, %d references left", n)
	}
	// Too large to cache: handed out with the cache's reference, never
	// acquired twice.
	big := newCounted()
	if _, err := c.GetValue(ctx, Key{File: 7}, func() (any, int64, error) { return big, 1 << 20, nil }); err != nil {
		t.Fatal(err)
	}
	if n := big.refs.Load(); n != 1 {
		t.Errorf("an uncached value has %d references, want its caller's 1", n)
	}
	c.DropFile(6)
	if n := b.refs.Load(); n != 0 {
		t.Errorf("a dropped value nobody holds has %d references", n)
	}
}

// Waiters of one decode each get their own reference.
func TestSharedWaitersAreCounted(t *testing.T) {
	c := New(1 << 20)
	v := newCounted()
	release := make(chan struct{})
	var wg sync.WaitGroup
	got := make([]any, 8)
	for i := range got {
		wg.Go(func() {
			got[i], _ = c.GetValue(context.Background(), Key{File: 8}, func() (any, int64, error) {
				<-release
				return v, 10, nil
			})
		})
	}
	close(release)
	wg.Wait()
	for i, g := range got {
		if g != v {
			t.Fatalf("caller %d got %v", i, g)
		}
	}
	if n := v.refs.Load(); n != 1+int32(len(got)) {
		t.Errorf("%d references, want the cache's and %d callers'", n, len(got))
	}
}

// A caller that finds a decode under way waits for it, or gives up when its
// own context ends, without disturbing the decode. The arbiter is the
// contract: the cancelled caller gets its context's error while the block is
// still decoding (the decode cannot finish before the test releases it),
// and the block the decode made is then cached for everyone.
func TestWaiterContextEnds(t *testing.T) {
	c := New(1 << 20)
	key := Key{File: 9}
	started, release := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		_, err := c.Get(context.Background(), key, func() ([]byte, error) {
			close(started)
			<-release
			return make([]byte, 10), nil
		})
		first <- err
	}()
	<-started
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Get(ctx, key, block(10)); !errors.Is(err, context.Canceled) {
		t.Errorf("waiter with an ended context: %v, want context.Canceled", err)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(context.Background(), key, func() ([]byte, error) {
		return nil, errors.New("decoded again")
	}); err != nil {
		t.Errorf("after the decode: %v, want the cached block", err)
	}
}

// Every caller of a failing decode, waiting for it or coming after it,
// gets the failure: there is no other block to give them.
func TestWaitersShareAFailure(t *testing.T) {
	c := New(1 << 20)
	boom := errors.New("corrupt block")
	release := make(chan struct{})
	errs := make([]error, 8)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = c.Get(context.Background(), Key{File: 10}, func() ([]byte, error) {
				<-release
				return nil, boom
			})
		})
	}
	close(release)
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, boom) {
			t.Errorf("caller %d: %v, want the decode's failure", i, err)
		}
	}
}
