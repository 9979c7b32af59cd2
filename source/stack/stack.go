// Package stack opens a source by URL with the wrappers a front end wants
// around it, in the one order that makes their counters meaningful:
//
//	cache → [diskcache] → listcache → retry → limit → breaker → metrics → transport
//
// The metrics wrapper sits right above the transport, so Stats().Requests
// is the number of requests the transport really made (retries included);
// the retry wrapper repeats transient failures below the cache, so a cached
// block is fetched at most once per reader even when its fetch needed
// retries; the limit bounds the requests in flight per attempt, so a retry's
// backoff holds no slot; the breaker sits under the limit, so calls queued
// for a slot when a source dies are refused at once instead of each paying
// a timeout, and under the retries, so its refusal (not retryable) ends
// them; the listing cache answers lookups of missing objects
// from one listing (or a remembered miss) above the retries; the cache is
// outermost, so hits cost no request at all; the optional disk cache
// (Options.Disk) sits under it, so a memory miss that the disk holds costs
// no request either, and within the metadata TTL neither does an open the
// disk remembers. Local sources (file URLs and
// plain paths) are memory-mapped already and get neither cache.
//
// It imports source/all, so every built-in transport is registered.
package stack

import (
	"context"
	"fmt"
	"time"

	"github.com/tbfs/tbfs/source"
	_ "github.com/tbfs/tbfs/source/all" // every built-in transport
	"github.com/tbfs/tbfs/source/breaker"
	"github.com/tbfs/tbfs/source/cache"
	"github.com/tbfs/tbfs/source/diskcache"
	"github.com/tbfs/tbfs/source/limit"
	"github.com/tbfs/tbfs/source/listcache"
	"github.com/tbfs/tbfs/source/metrics"
	"github.com/tbfs/tbfs/source/retry"
)

// Options tune the stack; the zero value is what a front end should use.
type Options struct {
	// CacheBytes is the block cache budget for remote sources. Zero means
	// cache.DefaultBudget; a negative value turns the cache off.
	CacheBytes int64
	// BlockSize is the cache's block size. Zero means
	// cache.DefaultBlockSize.
	BlockSize int
	// Retry is the retry policy; its Counters field is set by Open.
	Retry retry.Policy
	// CacheLocal caches local sources too (useful only for measuring).
	CacheLocal bool
	// MaxRequests bounds the requests in flight to the transport. Zero
	// means limit.DefaultRequests.
	MaxRequests int
	// MetadataTTL is how long a listing of a remote source, and a miss,
	// answer whether an object exists. Zero means listcache.DefaultTTL.
	MetadataTTL time.Duration
	// Breaker tunes the circuit breaker of remote sources; Open sets its
	// URL field when empty.
	Breaker breaker.Options
	// Disk, when its Dir is set, keeps the blocks fetched from a remote
	// source on disk, across runs. Local sources never get it.
	Disk DiskOptions
	// Trace, when set, records every request that reaches the transport
	// (metrics.Trace), for counting round trips.
	Trace *metrics.Trace
}

// DiskOptions configure the disk cache of a remote source.
type DiskOptions struct {
	// Dir holds the cache files of every source (they are told apart by
	// their URL); "" means no disk cache.
	Dir string
	// Budget bounds the bytes Dir may hold; it must be positive.
	Budget int64
}

// Stack is an opened source with its wrappers. It is itself a source and a
// lister.
type Stack struct {
	top      source.Source
	counters *metrics.Counters
	cache    *cache.Source
	breaker  *breaker.Source
	disk     *diskcache.Source
}

var (
	_ source.Source = (*Stack)(nil)
	_ source.Lister = (*Stack)(nil)
)

// Open opens rawURL with source.Open and wraps it as the package
// documentation describes.
func Open(ctx context.Context, rawURL string, opts Options) (*Stack, error) {
	u, err := source.ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	raw, err := source.Open(ctx, rawURL)
	if err != nil {
		return nil, err
	}
	if opts.Breaker.URL == "" {
		opts.Breaker.URL = source.Redact(u)
	}
	st, err := build(raw, u.Scheme != "file", source.Redact(u), opts)
	if err != nil {
		raw.Close()
		return nil, err
	}
	return st, nil
}

