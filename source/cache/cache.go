// Package cache keeps recently read blocks of remote objects in memory,
// within one byte budget shared by every object of the wrapped source.
//
// Reads are served in fixed-size blocks aligned to multiples of BlockSize.
// A read fetches exactly the blocks it overlaps that are not cached — never
// a block beyond the last byte asked for — and the missing blocks of one read
// that lie next to each other are fetched with one request, so a cold read is
// one request to the source below whatever its length. Tablebase probes are
// small random reads in huge files; reading ahead would only waste the
// budget and the link.
//
// Fetches are single-flight: readers that need a block another reader is
// already fetching wait for that fetch instead of sending their own. Blocks
// read with source.HintHeader or source.HintIndex are pinned ahead of data
// blocks: eviction takes the least recently used data block first and
// touches header and index blocks only when no data block is left.
package cache

import (
	"container/list"
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"

	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/metrics"
)

// Default sizes.
const (
	DefaultBudget    = 256 << 20
	DefaultBlockSize = 64 << 10
)

// Options tune a cache; the zero value means the defaults.
type Options struct {
	// Budget caps the bytes of cached blocks. Zero means DefaultBudget.
	Budget int64
	// BlockSize is the unit of caching. Zero means DefaultBlockSize.
	BlockSize int
	// Counters, when set, counts hits, misses, joins and evictions (per
	// block).
	Counters *metrics.Counters
}

// Source caches the blocks read through it.
type Source struct {
	inner  source.Source
	budget int64
	bs     int64
	c      *metrics.Counters
	closed atomic.Bool

	mu      sync.Mutex
	entries map[key]*entry
	data    list.List // ready data blocks, most recently used first
	pinned  list.List // ready header and index blocks, likewise
	used    int64
}

var (
	_ source.Source     = (*Source)(nil)
	_ source.Lister     = (*Source)(nil)
	_ source.Prefetcher = (*object)(nil)
)

// key names one block. The size and the version (where the transport
// names one) are part of it so that an object that is replaced never shares
// blocks with its old self.
type key struct {
	name    string
	size    int64
	version string
	block   int64
}

// entry is a block being fetched (done open) or cached (done closed).
type entry struct {
	key    key
	done   chan struct{}
	data   []byte // valid once done is closed and err is nil
	err    error
	hint   source.Hint // of the read that asked for the block first
	pinned bool
	elem   *list.Element // position in data or pinned; nil while in flight or once evicted
}

// Wrap caches src's blocks under opts.
func Wrap(src source.Source, opts Options) *Source {
	s := &Source{inner: src, budget: opts.Budget, bs: int64(opts.BlockSize), c: opts.Counters,
		entries: map[key]*entry{}}
	if s.budget <= 0 {
		s.budget = DefaultBudget
	}
	if s.bs <= 0 {
		s.bs = DefaultBlockSize
	}
	return s
}

// Unwrap returns the wrapped source.
func (s *Source) Unwrap() source.Source { return s.inner }

// Budget is the most bytes the cache holds.
func (s *Source) Budget() int64 { return s.budget }

// Used is the number of bytes cached now.
func (s *Source) Used() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used
}

// Open opens the object below; its reads go through the cache.
func (s *Source) Open(ctx context.Context, name string) (source.Object, error) {
	if s.closed.Load() {
		if err := source.CheckName(name); err != nil {
			return nil, &source.Error{Op: "open", Name: name, Err: err}
		}
		return nil, &source.Error{Op: "open", Name: name, Err: source.ErrClosed}
	}
	obj, err := s.inner.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	return &object{Object: obj, s: s, name: name, size: obj.Size(), version: source.VersionOf(obj)}, nil
}

// List passes through to the source below.
func (s *Source) List(ctx context.Context, prefix string) ([]source.Entry, error) {
	return source.List(ctx, s.inner, prefix)
}

