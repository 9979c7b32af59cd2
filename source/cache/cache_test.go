package cache_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/cache"
	"github.com/tbfs/tbfs/source/metrics"
	"github.com/tbfs/tbfs/source/mmap"
	"github.com/tbfs/tbfs/source/sourcetest"
)

// TestConformance runs the suite through caches of several shapes; block
// sizes that do not divide the fixture sizes and budgets smaller than one
// read make every boundary case happen.
func TestConformance(t *testing.T) {
	for _, o := range []cache.Options{
		{},
		{BlockSize: 4096, Budget: 64 << 10},
		{BlockSize: 1000, Budget: 1 << 20},
		{BlockSize: 7, Budget: 100},
	} {
		t.Run(fmt.Sprintf("block=%d,budget=%d", o.BlockSize, o.Budget), func(t *testing.T) {
			sourcetest.Run(t, func(t *testing.T, dir string) source.Source {
				src, err := mmap.New(dir)
				if err != nil {
					t.Fatal(err)
				}
				return cache.Wrap(src, o)
			})
		})
	}
}

// fake is an in-memory source that records every read that reaches it and
// can hold reads at a gate.
type fake struct {
	data map[string][]byte
	gate chan struct{} // when non-nil, reads wait for it to close
	fail error         // when non-nil, reads fail with it

	mu    sync.Mutex
	reads []readRec
}

type readRec struct {
	off int64
	n   int
}

func (f *fake) Open(ctx context.Context, name string) (source.Object, error) {
	d, ok := f.data[name]
	if !ok {
		return nil, &source.Error{Op: "open", Name: name, Err: source.ErrNotFound}
	}
	return &fakeObj{f: f, data: d}, nil
}

func (f *fake) Close() error { return nil }

func (f *fake) log() []readRec {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]readRec(nil), f.reads...)
}

type fakeObj struct {
	f    *fake
	data []byte
}

