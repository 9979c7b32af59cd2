package chesstb

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"
	"github.com/tbfs/tbfs/source"
)

// The format's own integrity check is one XXH64 over every byte of a file
// but the last eight, which hold it; it says nothing about which block is
// damaged, so it can only be had by reading the whole file. A flipped bit
// in a value map or a compressed block may decode to other valid-looking
// values, which no structural check or answer invariant can tell from the
// real ones, so a table with no integrity manifest gives no answer before
// its checksum is confirmed: the check starts in the background as soon as
// the table is opened (for a remote table, alongside its first block
// reads) and a probe waits for it before it reads the table (checksumGate).
// A table with a manifest needs none of this: the manifest, written from a
// file whose checksum verified, checks the header on open and each block as
// it is read. Options.SkipChecksums turns the whole-file check off.

// checksumSeed seeds the XXH64 of every byte but the last eight, which the
// generator stores at the end of each file.
const checksumSeed = 0xf0f0f0f0f0f0

// checksumChunk is what one read of the whole-file check asks for, and
// remoteChecksumReads how many such reads are in flight at once over a
// source that fetches (a memory-mapped file gains nothing from more than
// one): enough to keep a link busy, bounded in memory.
const (
	checksumChunk       = 1 << 20
	remoteChecksumReads = 8
)

// verifyChecksum reads the whole object and compares its XXH64 with the
// stored one. Over a source that fetches, chunks are read several at a
// time and hashed in order.
func verifyChecksum(ctx context.Context, obj source.Object) error {
	size := obj.Size()
	if size < 8 {
		return corruptf("file of %d bytes has no checksum", size)
	}
	var tail [8]byte
	if err := readFullAt(ctx, obj, tail[:], size-8, source.HintHeader, "the checksum"); err != nil {
		return err
	}
	width := 1
	if _, ok := obj.(source.Prefetcher); ok {
		width = remoteChecksumReads
	}
	d := xxhash.NewWithSeed(checksumSeed)
	if err := readInOrder(ctx, obj, size-8, width, func(b []byte) { d.Write(b) }); err != nil {
		return err
	}
	if want := binary.LittleEndian.Uint64(tail[:]); d.Sum64() != want {
		return fmt.Errorf("%w: %w: the bytes hash to %#016x, the file stores %#016x", ErrCorrupt, errChecksum, d.Sum64(), want)
	}
	return nil
}

// sequentialChunk is what one read of the whole-file check asks for when
// reads go one at a time (a local file): nothing is gained by asking for
// more at once, and a small buffer that the pool loses to the garbage
// collector between two tables' checks costs little to make again (the
// megabyte it was had become most of a WDL pass's garbage).
const sequentialChunk = 64 << 10

// chunkBuffers holds sequentialChunk-byte buffers for readInOrder.
var chunkBuffers = sync.Pool{New: func() any {
	b := make([]byte, sequentialChunk)
	return &b
}}

