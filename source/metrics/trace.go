package metrics

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tbfs/tbfs/source"
)

// Trace records when each request to a transport was sent and when its
// answer came, so a benchmark can count what a cold probe costs in round
// trips: the longest chain of requests each sent after the one before it
// was answered, which over a remote store is what the probe waited for.
// Requests a transport reports (source.ObserveRequest) are recorded one by
// one; a call to a transport that reports none counts as one request. The
// zero value is ready; it is safe for concurrent use.
type Trace struct {
	mu    sync.Mutex
	sent  int
	spans []span // of the requests answered
}

type span struct{ sent, answered time.Time }

// send records a request sent now, and returns the function that records
// its answer.
func (t *Trace) send() func() {
	t.mu.Lock()
	t.sent++
	t.mu.Unlock()
	sent := time.Now()
	return func() { t.add(span{sent, time.Now()}) }
}

func (t *Trace) add(s span) {
	t.mu.Lock()
	t.spans = append(t.spans, s)
	t.mu.Unlock()
}

// Requests is how many requests were sent since the last Reset, answered
// or not.
func (t *Trace) Requests() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sent
}

// RoundTrips is the length of the longest chain of answered requests in
// which each was sent no earlier than the one before it was answered; 0
// when none was answered.
func (t *Trace) RoundTrips() int {
	t.mu.Lock()
	spans := slices.Clone(t.spans)
	t.mu.Unlock()
	// A request answered before another was sent was sent before it too,
	// so in order of sending its chain is known by then.
	slices.SortFunc(spans, func(a, b span) int {
		if c := a.sent.Compare(b.sent); c != 0 {
			return c
		}
		return a.answered.Compare(b.answered)
	})
	chain := make([]int, len(spans))
	longest := 0
	for i, s := range spans {
		chain[i] = 1
		for j := range i {
			if !spans[j].answered.After(s.sent) {
				chain[i] = max(chain[i], chain[j]+1)
			}
		}
		longest = max(longest, chain[i])
	}
	return longest
}

// Reset forgets every request recorded.
func (t *Trace) Reset() {
	t.mu.Lock()
	t.sent, t.spans = 0, nil
	t.mu.Unlock()
}

// observe runs call, recording into tr the requests it reports under ctx,
// or the call itself as one request when it reports none.
func observe[T any](tr *Trace, ctx context.Context, call func(context.Context) (T, error)) (T, error) {
	if tr == nil {
		return call(ctx)
	}
	var reported atomic.Int64
	ctx = source.WithRequestObserver(ctx, func() func() {
		reported.Add(1)
		return tr.send()
	})
	sent := time.Now()
	v, err := call(ctx)
	if reported.Load() == 0 {
		tr.mu.Lock()
		tr.sent++
		tr.mu.Unlock()
		tr.add(span{sent, time.Now()})
	}
	return v, err
}
