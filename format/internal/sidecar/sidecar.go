// Package sidecar reads the small files that sit beside table files, such
// as block integrity manifests ("KQvK.rtbw.tbsum"), and starts their
// lookup alongside the table's own open, so that over a remote source a
// side file (or its absence) costs no round trip of its own.
package sidecar

import (
	"context"
	"errors"
	"fmt"

	"github.com/tbfs/tbfs/source"
)

// ErrTooLarge means a side file holds more bytes than its reader accepts,
// which a genuine one never does: the file is damaged or not what its name
// says.
var ErrTooLarge = errors.New("side file too large")

// Read returns the object called name in src, nil and no error when src
// has no such object. An object of more than limit bytes is refused with
// ErrTooLarge before anything is read, so a damaged one cannot make the
// reader allocate without bound.
func Read(ctx context.Context, src source.Source, name string, limit int64) ([]byte, error) {
	obj, err := src.Open(ctx, name)
	if errors.Is(err, source.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer obj.Close()
	if size := obj.Size(); size < 0 || size > limit {
		return nil, fmt.Errorf("%w: %s has %d bytes, at most %d expected", ErrTooLarge, name, size, limit)
	}
	// Never nil when present, even empty: absent and empty differ.
	return source.ReadAll(ctx, obj, source.HintIndex)
}

// Fetch is a lookup of one side file running in the background.
type Fetch struct {
	// Name is the side file's object name.
	Name   string
	cancel context.CancelFunc
	done   chan struct{}
	data   []byte
	err    error
}

// Start begins reading name from src (see Read) and returns at once.
func Start(ctx context.Context, src source.Source, name string, limit int64) *Fetch {
	ctx, cancel := context.WithCancel(ctx)
	f := &Fetch{Name: name, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(f.done)
		f.data, f.err = Read(ctx, src, name, limit)
	}()
	return f
}

// Wait returns what Read returned: the file's bytes, nil and no error when
// there is none, or the failure.
func (f *Fetch) Wait() ([]byte, error) {
	<-f.done
	f.cancel()
	return f.data, f.err
}

// Stop abandons the lookup and waits for it, so no request outlives the
// caller's use of the source. A nil Fetch is a no-op.
func (f *Fetch) Stop() {
	if f != nil {
		f.cancel()
		<-f.done
	}
}

// Settle waits for the lookup to end without abandoning it, for a side
// file whose table turned out to be missing: its answer is not needed, but
// a lookup left to finish is recorded by the caches under the source (a
// disk cache keeps "no such object" across restarts), where an abandoned
// one would be asked again by the next process, breaking a remount's
// promise of sending no request for what it already knows. A nil Fetch is
// a no-op.
func (f *Fetch) Settle() {
	if f != nil {
		<-f.done
		f.cancel()
	}
}
