package chesstb

import (
	"container/list"
	"context"
	"sync"
	"sync/atomic"
)

// blockKey names one block of one frame of one open table file.
type blockKey struct {
	file  uint64
	frame uint8
	block uint64
}

// blockCache holds decoded blocks of every open table under one byte budget,
// least recently used first out. A block is decoded once however many probes
// ask for it at the same time: the first asker decodes, the others wait.
type blockCache struct {
	mu    sync.Mutex
	max   int64
	used  int64
	peak  int64
	lru   list.List // of *cacheEntry, most recent at the front
	items map[blockKey]*cacheEntry
}

type cacheEntry struct {
	key   blockKey
	elem  *list.Element
	ready chan struct{}
	done  atomic.Bool // set just before ready is closed: a hit skips the select
	val   any         // the decoded block: []byte, or a parsed form (getValue)
	err   error
	size  int64
}

// entryOverhead is what an entry costs besides its bytes, counted against
// the budget so tiny blocks cannot grow the cache without bound.
const entryOverhead = 128

func newBlockCache(maxBytes int64) *blockCache {
	return &blockCache{max: maxBytes, items: make(map[blockKey]*cacheEntry)}
}

// get returns the decoded block for key, calling decode on a miss. The
// returned slice must not be modified.
func (c *blockCache) get(ctx context.Context, key blockKey, decode func() ([]byte, error)) ([]byte, error) {
	v, err := c.getValue(ctx, key, func() (any, int64, error) {
		data, err := decode()
		return data, int64(cap(data)), err
	})
	data, _ := v.([]byte)
	return data, err
}

// getValue is get for a block kept in a decoded form other than its bytes
// (the changepoint packs keep a parsed block with its prefix index); decode
// also reports how many bytes that form holds, which is what the budget
// counts. The returned value must not be modified.
func (c *blockCache) getValue(ctx context.Context, key blockKey, decode func() (any, int64, error)) (any, error) {
	c.mu.Lock()
	if e, ok := c.items[key]; ok {
		if e.elem != nil {
			c.lru.MoveToFront(e.elem)
		}
		c.mu.Unlock()
		if e.done.Load() {
			return e.val, e.err
		}
		select {
		case <-e.ready:
			return e.val, e.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	e := &cacheEntry{key: key, ready: make(chan struct{})}
	c.items[key] = e
	c.mu.Unlock()

	val, size, err := decode()

	c.mu.Lock()
	e.val, e.err = val, err
	e.size = size + entryOverhead
	if err != nil || e.size > c.max {
		// Failures are not remembered (a transport error may clear), and a
		// block larger than the whole budget is handed out uncached.
		delete(c.items, key)
	} else {
		for c.used+e.size > c.max {
			c.evictOldest()
		}
		e.elem = c.lru.PushFront(e)
		c.used += e.size
		c.peak = max(c.peak, c.used)
	}
	c.mu.Unlock()
	e.done.Store(true)
	close(e.ready)
	return val, err
}

// peek returns a cached, fully decoded block without arranging a decode:
// the allocation-free path of a hit.
func (c *blockCache) peek(key blockKey) (any, bool) {
	c.mu.Lock()
	e, ok := c.items[key]
	if !ok || e.elem == nil {
		c.mu.Unlock()
		return nil, false
	}
	c.lru.MoveToFront(e.elem)
	c.mu.Unlock()
	return e.val, true
}

// resize adds delta bytes to the size of the cached block val under key, a
// block that grew since it was cached, evicting the least recently used
// blocks (this one too, when it alone outgrows the budget) to stay in
// budget. A block no longer cached is left alone.
func (c *blockCache) resize(key blockKey, val any, delta int64) {
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

func (c *blockCache) evictOldest() {
	back := c.lru.Back()
	e := back.Value.(*cacheEntry)
	c.lru.Remove(back)
	c.forget(e)
}

// forget removes entry e, already off the LRU list, and tells its block,
// when the block wants to know (evictable), that it is no longer cached.
func (c *blockCache) forget(e *cacheEntry) {
	delete(c.items, e.key)
	c.used -= e.size
	if ev, ok := e.val.(evictable); ok {
		ev.markEvicted()
	}
}

// evictable is a cached value that must know when the cache drops it.
type evictable interface{ markEvicted() }

// dropFile forgets every block of one file (when it is closed).
func (c *blockCache) dropFile(file uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for el := c.lru.Front(); el != nil; {
		next := el.Next()
		e := el.Value.(*cacheEntry)
		if e.key.file == file {
			c.lru.Remove(el)
			c.forget(e)
		}
		el = next
	}
}

// stats returns the bytes held now and the most ever held.
func (c *blockCache) stats() (used, peak int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used, c.peak
}
