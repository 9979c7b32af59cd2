package tables

import (
	"math"
	"os"
	"runtime/debug"
)

// MinMemoryHeadroom is the least memory SetMemoryLimit allows beyond the
// caches: tables' headers and indexes, requests in flight, garbage.
const MinMemoryHeadroom = 64 << 20

// MemoryLimit is the soft memory limit for a process whose caches may hold
// cacheBytes (decoded blocks, the block caches of remote locations): those
// bytes and a quarter more, at least MinMemoryHeadroom more.
func MemoryLimit(cacheBytes int64) int64 {
	cacheBytes = max(cacheBytes, 0)
	headroom := max(cacheBytes/4, MinMemoryHeadroom)
	if cacheBytes > math.MaxInt64-headroom {
		return math.MaxInt64
	}
	return cacheBytes + headroom
}

// SetMemoryLimit makes MemoryLimit(cacheBytes) the Go runtime's soft memory
// limit, unless $GOMEMLIMIT set one, and returns the limit in force. A
// process whose caches are full keeps about their size live; by default
// the collector lets the heap grow to twice the live bytes before it runs,
// so a long-running server or mount with full caches used up to twice the
// memory its --cache-size flags promised. With the limit the collector
// runs once the heap nears the caches plus headroom instead; it stays soft
// (live data beyond it is never refused, the collector's CPU is capped),
// and a process that never fills its caches never reaches it.
func SetMemoryLimit(cacheBytes int64) int64 {
	if os.Getenv("GOMEMLIMIT") != "" {
		return debug.SetMemoryLimit(-1)
	}
	limit := MemoryLimit(cacheBytes)
	debug.SetMemoryLimit(limit)
	return limit
}
