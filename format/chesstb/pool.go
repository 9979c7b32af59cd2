package chesstb

import (
	"sync"
	"sync/atomic"
)

// blockPool keeps the buffers of decoded WDL blocks the cache has dropped
// and no probe holds, for the next decode of a block of the same size.
// Reusing them spares the allocation and clearing of a fresh 64 KiB buffer
// per decode (three tenths of a thrashing WDL pass) and the garbage that
// lifted the heap to twice the cache's budget. The buffers kept are few:
// with the cache full, each decode follows the eviction of about one block.
type blockPool struct {
	mu   sync.Mutex
	free map[int][][]byte // by length
}

// maxPooledBuffers bounds the buffers kept per length; more go to the
// garbage collector.
const maxPooledBuffers = 16

// get returns a buffer of n bytes, reused or new. A reused one holds an
// earlier block's bytes: the decode overwrites all of them.
func (p *blockPool) get(n int) []byte {
	p.mu.Lock()
	if l := p.free[n]; len(l) > 0 {
		b := l[len(l)-1]
		p.free[n] = l[:len(l)-1]
		p.mu.Unlock()
		return b
	}
	p.mu.Unlock()
	return make([]byte, n)
}

func (p *blockPool) put(b []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.free == nil {
		p.free = make(map[int][][]byte)
	}
	if l := p.free[len(b)]; len(l) < maxPooledBuffers {
		p.free[len(b)] = append(l, b)
	}
}

// pooledBlock is a decoded block in a buffer of a blockPool. The buffer goes
// back to the pool only when its last holder lets it go: the cache holds one
// reference while it keeps the block (blockcache.Shared: MarkEvicted gives
// it up), and every probe that was handed the block holds one until
// release, so a buffer is never reused while a probe may still read it.
type pooledBlock struct {
	data []byte
	refs atomic.Int32
	pool *blockPool
}

// newPooledBlock wraps buf, taken from pool, holding one reference: the
// cache's.
func newPooledBlock(pool *blockPool, buf []byte) *pooledBlock {
	pb := &pooledBlock{data: buf, pool: pool}
	pb.refs.Store(1)
	return pb
}

// Acquire takes a reference for a new holder.
func (pb *pooledBlock) Acquire() { pb.refs.Add(1) }

// MarkEvicted gives up the cache's reference.
func (pb *pooledBlock) MarkEvicted() { pb.release() }

// release gives up one reference; the last returns the buffer to the pool.
func (pb *pooledBlock) release() {
	if pb.refs.Add(-1) == 0 {
		buf := pb.data
		// A holder that released too early now reads an empty block,
		// which readers report as corrupt, rather than another block's
		// bytes.
		pb.data = nil
		pb.pool.put(buf)
	}
}
