package geister

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
)

// FrameCache keeps decoded table frames in memory under one byte budget
// shared by every table that uses it. It is split into shards, each with its
// own lock and least-recently-used list, so concurrent probes of different
// frames rarely wait for each other; a frame that several goroutines miss at
// once is decoded by one of them while the others wait for it.
type FrameCache struct {
	shards [cacheShards]cacheShard
	hits   atomic.Uint64
	misses atomic.Uint64
}

const cacheShards = 32

// DefaultCacheBytes is the frame cache budget Open uses when Options gives
// none: 64 MiB, about 8000 frames of 8 KiB.
const DefaultCacheBytes = 64 << 20

// frameKey names one frame of one open table.
type frameKey struct {
	table uint64 // unique per open table, see nextTableID
	frame uint32
}

// cacheEntry is one frame, decoded or being decoded.
type cacheEntry struct {
	key  frameKey
	data []byte
	err  error
	// done is closed when data or err is set.
	done       chan struct{}
	prev, next *cacheEntry // LRU list, most recent at head.next
	listed     bool
}

type cacheShard struct {
	mu     sync.Mutex
	budget int64
	used   int64
	items  map[frameKey]*cacheEntry
	head   cacheEntry // sentinel of the circular LRU list
}

// NewFrameCache returns a cache that holds at most budget bytes of decoded
// frames (at least one frame per shard is kept whatever the budget).
func NewFrameCache(budget int64) *FrameCache {
	c := &FrameCache{}
	for i := range c.shards {
		s := &c.shards[i]
		s.budget = budget / cacheShards
		s.items = make(map[frameKey]*cacheEntry)
		s.head.prev, s.head.next = &s.head, &s.head
	}
	return c
}

// Stats returns the number of lookups answered from memory and the number
// that had to load a frame.
func (c *FrameCache) Stats() (hits, misses uint64) {
	return c.hits.Load(), c.misses.Load()
}

func (c *FrameCache) shard(k frameKey) *cacheShard {
	h := k.table*0x9E3779B97F4A7C15 ^ uint64(k.frame)*0xC2B2AE3D27D4EB4F
	return &c.shards[(h>>32)%cacheShards]
}

// get returns the frame k, calling load on a miss. Errors are not cached: a
// later get tries again.
func (c *FrameCache) get(ctx context.Context, k frameKey, load func() ([]byte, error)) ([]byte, error) {
	s := c.shard(k)
	s.mu.Lock()
	if e, ok := s.items[k]; ok {
		if e.listed {
			s.unlink(e)
			s.pushFront(e)
			s.mu.Unlock()
			c.hits.Add(1)
			return e.data, nil
		}
		s.mu.Unlock()
		c.hits.Add(1)
		select {
		case <-e.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if e.err != nil && isContextErr(e.err) && ctx.Err() == nil {
			// The goroutine that loaded the frame was cancelled, not
			// this one: load it again for this caller.
			return c.get(ctx, k, load)
		}
		return e.data, e.err
	}
	e := &cacheEntry{key: k, done: make(chan struct{})}
	s.items[k] = e
	s.mu.Unlock()
	c.misses.Add(1)

	data, err := load()

	s.mu.Lock()
	e.data, e.err = data, err
	if err != nil {
		delete(s.items, k)
	} else {
		s.pushFront(e)
		s.used += int64(cap(data))
		for s.used > s.budget && s.head.prev != e {
			old := s.head.prev
			s.unlink(old)
			delete(s.items, old.key)
			s.used -= int64(cap(old.data))
		}
	}
	s.mu.Unlock()
	close(e.done)
	return data, err
}

func (s *cacheShard) unlink(e *cacheEntry) {
	e.prev.next, e.next.prev = e.next, e.prev
	e.prev, e.next, e.listed = nil, nil, false
}

func (s *cacheShard) pushFront(e *cacheEntry) {
	e.prev, e.next = &s.head, s.head.next
	s.head.next.prev = e
	s.head.next = e
	e.listed = true
}

// drop forgets every frame of one table, when the table is closed.
func (c *FrameCache) drop(table uint64) {
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		for k, e := range s.items {
			if k.table == table && e.listed {
				s.unlink(e)
				delete(s.items, k)
				s.used -= int64(cap(e.data))
			}
		}
		s.mu.Unlock()
	}
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
