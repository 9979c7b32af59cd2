package syzygy

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/tbfs/tbfs/source"
)

// A flipped bit in a compressed block or a value map usually decodes to
// other valid-looking values, which no structural check can tell from the
// real ones, and the format's only integrity check is the checksum over the
// whole file. So a table gives no answer before that checksum is confirmed:
// the check starts in the background as soon as the table is opened and a
// probe waits for it before it reads the table. A table opened with a
// manifest it can trust (manifest.go) has no gate: its reads are checked
// page by page instead. Options.SkipChecksums turns it off.

// checksumGate holds back a table's answers until its checksum passed.
type checksumGate struct {
	passed atomic.Bool
	mu     sync.Mutex
	run    *checksumRun // the check in flight or finished; nil: none yet
	start  func() *checksumRun
}

type checksumRun struct {
	done chan struct{}
	err  error
}

// newChecksumGate returns a gate over obj whose check runs in tb's
// background, and starts it.
func (tb *Tablebase) newChecksumGate(obj source.Object) *checksumGate {
	g := &checksumGate{}
	g.start = func() *checksumRun {
		r := &checksumRun{done: make(chan struct{})}
		tb.bgWG.Add(1)
		go func() {
			defer tb.bgWG.Done()
			// Bound how many runs read at once.
			select {
			case tb.checksumRuns <- struct{}{}:
			case <-tb.bgCtx.Done():
				r.err = tb.bgCtx.Err()
				close(r.done)
				return
			}
			got, stored, err := fileChecksum(tb.bgCtx, obj)
			<-tb.checksumRuns
			if err == nil && got != stored {
				err = corruptf("checksum mismatch")
			}
			r.err = err
			if err == nil {
				g.passed.Store(true)
			}
			close(r.done)
		}()
		return r
	}
	g.run = g.start()
	return g
}

// wait returns nil once the checksum has passed, the check's error when it
// failed, or ctx's error. A check that failed for a transient reason is run
// again by the next wait.
func (g *checksumGate) wait(ctx context.Context) error {
	if g == nil || g.passed.Load() {
		return nil
	}
	g.mu.Lock()
	r := g.run
	select {
	case <-r.done:
		if r.err != nil && !errors.Is(r.err, ErrCorrupt) {
			r = g.start()
			g.run = r
		}
	default:
	}
	g.mu.Unlock()
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		return ctx.Err()
	}
}