// Close drops every cached block and closes the source below.
func (s *Source) Close() error {
	s.closed.Store(true)
	s.mu.Lock()
	s.entries = map[key]*entry{}
	s.data.Init()
	s.pinned.Init()
	s.used = 0
	s.mu.Unlock()
	return s.inner.Close()
}

type object struct {
	source.Object
	s       *Source
	name    string
	size    int64
	version string
	closed  atomic.Bool
}

// Version passes on the version of the object below.
func (o *object) Version() string { return source.VersionOf(o.Object) }

// Close closes the object below; cached blocks stay for other readers.
func (o *object) Close() error {
	o.closed.Store(true)
	return o.Object.Close()
}

func (o *object) ReadAt(ctx context.Context, p []byte, off int64, hint source.Hint) (int, error) {
	if err := source.CheckRange(off, len(p), o.size); err != nil {
		return 0, &source.Error{Op: "read", Name: o.name, Err: err}
	}
	if err := ctx.Err(); err != nil {
		return 0, &source.Error{Op: "read", Name: o.name, Err: err}
	}
	if o.closed.Load() || o.s.closed.Load() {
		return 0, &source.Error{Op: "read", Name: o.name, Err: source.ErrClosed}
	}
	want := min(int64(len(p)), o.size-off)
	if want == 0 {
		// Still ask the object below, so a closed object says so.
		return o.Object.ReadAt(ctx, p, off, hint)
	}
	if want > o.s.budget/4 {
		// A read this large would flush most of the cache; pass it by.
		return o.Object.ReadAt(ctx, p, off, hint)
	}
	blocks, err := o.blocks(ctx, off, want, hint)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range blocks {
		start := e.key.block * o.s.bs
		from := max(off+int64(n)-start, 0)
		n += copy(p[n:want], e.data[from:])
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Prefetch fetches the blocks of [off, off+n) that are not cached, as a
// read of that range would, without copying them out.
func (o *object) Prefetch(ctx context.Context, off int64, n int, hint source.Hint) error {
	if err := source.CheckRange(off, n, o.size); err != nil {
		return &source.Error{Op: "prefetch", Name: o.name, Err: err}
	}
	if o.closed.Load() || o.s.closed.Load() {
		return &source.Error{Op: "prefetch", Name: o.name, Err: source.ErrClosed}
	}
	want := min(int64(n), o.size-off)
	if want <= 0 || want > o.s.budget/4 {
		return nil // nothing to fetch, or too large to keep
	}
	_, err := o.blocks(ctx, off, want, hint)
	return err
}

// blocks returns the ready entries covering [off, off+want), fetching the
// missing ones.
func (o *object) blocks(ctx context.Context, off, want int64, hint source.Hint) ([]*entry, error) {
	s := o.s
	first, last := off/s.bs, (off+want-1)/s.bs
	pin := hint == source.HintHeader || hint == source.HintIndex
	for {
		out := make([]*entry, 0, last-first+1)
		var mine, theirs []*entry
		s.mu.Lock()
		for b := first; b <= last; b++ {
			k := key{o.name, o.size, o.version, b}
			e := s.entries[k]
			switch {
			case e == nil:
				e = &entry{key: k, done: make(chan struct{}), hint: hint, pinned: pin}
				s.entries[k] = e
				mine = append(mine, e)
			case e.elem != nil:
				s.touch(e, pin)
				s.c.Hit(1)
			default:
				theirs = append(theirs, e)
			}
			out = append(out, e)
		}
		s.mu.Unlock()
		s.c.Miss(int64(len(mine)))
		s.c.Join(int64(len(theirs)))

		ferr := o.fetch(ctx, mine)
		if ferr != nil {
			return nil, ferr
		}
		retryAll := false
		for _, e := range theirs {
			select {
			case <-e.done:
			case <-ctx.Done():
				return nil, &source.Error{Op: "read", Name: o.name, Err: ctx.Err()}
			}
			if e.err != nil {
				// Another reader's cancellation is not ours: fetch
				// the block again.
				if isCtxErr(e.err) && ctx.Err() == nil {
					retryAll = true
					continue
				}
				return nil, e.err
			}
		}
		if !retryAll {
			return out, nil
		}
	}
}

func isCtxErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// fetch reads the blocks in mine, which this reader owns, one request per
// run of adjacent blocks, and publishes each result to the waiting readers.
// Every owned block is finished, fetched or failed, before it returns.
func (o *object) fetch(ctx context.Context, mine []*entry) error {
	var firstErr error
	for i := 0; i < len(mine); {
		j := i + 1
		for j < len(mine) && mine[j].key.block == mine[j-1].key.block+1 {
			j++
		}
		run := mine[i:j]
		i = j
		if firstErr != nil {
			o.s.finish(run, nil, firstErr)
			continue
		}
		start := run[0].key.block * o.s.bs
		end := min((run[len(run)-1].key.block+1)*o.s.bs, o.size)
		buf := make([]byte, end-start)
		n, err := o.Object.ReadAt(ctx, buf, start, run[0].hint)
		if err == io.EOF && n == len(buf) {
			err = nil
		}
		if err == nil && n != len(buf) {
			err = source.Permanent(io.ErrUnexpectedEOF)
		}
		if err != nil {
			firstErr = err
		}
		o.s.finish(run, buf, err)
		if errors.Is(err, source.ErrChanged) {
			o.s.dropVersion(o.name, o.size, o.version)
		}
	}
	return firstErr
}

// dropVersion forgets every cached block of one version of an object, once
// a read finds the object replaced: nothing will ask for them again (the
// reopened object has another version), so they would only hold budget
// that current blocks could use.
func (s *Source) dropVersion(name string, size int64, version string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, e := range s.entries {
		if k.name != name || k.size != size || k.version != version || e.elem == nil {
			continue
		}
		if e.pinned {
			s.pinned.Remove(e.elem)
		} else {
			s.data.Remove(e.elem)
		}
		e.elem = nil
		delete(s.entries, k)
		s.used -= int64(len(e.data))
		s.c.Evict(1)
	}
}

// finish publishes the outcome of a fetch of run, which read buf from the
// start of its first block.
func (s *Source) finish(run []*entry, buf []byte, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, e := range run {
		if err != nil {
			e.err = err
			if s.entries[e.key] == e {
				delete(s.entries, e.key)
			}
			close(e.done)
			continue
		}
		// Each block of a longer run gets its own copy, so evicting one
		// block frees its memory even when it was fetched with others.
		if len(run) == 1 {
			e.data = buf
		} else {
			from := int64(i) * s.bs
			e.data = append([]byte(nil), buf[from:min(from+s.bs, int64(len(buf)))]...)
		}
		close(e.done)
		if s.entries[e.key] != e {
			continue // the cache was closed meanwhile
		}
		if e.pinned {
			e.elem = s.pinned.PushFront(e)
		} else {
			e.elem = s.data.PushFront(e)
		}
		s.used += int64(len(e.data))
	}
	s.evict()
}

// touch marks e as just used, moving it among the pinned blocks when a
// header or index read asks for it. s.mu is held.
func (s *Source) touch(e *entry, pin bool) {
	if pin && !e.pinned {
		s.data.Remove(e.elem)
		e.pinned = true
		e.elem = s.pinned.PushFront(e)
		return
	}
	if e.pinned {
		s.pinned.MoveToFront(e.elem)
	} else {
		s.data.MoveToFront(e.elem)
	}
}

// evict drops least recently used blocks, data before pinned, until the
// budget holds. s.mu is held.
func (s *Source) evict() {
	for s.used > s.budget {
		l := &s.data
		if l.Len() == 0 {
			l = &s.pinned
		}
		back := l.Back()
		if back == nil {
			return
		}
		e := l.Remove(back).(*entry)
		e.elem = nil
		delete(s.entries, e.key)
		s.used -= int64(len(e.data))
		s.c.Evict(1)
	}
}
