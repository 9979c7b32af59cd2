package geister

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

func TestFrameCacheBudgetAndErrors(t *testing.T) {
	c := NewFrameCache(3 * 100)
	slots := make([]atomic.Pointer[cacheEntry], 10)
	ctx := context.Background()
	loads := 0
	loader := func(i int) func() ([]byte, error) {
		return func() ([]byte, error) {
			loads++
			b := make([]byte, 100)
			b[0] = byte(i)
			return b, nil
		}
	}
	for i := range slots {
		b, err := c.get(ctx, &slots[i], loader(i))
		if err != nil || b[0] != byte(i) {
			t.Fatalf("frame %d: %v %v", i, b[:1], err)
		}
	}
	if _, frames, bytes := c.Stats(); frames != 3 || bytes != 300 {
		t.Errorf("resident %d frames, %d bytes; budget is 3 frames", frames, bytes)
	}
	// The last frame loaded is resident: a get is a hit.
	before := loads
	if b, _ := c.get(ctx, &slots[9], loader(9)); b[0] != 9 || loads != before {
		t.Errorf("recent frame was not cached")
	}
	// Errors are returned and not cached.
	boom := errors.New("boom")
	var e0 atomic.Pointer[cacheEntry]
	if _, err := c.get(ctx, &e0, func() ([]byte, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Errorf("error %v", err)
	}
	if b, err := c.get(ctx, &e0, loader(42)); err != nil || b[0] != 42 {
		t.Errorf("after an error the frame loads again: %v %v", b, err)
	}
	c.drop(slots)
	for i := range slots {
		if slots[i].Load() != nil {
			t.Errorf("slot %d still set after drop", i)
		}
	}
	if _, frames, _ := c.Stats(); frames != 1 {
		t.Errorf("%d frames resident after dropping the table, want 1 (the other table's)", frames)
	}
}

// TestFrameCacheSingleFlight has many goroutines miss one frame at once:
// one loads it, the others wait for it. A waiter whose loader was cancelled
// loads it itself.
func TestFrameCacheSingleFlight(t *testing.T) {
	c := NewFrameCache(1 << 20)
	var slot atomic.Pointer[cacheEntry]
	started := make(chan struct{})
	release := make(chan struct{})
	var loads atomic.Int32
	loaderCtx, cancel := context.WithCancel(context.Background())
	go func() {
		c.get(loaderCtx, &slot, func() ([]byte, error) {
			loads.Add(1)
			close(started)
			<-release
			return nil, context.Canceled
		})
	}()
	<-started
	var wg sync.WaitGroup
	results := make([][]byte, 8)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], _ = c.get(context.Background(), &slot, func() ([]byte, error) {
				loads.Add(1)
				return []byte{7}, nil
			})
		}()
	}
	cancel()
	close(release)
	wg.Wait()
	for i, r := range results {
		if len(r) != 1 || r[0] != 7 {
			t.Errorf("waiter %d got %v", i, r)
		}
	}
	if n := loads.Load(); n < 2 || n > 9 {
		t.Errorf("%d loads", n)
	}
}
