// Package prefix keeps the first bytes of an object that a transport got
// with the request that opened it, so the read that asks for them next costs
// no request. The transports that open an object with a ranged GET (the size
// and the version come with its answer) keep its body here instead of
// sending a HEAD first.
package prefix

import "sync"

// Bytes is the start of an object, from offset 0. The zero value holds
// nothing. It is safe for concurrent use.
type Bytes struct {
	mu    sync.Mutex
	data  []byte
	total int64 // len(data) as given to New
}

// New keeps data, the object's bytes from offset 0.
func New(data []byte) *Bytes { return &Bytes{data: data, total: int64(len(data))} }

// Len is how many bytes New was given, held or not.
func (b *Bytes) Len() int64 {
	if b == nil {
		return 0
	}
	return b.total
}

// Holds reports whether Read(p, off) with len(p) == n would copy all n
// bytes now.
func (b *Bytes) Holds(off int64, n int) bool {
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return off >= 0 && off+int64(n) <= int64(len(b.data))
}

// Read copies into p the bytes at off that the prefix holds and returns how
// many it copied: all of p, or the part before the prefix ends, or 0 when
// off lies past it. A read that takes the prefix's last byte drops it: by
// then a cache above the object holds it, and an object kept open for long
// should not hold memory twice.
func (b *Bytes) Read(p []byte, off int64) int {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if off < 0 || off >= int64(len(b.data)) {
		return 0
	}
	n := copy(p, b.data[off:])
	if off+int64(n) == int64(len(b.data)) {
		b.data = nil
	}
	return n
}
