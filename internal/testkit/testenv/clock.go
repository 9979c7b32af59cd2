package testenv

import (
	"sync"
	"time"
)

// Clock is a time a test moves by hand, for code that takes a Now func
// (time-to-live caches, say). It is safe for concurrent use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock showing start.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Now returns the time the clock shows.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Add moves the clock on by d.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}
