package sidecar

import (
	"context"
	"errors"
	"testing"
	"testing/fstest"

	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/fssource"
)

// TestRead covers the three answers a side file lookup has: absent (nil,
// no error), present (its bytes; an empty file is not an absent one), and
// larger than the reader accepts (ErrTooLarge, nothing read). Arbiter:
// the files the test serves.
func TestRead(t *testing.T) {
	src := fssource.New(fstest.MapFS{
		"a.tbsum":     {Data: []byte("manifest")},
		"empty.tbsum": {Data: []byte{}},
		"big.tbsum":   {Data: make([]byte, 100)},
	}, "test")
	ctx := context.Background()
	for _, c := range []struct {
		name string
		want []byte
		err  error
	}{
		{"a.tbsum", []byte("manifest"), nil},
		{"empty.tbsum", []byte{}, nil},
		{"missing.tbsum", nil, nil},
		{"big.tbsum", nil, ErrTooLarge},
	} {
		f := Start(ctx, src, c.name, 99)
		got, err := f.Wait()
		if !errors.Is(err, c.err) || string(got) != string(c.want) || (got == nil) != (c.want == nil) {
			t.Errorf("%s: %q (nil %v), %v; want %q (nil %v), %v", c.name, got, got == nil, err, c.want, c.want == nil, c.err)
		}
		f.Stop() // after Wait: a no-op that must not hang
	}
	var none *Fetch
	none.Stop()
}

// gatedSource answers every Open with ErrNotFound once release is closed,
// and reports whether the lookup's context had ended by then.
type gatedSource struct {
	release  chan struct{}
	answered chan error // the context's error when the answer was given
}

func (g *gatedSource) Open(ctx context.Context, name string) (source.Object, error) {
	<-g.release
	g.answered <- ctx.Err()
	return nil, source.ErrNotFound
}

func (g *gatedSource) Close() error { return nil }

// TestSettleLetsTheLookupFinish: Settle waits for a lookup still in flight
// and does not cancel it, so its answer reaches the source (where a cache
// would record it) with the lookup's context alive. Arbiter: Settle's
// contract.
func TestSettleLetsTheLookupFinish(t *testing.T) {
	g := &gatedSource{release: make(chan struct{}), answered: make(chan error, 1)}
	f := Start(context.Background(), g, "x.tbsum", 10)
	settled := make(chan struct{})
	go func() {
		f.Settle()
		close(settled)
	}()
	close(g.release)
	<-settled
	if err := <-g.answered; err != nil {
		t.Errorf("the settled lookup's context had ended when it was answered: %v", err)
	}
	if data, err := f.Wait(); data != nil || err != nil {
		t.Errorf("after Settle, Wait = %q, %v; want the miss (nil, nil)", data, err)
	}
	var none *Fetch
	none.Settle()
}
