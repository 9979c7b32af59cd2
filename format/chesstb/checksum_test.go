package chesstb

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/source"
)

// fetchingObject is an in-memory object that says it fetches (it has
// Prefetch), so the checksum reads it several chunks at a time, and that
// fails its first failReads reads as a transient transport error.
type fetchingObject struct {
	memObject
	failReads atomic.Int32
	reads     atomic.Int32
}

func (o *fetchingObject) ReadAt(ctx context.Context, p []byte, off int64, h source.Hint) (int, error) {
	o.reads.Add(1)
	if o.failReads.Add(-1) >= 0 {
		return 0, source.Transient(errors.New("connection reset"))
	}
	return o.memObject.ReadAt(ctx, p, off, h)
}

func (o *fetchingObject) Prefetch(context.Context, int64, int, source.Hint) error { return nil }

// TestChecksumGate: the whole-file check over a fetching object (the
// shipped dtc/KNNKP.lzdtc, 11 chunks: reads in flight, hashed in order)
// and over one read in sequence accepts the intact file and refuses one
// with a flipped last data byte;
// a gate whose check met a transient failure reports it and starts again
// on the next wait, and a mismatch stays. Arbiter: the XXH64 the generator
// stored in each file (the intact file matches it; the flip cannot).
func TestChecksumGate(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testenv.Shared(t, "chesstb", "shipped"), "dtc", "KNNKP.lzdtc"))
	if err != nil {
		t.Fatal(err)
	}
	if len(data) <= remoteChecksumReads*checksumChunk {
		t.Fatalf("%d bytes: too small to keep %d reads in flight", len(data), remoteChecksumReads)
	}
	ctx := context.Background()
	intact := &fetchingObject{memObject: data}
	if err := verifyChecksum(ctx, intact); err != nil {
		t.Fatalf("intact: %v", err)
	}
	flipped := append([]byte(nil), data...)
	flipped[len(flipped)-9] ^= 1
	if err := verifyChecksum(ctx, &fetchingObject{memObject: flipped}); !errors.Is(err, errChecksum) {
		t.Fatalf("flipped: %v, want a checksum mismatch", err)
	}
	// An object that does not fetch is read one piece at a time.
	if err := verifyChecksum(ctx, memObject(data)); err != nil {
		t.Fatalf("intact, read in sequence: %v", err)
	}
	if err := verifyChecksum(ctx, memObject(flipped)); !errors.Is(err, errChecksum) {
		t.Fatalf("flipped, read in sequence: %v, want a checksum mismatch", err)
	}

	bg := newBackground()
	defer bg.stop()
	flaky := &fetchingObject{memObject: data}
	flaky.failReads.Store(1)
	g := newChecksumGate(bg, flaky)
	// The run started on open meets the failure. A wait may come before
	// or after it ends (the run is in the background); one that comes
	// after starts the check again, so look at the first run itself.
	g.mu.Lock()
	first := g.run
	g.mu.Unlock()
	<-first.done
	if !source.IsRetryable(first.err) || g.ok.Load() {
		t.Fatalf("first run: %v, want the transient failure", first.err)
	}
	if err := g.wait(ctx); err != nil {
		t.Fatalf("wait after the failed run: %v, want the check to have run again and passed", err)
	}
	n := flaky.reads.Load()
	if err := g.wait(ctx); err != nil || flaky.reads.Load() != n {
		t.Fatalf("a confirmed gate read again (%d reads, then %d) or failed: %v", n, flaky.reads.Load(), err)
	}
	bad := newChecksumGate(bg, &fetchingObject{memObject: flipped})
	for range 2 {
		if err := bad.wait(ctx); !errors.Is(err, errChecksum) || !errors.Is(err, ErrCorrupt) {
			t.Fatalf("damaged: %v, want ErrCorrupt for the checksum", err)
		}
	}
}
