package geister

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
)

// FrameCache keeps decoded table frames in memory under one byte budget
// shared by every table that uses it.
//
// A hit costs two atomic loads and takes no lock: each open table has one
// slot per frame holding a pointer to the decoded frame, so concurrent
// probes never wait for each other on the way to cached data. Only a miss
// takes the cache's lock, to account for the new frame and evict others by
// the CLOCK policy (an approximation of least-recently-used: a hit sets a
// frame's reference bit; eviction passes over frames with the bit set,
// clearing it, and evicts the first without). A frame that several
// goroutines miss at once is decoded by one of them while the others wait.
type FrameCache struct {
	budget int64
	misses atomic.Uint64

	mu   sync.Mutex
	used int64
	ring []*cacheEntry // resident frames, in no particular order
	hand int           // CLOCK hand into ring
}

// DefaultCacheBytes is the frame cache budget Open uses when Options gives
// none: 64 MiB, about 8000 frames of 8 KiB (every table up to total 5
// decoded is 45 MiB).
const DefaultCacheBytes = 64 << 20

// cacheEntry is one frame, decoded or being decoded.
type cacheEntry struct {
	data  []byte
	err   error
	ready atomic.Bool   // data is set and may be read
	ref   atomic.Bool   // read since the CLOCK hand last passed
	done  chan struct{} // closed when data or err is set
	slot  *atomic.Pointer[cacheEntry]
	pos   int // index in FrameCache.ring while resident, else -1
}

// NewFrameCache returns a cache that holds at most budget bytes of decoded
// frames (the frame being added is always kept, even beyond the budget).
func NewFrameCache(budget int64) *FrameCache {
	return &FrameCache{budget: budget}
}

// Stats returns the number of frames loaded (cache misses) so far, and the
// frames and bytes now resident.
func (c *FrameCache) Stats() (misses uint64, frames int, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.misses.Load(), len(c.ring), c.used
}

// get returns the frame held in slot, calling load on a miss. Errors are
// not cached: a later get tries again.
func (c *FrameCache) get(ctx context.Context, slot *atomic.Pointer[cacheEntry], load func() ([]byte, error)) ([]byte, error) {
	for {
		e := slot.Load()
		if e != nil && e.ready.Load() {
			if !e.ref.Load() {
				e.ref.Store(true)
			}
			return e.data, nil
		}
		if e == nil {
			e = &cacheEntry{done: make(chan struct{}), slot: slot, pos: -1}
			if !slot.CompareAndSwap(nil, e) {
				continue
			}
			return c.fill(e, load)
		}
		select {
		case <-e.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if e.err == nil {
			return e.data, nil
		}
		if !isContextErr(e.err) || ctx.Err() != nil {
			return nil, e.err
		}
		// The goroutine that loaded the frame was cancelled, not this
		// one: try again for this caller.
	}
}

// fill loads a frame into the entry e, which this goroutine has just put in
// its slot, and makes room for it.
func (c *FrameCache) fill(e *cacheEntry, load func() ([]byte, error)) ([]byte, error) {
	c.misses.Add(1)
	data, err := load()
	if err != nil {
		e.err = err
		e.slot.CompareAndSwap(e, nil)
		close(e.done)
		return nil, err
	}
	e.data = data
	e.ready.Store(true)
	close(e.done)

	c.mu.Lock()
	defer c.mu.Unlock()
	if e.slot.Load() != e {
		// The table was closed while the frame loaded.
		return data, nil
	}
	e.pos = len(c.ring)
	c.ring = append(c.ring, e)
	c.used += int64(cap(data))
	for c.used > c.budget && len(c.ring) > 1 {
		if c.hand >= len(c.ring) {
			c.hand = 0
		}
		v := c.ring[c.hand]
		if v == e || v.ref.Load() {
			v.ref.Store(false)
			c.hand++
			continue
		}
		c.evict(v)
	}
	return data, nil
}

// evict removes a resident entry; c.mu is held.
func (c *FrameCache) evict(v *cacheEntry) {
	v.slot.CompareAndSwap(v, nil)
	last := len(c.ring) - 1
	c.ring[v.pos] = c.ring[last]
	c.ring[v.pos].pos = v.pos
	c.ring[last] = nil
	c.ring = c.ring[:last]
	v.pos = -1
	c.used -= int64(cap(v.data))
}

// drop forgets every resident frame held in slots, when their table is
// closed.
func (c *FrameCache) drop(slots []atomic.Pointer[cacheEntry]) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range slots {
		e := slots[i].Load()
		switch {
		case e == nil:
		case e.pos >= 0:
			c.evict(e)
		default:
			// Still loading: fill sees the empty slot and keeps the
			// frame out of the cache.
			slots[i].CompareAndSwap(e, nil)
		}
	}
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
