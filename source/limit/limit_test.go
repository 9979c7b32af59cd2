package limit_test

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/tbfs/tbfs/source"
	srchttp "github.com/tbfs/tbfs/source/http"
	"github.com/tbfs/tbfs/source/http/mirrortest"
	"github.com/tbfs/tbfs/source/limit"
	"github.com/tbfs/tbfs/source/mmap"
	"github.com/tbfs/tbfs/source/sourcetest"
)

func TestConformance(t *testing.T) {
	sourcetest.Run(t, func(t *testing.T, dir string) source.Source {
		src, err := mmap.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		return limit.Wrap(src, 2)
	})
}

// TestBound: twenty concurrent reads through a limit of three never have
// more than three requests at the server at once, and every read gets the
// fixture's bytes.
func TestBound(t *testing.T) {
	dir := t.TempDir()
	sourcetest.WriteFixtures(t, dir)
	url, slow := mirrortest.ServeSlow(t, dir, 5*time.Millisecond)
	raw, err := srchttp.New(url, srchttp.Options{OpenRead: -1})
	if err != nil {
		t.Fatal(err)
	}
	src := limit.Wrap(raw, 3)
	defer src.Close()
	ctx := context.Background()
	obj, err := src.Open(ctx, "big/blob.bin")
	if err != nil {
		t.Fatal(err)
	}
	big := sourcetest.Fixtures()[1].Data
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range errs {
		wg.Go(func() {
			off := int64(i) * 4096
			buf := make([]byte, 100)
			if _, err := obj.ReadAt(ctx, buf, off, source.HintData); err != nil {
				errs[i] = err
			} else if !bytes.Equal(buf, big[off:off+100]) {
				errs[i] = errors.New("wrong bytes")
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("read %d: %v", i, err)
		}
	}
	if c := slow.Counts(); c.MaxInFlight > 3 || c.Gets != 20 {
		t.Errorf("%+v: want 20 GETs, at most 3 at once", c)
	}
}

// blocking is a source whose reads wait until release is closed.
type blocking struct {
	source.Source
	started chan struct{}
	release chan struct{}
}

type blockingObj struct {
	source.Object
	b *blocking
}

func (b *blocking) Open(ctx context.Context, name string) (source.Object, error) {
	obj, err := b.Source.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	return &blockingObj{obj, b}, nil
}

func (o *blockingObj) ReadAt(ctx context.Context, p []byte, off int64, hint source.Hint) (int, error) {
	o.b.started <- struct{}{}
	<-o.b.release
	return o.Object.ReadAt(ctx, p, off, hint)
}

// TestWaitHonoursContext: while the only slot is taken, a call waiting
// for it gives up when its context ends, and sends nothing below.
func TestWaitHonoursContext(t *testing.T) {
	dir := t.TempDir()
	sourcetest.WriteFixtures(t, dir)
	raw, err := mmap.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	b := &blocking{Source: raw, started: make(chan struct{}, 2), release: make(chan struct{})}
	src := limit.Wrap(b, 1)
	defer src.Close()
	obj, err := src.Open(context.Background(), "a.txt")
	if err != nil {
		t.Fatal(err)
	}
	first := make(chan error, 1)
	go func() {
		_, err := obj.ReadAt(context.Background(), make([]byte, 1), 0, source.HintData)
		first <- err
	}()
	<-b.started // the first read holds the slot
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := obj.ReadAt(ctx, make([]byte, 1), 0, source.HintData); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	close(b.release)
	if err := <-first; err != nil {
		t.Errorf("the read holding the slot: %v", err)
	}
	if len(b.started) != 0 {
		t.Errorf("the cancelled read reached the source")
	}
}