// readInOrder reads obj's first n bytes in checksumChunk pieces, up to
// width reads in flight, and hands each piece to use in file order. The
// width buffers are reused, so memory stays at width chunks. With width 1
// the pieces are sequentialChunk bytes.
func readInOrder(ctx context.Context, obj source.Object, n int64, width int, use func([]byte)) error {
	chunks := (n + checksumChunk - 1) / checksumChunk
	piece := func(i int64, buf []byte) []byte {
		return buf[:min(checksumChunk, n-i*checksumChunk)]
	}
	if width <= 1 {
		// One small buffer, from a pool: the checks of a Tablebase's
		// tables run one after another.
		bp := chunkBuffers.Get().(*[]byte)
		defer chunkBuffers.Put(bp)
		buf := *bp
		for off := int64(0); off < n; off += sequentialChunk {
			p := buf[:min(sequentialChunk, n-off)]
			if err := readFullAt(ctx, obj, p, off, source.HintData, "while verifying the checksum"); err != nil {
				return err
			}
			use(p)
		}
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	type read struct {
		buf  []byte
		err  error
		done chan struct{}
	}
	start := func(i int64, buf []byte) *read {
		r := &read{buf: piece(i, buf), done: make(chan struct{})}
		go func() {
			defer close(r.done)
			r.err = readFullAt(ctx, obj, r.buf, i*checksumChunk, source.HintData, "while verifying the checksum")
		}()
		return r
	}
	var window []*read
	defer func() {
		cancel()
		for _, r := range window {
			<-r.done
		}
	}()
	for i := int64(0); i < min(chunks, int64(width)); i++ {
		window = append(window, start(i, make([]byte, checksumChunk)))
	}
	for i := range chunks {
		r := window[0]
		<-r.done
		window = window[1:]
		if r.err != nil {
			return r.err
		}
		use(r.buf)
		if next := i + int64(width); next < chunks {
			window = append(window, start(next, r.buf[:cap(r.buf)]))
		}
	}
	return nil
}

// readFullAt fills p from off, a short read being corruption (the file is
// shorter than its size says) unless the transport says otherwise.
func readFullAt(ctx context.Context, obj source.Object, p []byte, off int64, hint source.Hint, what string) error {
	got, err := obj.ReadAt(ctx, p, off, hint)
	if got < len(p) {
		if err == nil || errors.Is(err, io.EOF) {
			err = corruptf("short read of %s", what)
		}
		return err
	}
	return nil
}

// checksumGate holds a table's answers until its checksum is confirmed.
// The check runs once in the background; a transport failure or a
// cancellation is not kept, so the next probe that waits starts it again.
type checksumGate struct {
	ok atomic.Bool // the checksum matched: nothing left to wait for

	mu  sync.Mutex
	run *checksumRun // the check in flight or settled; nil: none yet
	obj source.Object
	bg  *background
}

// checksumRun is one attempt at the whole-file check.
type checksumRun struct {
	done chan struct{}
	err  error
}

// background is the work a Tablebase does on its own (checksums), which
// Close cancels and waits for before it closes the table files that work
// reads.
type background struct {
	ctx    context.Context
	cancel context.CancelFunc
	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
}

func newBackground() *background {
	ctx, cancel := context.WithCancel(context.Background())
	return &background{ctx: ctx, cancel: cancel}
}

// goWork runs f in the background, or reports false once stop was called.
func (b *background) goWork(f func(ctx context.Context)) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false
	}
	b.wg.Go(func() { f(b.ctx) })
	return true
}

// stop cancels the background work and waits for it.
func (b *background) stop() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.cancel()
	b.wg.Wait()
}

// newChecksumGate prepares the check of obj and starts it.
func newChecksumGate(bg *background, obj source.Object) *checksumGate {
	g := &checksumGate{obj: obj, bg: bg}
	g.mu.Lock()
	g.startLocked()
	g.mu.Unlock()
	return g
}

// startLocked starts a run unless one is in flight or settled for good.
func (g *checksumGate) startLocked() *checksumRun {
	if r := g.run; r != nil {
		select {
		case <-r.done:
			if !retryable(r.err) {
				return r
			}
		default:
			return r
		}
	}
	r := &checksumRun{done: make(chan struct{})}
	g.run = r
	started := g.bg.goWork(func(ctx context.Context) {
		r.err = verifyChecksum(ctx, g.obj)
		if r.err == nil {
			g.ok.Store(true)
		}
		close(r.done)
	})
	if !started {
		// The Tablebase is closing: its files are about to be closed.
		r.err = ErrClosed
		close(r.done)
	}
	return r
}

// retryable reports whether a failed check may succeed when tried again:
// a transport failure or a cancellation, not a mismatch.
func retryable(err error) bool {
	return err != nil && (source.IsRetryable(err) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
}

// wait returns once the checksum is confirmed (nil) or has failed, or ctx
// ends. A confirmed gate costs one atomic load.
func (g *checksumGate) wait(ctx context.Context) error {
	if g == nil || g.ok.Load() {
		return nil
	}
	g.mu.Lock()
	r := g.startLocked()
	g.mu.Unlock()
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// confirmChecksum runs t's whole-file check, or waits for the one its gate
// started on open, so that a verify does not hash the file a second time.
func (t *tableFile) confirmChecksum(ctx context.Context) error {
	if t.gate != nil {
		return t.gate.wait(ctx)
	}
	return verifyChecksum(ctx, t.obj)
}

// trusted returns nil once t's answers may be given: its checksum is
// confirmed, or it has a manifest, or checks are off. Otherwise it waits
// for the check and returns its failure, naming the file.
func (t *tableFile) trusted(ctx context.Context) error {
	if err := t.gate.wait(ctx); err != nil {
		// A replaced object fails its check for good: reopen it next time.
		t.checkChanged(err)
		var fe *FileError
		if errors.As(err, &fe) {
			return err
		}
		return t.fileErr(-1, err)
	}
	return nil
}
