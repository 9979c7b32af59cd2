package sidecar

import (
	"context"
	"errors"
	"testing"
	"testing/fstest"

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