func (o *fakeObj) Size() int64  { return int64(len(o.data)) }
func (o *fakeObj) Close() error { return nil }
func (o *fakeObj) ReadAt(ctx context.Context, p []byte, off int64, _ source.Hint) (int, error) {
	o.f.mu.Lock()
	o.f.reads = append(o.f.reads, readRec{off, len(p)})
	o.f.mu.Unlock()
	if o.f.gate != nil {
		select {
		case <-o.f.gate:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	if o.f.fail != nil {
		return 0, o.f.fail
	}
	n := copy(p, o.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*31 + i>>8)
	}
	return b
}

func mustOpen(t *testing.T, src source.Source, name string) source.Object {
	t.Helper()
	obj, err := src.Open(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

// TestNoReadAhead: a read fetches exactly the blocks it overlaps, in one
// request, and nothing after them (probes are small random reads, so
// reading ahead would only waste the budget and the link).
func TestNoReadAhead(t *testing.T) {
	data := pattern(10 * 4096)
	f := &fake{data: map[string][]byte{"x": data}}
	src := cache.Wrap(f, cache.Options{BlockSize: 4096})
	obj := mustOpen(t, src, "x")
	cases := []struct {
		off  int64
		n    int
		want []readRec // reads that reach the source
	}{
		{100, 10, []readRec{{0, 4096}}},
		{100, 10, nil},                     // block 0 is cached now
		{4095, 2, []readRec{{4096, 4096}}}, // block 0 cached, block 1 not
		{3 * 4096, 4096, []readRec{{3 * 4096, 4096}}},
		// Bytes 20479..32768 overlap blocks 4..8, none cached: one request.
		{5*4096 - 1, 3*4096 + 2, []readRec{{4 * 4096, 5 * 4096}}},
		{9*4096 + 5, 100, []readRec{{9 * 4096, 4096}}}, // last block, crossing the end
	}
	for i, c := range cases {
		before := len(f.log())
		buf := make([]byte, c.n)
		n, err := obj.ReadAt(context.Background(), buf, c.off, source.HintData)
		end := min(c.off+int64(c.n), int64(len(data)))
		if (err != nil && err != io.EOF) || !bytes.Equal(buf[:n], data[c.off:end]) {
			t.Fatalf("row %d: ReadAt(%d, %d) = %d, %v or wrong bytes", i, c.off, c.n, n, err)
		}
		got := f.log()[before:]
		if fmt.Sprint(got) != fmt.Sprint(c.want) && !(len(got) == 0 && len(c.want) == 0) {
			t.Errorf("row %d: ReadAt(%d, %d) sent %v to the source, want %v", i, c.off, c.n, got, c.want)
		}
	}
}

// TestSingleFlight: N readers of one missing range cause one request; the
// others join it. Readers are released only once all N are accounted for.
func TestSingleFlight(t *testing.T) {
	data := pattern(1 << 20)
	f := &fake{data: map[string][]byte{"x": data}, gate: make(chan struct{})}
	c := new(metrics.Counters)
	src := cache.Wrap(f, cache.Options{BlockSize: 64 << 10, Counters: c})
	obj := mustOpen(t, src, "x")
	const readers = 16
	var wg sync.WaitGroup
	for range readers {
		wg.Go(func() {
			buf := make([]byte, 100000)
			n, err := obj.ReadAt(context.Background(), buf, 70000, source.HintData)
			if err != nil || !bytes.Equal(buf[:n], data[70000:70000+100000]) {
				t.Errorf("ReadAt = %d, %v or wrong bytes", n, err)
			}
		})
	}
	// Every reader either owns the two blocks or joined them: wait until
	// the counters say so, then let the one request finish.
	for {
		st := c.Stats()
		if st.Misses+st.Joins == 2*readers {
			break
		}
		runtime.Gosched()
	}
	close(f.gate)
	wg.Wait()
	if got := len(f.log()); got != 1 {
		t.Errorf("%d readers of one missing range sent %d requests, want 1", readers, got)
	}
	if st := c.Stats(); st.Misses != 2 || st.Joins != 2*(readers-1) {
		t.Errorf("misses %d joins %d, want 2 and %d", st.Misses, st.Joins, 2*(readers-1))
	}
}

// TestOwnerCancelled: when the reader that fetches a block gives up, a
// reader waiting for the same block fetches it itself instead of failing
// with someone else's cancellation.
func TestOwnerCancelled(t *testing.T) {
	data := pattern(8192)
	f := &fake{data: map[string][]byte{"x": data}, gate: make(chan struct{})}
	c := new(metrics.Counters)
	src := cache.Wrap(f, cache.Options{BlockSize: 4096, Counters: c})
	obj := mustOpen(t, src, "x")
	ctx, cancel := context.WithCancel(context.Background())
	ownerDone := make(chan error, 1)
	go func() {
		_, err := obj.ReadAt(ctx, make([]byte, 10), 0, source.HintData)
		ownerDone <- err
	}()
	for c.Stats().Misses != 1 {
		runtime.Gosched()
	}
	waiterDone := make(chan error, 1)
	buf := make([]byte, 10)
	go func() {
		_, err := obj.ReadAt(context.Background(), buf, 0, source.HintData)
		waiterDone <- err
	}()
	for c.Stats().Joins != 1 {
		runtime.Gosched()
	}
	cancel()
	if err := <-ownerDone; !errors.Is(err, context.Canceled) {
		t.Errorf("owner: err = %v, want context.Canceled", err)
	}
	close(f.gate)
	if err := <-waiterDone; err != nil {
		t.Errorf("waiter: %v", err)
	}
	if !bytes.Equal(buf, data[:10]) {
		t.Errorf("waiter read wrong bytes")
	}
}

// TestPinning: header and index blocks survive a stream of data reads that
// overflows the budget many times; data blocks do not.
func TestPinning(t *testing.T) {
	data := pattern(64 * 1024)
	f := &fake{data: map[string][]byte{"x": data}}
	c := new(metrics.Counters)
	src := cache.Wrap(f, cache.Options{BlockSize: 1024, Budget: 4 * 1024, Counters: c})
	obj := mustOpen(t, src, "x")
	read := func(off int64, hint source.Hint) {
		t.Helper()
		buf := make([]byte, 16)
		if _, err := obj.ReadAt(context.Background(), buf, off, hint); err != nil || !bytes.Equal(buf, data[off:off+16]) {
			t.Fatalf("ReadAt(%d): %v or wrong bytes", off, err)
		}
	}
	read(0, source.HintHeader)
	read(1024, source.HintIndex)
	for b := int64(2); b < 60; b++ {
		read(b*1024, source.HintData)
	}
	if used := src.Used(); used > 4*1024 {
		t.Errorf("cache holds %d bytes, budget 4096", used)
	}
	before := len(f.log())
	read(0, source.HintHeader)
	read(1024, source.HintIndex)
	if got := len(f.log()) - before; got != 0 {
		t.Errorf("pinned blocks were fetched again (%d requests)", got)
	}
	read(2*1024, source.HintData) // long evicted
	if got := len(f.log()) - before; got != 1 {
		t.Errorf("an evicted data block cost %d requests, want 1", got)
	}
	if c.Stats().Evictions == 0 {
		t.Error("no evictions counted")
	}
}

// TestErrorsNotCached: a failed fetch is reported to the reader and not
// kept; the next read tries again.
func TestErrorsNotCached(t *testing.T) {
	data := pattern(4096)
	boom := source.Transient(errors.New("boom"))
	f := &fake{data: map[string][]byte{"x": data}, fail: boom}
	src := cache.Wrap(f, cache.Options{BlockSize: 1024})
	obj := mustOpen(t, src, "x")
	if _, err := obj.ReadAt(context.Background(), make([]byte, 8), 0, source.HintData); !errors.Is(err, source.ErrTransient) {
		t.Fatalf("err = %v, want the transient failure", err)
	}
	f.fail = nil
	buf := make([]byte, 8)
	if _, err := obj.ReadAt(context.Background(), buf, 0, source.HintData); err != nil || !bytes.Equal(buf, data[:8]) {
		t.Fatalf("second read: %v or wrong bytes", err)
	}
	if got := len(f.log()); got != 2 {
		t.Errorf("requests = %d, want 2", got)
	}
}

// TestConcurrentChurn: many readers of overlapping random ranges through a
// cache much smaller than the object, so blocks are fetched, shared and
// evicted all the time; every read must return the object's bytes and the
// budget must hold.
func TestConcurrentChurn(t *testing.T) {
	data := pattern(1 << 20)
	f := &fake{data: map[string][]byte{"x": data}}
	c := new(metrics.Counters)
	const budget = 200000
	src := cache.Wrap(f, cache.Options{BlockSize: 1000, Budget: budget, Counters: c})
	obj := mustOpen(t, src, "x")
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 7))
			for range 200 {
				n := 1 + r.IntN(40000)
				off := r.Int64N(int64(len(data)))
				hint := source.Hint(r.IntN(3))
				buf := make([]byte, n)
				got, err := obj.ReadAt(context.Background(), buf, off, hint)
				end := min(off+int64(n), int64(len(data)))
				if err != nil && err != io.EOF || !bytes.Equal(buf[:got], data[off:end]) {
					t.Errorf("ReadAt(%d, %d) = %d, %v or wrong bytes", off, n, got, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if used := src.Used(); used > budget {
		t.Errorf("cache holds %d bytes, budget %d", used, budget)
	}
	st := c.Stats()
	if st.Hits == 0 || st.Misses == 0 || st.Evictions == 0 {
		t.Errorf("stats %+v: want hits, misses and evictions all to happen", st)
	}
}

// TestPrefetch: a prefetch fetches the blocks a read of the range would, in
// one request, and the read that follows is answered from them with no
// request; a range the cache holds already costs none; the bytes are the
// fake's.
func TestPrefetch(t *testing.T) {
	data := pattern(100_000)
	f := &fake{data: map[string][]byte{"x": data}}
	c := cache.Wrap(f, cache.Options{BlockSize: 4096, Budget: 1 << 20})
	obj := mustOpen(t, c, "x")
	ctx := context.Background()
	if err := source.Prefetch(ctx, obj, 5000, 10_000, source.HintData); err != nil {
		t.Fatal(err)
	}
	if got := f.log(); len(got) != 1 || got[0] != (readRec{4096, 3 * 4096}) {
		t.Fatalf("prefetch reads %v, want one of blocks 1-3", got)
	}
	buf := make([]byte, 10_000)
	if n, err := obj.ReadAt(ctx, buf, 5000, source.HintData); err != nil || n != len(buf) || !bytes.Equal(buf, data[5000:15000]) {
		t.Fatalf("read after prefetch: %d, %v", n, err)
	}
	if err := source.Prefetch(ctx, obj, 6000, 100, source.HintData); err != nil || len(f.log()) != 1 {
		t.Errorf("prefetch of cached bytes: %v, reads %v", err, f.log())
	}
	if err := source.Prefetch(ctx, obj, 200_000, 1, source.HintData); !errors.Is(err, source.ErrInvalid) {
		t.Errorf("prefetch outside the object: %v, want ErrInvalid", err)
	}
}
