// Package blockcache holds decoded table blocks of every open table, of any
// format, under one byte budget, least recently used first out. Readers of
// different formats (chesstb, Syzygy) that share a Cache share its budget,
// so a front end's --cache flag bounds all of them together.
//
// A block is decoded once however many probes ask for it at the same time:
// the first asker decodes, the others wait for its result.
package blockcache

import (
	"container/list"
	"context"
	"sync"
	"sync/atomic"
)

// Key names one block of one frame of one open table file.
type Key struct {
	File  uint64 // from NewFileID, unique across every reader in the process
	Frame uint8
	Block uint64
}

var lastFileID atomic.Uint64

// NewFileID returns an id no other open table file of any reader has, so
// readers sharing a Cache never collide on keys.
func NewFileID() uint64 { return lastFileID.Add(1) }

// Evictable is a cached value that must know when the cache drops it (a
// block decoded lazily stops growing its budget charge once it is out).
type Evictable interface{ MarkEvicted() }

// Shared is a cached value whose memory is reused once nobody holds it (a
// block in a pooled buffer), so the cache counts its holders for it. The
// value decode returns carries one reference, the cache's own, which the
// cache gives up with MarkEvicted when it drops the value. Before Get,
// GetValue or Peek hands a Shared value out it calls Acquire under its lock,
// so a value is never handed out after the cache let it go; the caller
// owes one release (the value's own method) per value handed to it. A value
// too large to cache is handed out with the cache's reference instead.
type Shared interface {
	Evictable
	Acquire()
}

// Cache is the shared budget of decoded blocks. It is safe for concurrent use.
type Cache struct {
	mu    sync.Mutex
	max   int64
	used  int64
	peak  int64
	lru   list.List // of *entry, most recent at the front
	items map[Key]*entry
}

type entry struct {
	key  Key
	elem *list.Element
	// ready is made, under Cache.mu, only when a second asker has to wait
	// for the decode (most misses have no such asker), and closed when the
	// decode is done.
	ready chan struct{}
	done  bool // under Cache.mu: val and err are final
	val   any
	err   error
	size  int64
}

// entryOverhead is what an entry costs besides its bytes, counted against
// the budget so tiny blocks cannot grow the cache without bound.
const entryOverhead = 128

// New returns a cache holding at most maxBytes of decoded blocks.
func New(maxBytes int64) *Cache {
	return &Cache{max: maxBytes, items: make(map[Key]*entry)}
}

// Get returns the decoded block for key, calling decode on a miss. The
// returned slice must not be modified.
func (c *Cache) Get(ctx context.Context, key Key, decode func() ([]byte, error)) ([]byte, error) {
	v, err := c.GetValue(ctx, key, func() (any, int64, error) {
		data, err := decode()
		return data, int64(cap(data)), err
	})
	data, _ := v.([]byte)
	return data, err
}

// GetValue is Get for a block kept in a decoded form other than its bytes (a
// parsed block with an index, say); decode also reports how many bytes that
// form holds, which is what the budget counts. The returned value must not
// be modified; a Shared value comes acquired for the caller.
func (c *Cache) GetValue(ctx context.Context, key Key, decode func() (any, int64, error)) (any, error) {
	for {
		c.mu.Lock()
		e, ok := c.items[key]
		if !ok {
			break // c.mu stays locked for the decode's entry
		}
		if e.elem != nil {
			// Cached, so decoded.
			c.lru.MoveToFront(e.elem)
			acquire(e.val)
			c.mu.Unlock()
			return e.val, nil
		}
		if !e.done {
			if e.ready == nil {
				e.ready = make(chan struct{})
			}
			ready := e.ready
			c.mu.Unlock()
			select {
			case <-ready:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		} else {
			c.mu.Unlock()
		}
		if e.err != nil {
			return nil, e.err
		}
		if _, shared := e.val.(Shared); !shared {
			return e.val, nil
		}
		// A Shared value is handed out only while cached: take it
		// from the cache, or decode it again if the cache already let it go.
		c.mu.Lock()
		if c.items[key] == e && e.elem != nil {
			acquire(e.val)
			c.mu.Unlock()
			return e.val, nil
		}
		c.mu.Unlock()
	}
	e := &entry{key: key}
	c.items[key] = e
	c.mu.Unlock()

	val, size, err := decode()

	c.mu.Lock()
	e.val, e.err = val, err
	e.size = size + entryOverhead
	if err != nil || e.size > c.max {
		// Failures are not remembered (a transport error may clear), and a
		// block larger than the whole budget is handed out uncached, with
		// the cache's reference when it is Shared.
		delete(c.items, key)
	} else {
		for c.used+e.size > c.max {
			c.evictOldest()
		}
		e.elem = c.lru.PushFront(e)
		c.used += e.size
		c.peak = max(c.peak, c.used)
		acquire(val)
	}
	e.done = true
	ready := e.ready
	c.mu.Unlock()
	if ready != nil {
		close(ready)
	}
	return val, err
}

// acquire takes a reference to v for a caller when v is Shared.
func acquire(v any) {
	if s, ok := v.(Shared); ok {
		s.Acquire()
	}
}

// Peek returns a cached, fully decoded block without arranging a decode:
// the allocation-free path of a hit. A Shared value comes acquired for the
// caller.
func (c *Cache) Peek(key Key) (any, bool) {
	c.mu.Lock()
	e, ok := c.items[key]
	if !ok || e.elem == nil {
		c.mu.Unlock()
		return nil, false
	}
	c.lru.MoveToFront(e.elem)
	acquire(e.val)
	c.mu.Unlock()
	return e.val, true
}

// Has reports whether key's block is cached and fully decoded, without
// handing it out (so a Shared value is not acquired) or making it more
// recently used.
func (c *Cache) Has(key Key) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[key]
	return ok && e.elem != nil
}

// Resize adds delta bytes to the size of the cached block val under key, a
// block that grew since it was cached, evicting the least recently used
// blocks (this one too, when it alone outgrows the budget) to stay in
// budget. A block no longer cached is left alone.
func (c *Cache) Resize(key Key, val any, delta int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[key]
	if !ok || e.elem == nil || e.val != val {
		return
	}
	e.size += delta
	c.used += delta
	for c.used > c.max && c.lru.Len() > 0 {
		c.evictOldest()
	}
	c.peak = max(c.peak, c.used)
}

func (c *Cache) evictOldest() {
	back := c.lru.Back()
	e := back.Value.(*entry)
	c.lru.Remove(back)
	c.forget(e)
}

// forget removes entry e, already off the LRU list, and tells its block,
// when the block wants to know (Evictable), that it is no longer cached.
func (c *Cache) forget(e *entry) {
	delete(c.items, e.key)
	c.used -= e.size
	if ev, ok := e.val.(Evictable); ok {
		ev.MarkEvicted()
	}
}

// DropFile forgets every block of one file (when it is closed).
func (c *Cache) DropFile(file uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for el := c.lru.Front(); el != nil; {
		next := el.Next()
		e := el.Value.(*entry)
		if e.key.File == file {
			c.lru.Remove(el)
			c.forget(e)
		}
		el = next
	}
}

// Stats returns the bytes held now and the most ever held.
func (c *Cache) Stats() (used, peak int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used, c.peak
}
