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