// Wrap builds the stack over a source opened some other way; remote says
// whether it gets the caches and the breaker.
// It ignores opts.Disk, which needs the source's URL: use Open for a disk
// cache.
func Wrap(raw source.Source, remote bool, opts Options) *Stack {
	opts.Disk = DiskOptions{}
	st, _ := build(raw, remote, "", opts) // only the disk cache can fail
	return st
}

// build wraps raw; location names it in the disk cache.
func build(raw source.Source, remote bool, location string, opts Options) (*Stack, error) {
	c := new(metrics.Counters)
	c.SetTrace(opts.Trace)
	p := opts.Retry
	p.Counters = c
	st := &Stack{counters: c}
	var below source.Source = metrics.Wrap(raw, c)
	if remote {
		st.breaker = breaker.Wrap(below, opts.Breaker)
		below = st.breaker
	}
	var top source.Source = retry.Wrap(limit.Wrap(below, opts.MaxRequests), p)
	if remote {
		top = listcache.Wrap(top, listcache.Options{TTL: opts.MetadataTTL})
	}
	if remote && opts.Disk.Dir != "" {
		ttl := opts.MetadataTTL
		if ttl == 0 {
			ttl = listcache.DefaultTTL
		}
		// The disk stores whole blocks of the memory cache above it.
		bs := opts.BlockSize
		if bs == 0 {
			bs = cache.DefaultBlockSize
		}
		d, err := diskcache.Wrap(top, diskcache.Options{
			Dir: opts.Disk.Dir, Budget: opts.Disk.Budget, BlockSize: bs, Location: location, MetadataTTL: ttl,
		})
		if err != nil {
			return nil, fmt.Errorf("disk cache %s: %w", opts.Disk.Dir, err)
		}
		st.disk, top = d, d
	}
	if (remote || opts.CacheLocal) && opts.CacheBytes >= 0 {
		st.cache = cache.Wrap(top, cache.Options{Budget: opts.CacheBytes, BlockSize: opts.BlockSize, Counters: c})
		top = st.cache
	}
	st.top = top
	return st, nil
}

// Stats returns a snapshot of every counter in the stack.
func (s *Stack) Stats() metrics.Stats { return s.counters.Stats() }

// BreakerStats reports the circuit breaker's counters (zero for a local
// source, which has none).
func (s *Stack) BreakerStats() breaker.Stats {
	if s.breaker == nil {
		return breaker.Stats{}
	}
	return s.breaker.Stats()
}

// CacheBudget is the most bytes the memory cache holds (0 without one).
func (s *Stack) CacheBudget() int64 {
	if s.cache == nil {
		return 0
	}
	return s.cache.Budget()
}

// CachedBytes is the number of bytes the cache holds now (0 without one).
func (s *Stack) CachedBytes() int64 {
	if s.cache == nil {
		return 0
	}
	return s.cache.Used()
}

// DiskCachedBytes is the number of bytes the disk cache holds now (0
// without one).
func (s *Stack) DiskCachedBytes() int64 {
	if s.disk == nil {
		return 0
	}
	return s.disk.Used()
}

// Open opens the named object through the stack.
func (s *Stack) Open(ctx context.Context, name string) (source.Object, error) {
	return s.top.Open(ctx, name)
}

// List lists through the stack; it fails with source.ErrUnsupported when
// the transport cannot list.
func (s *Stack) List(ctx context.Context, prefix string) ([]source.Entry, error) {
	return source.List(ctx, s.top, prefix)
}

// Close closes every layer.
func (s *Stack) Close() error { return s.top.Close() }

// Unwrap returns the outermost wrapper.
func (s *Stack) Unwrap() source.Source { return s.top }
