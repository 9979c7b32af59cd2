package metrics_test

import (
	"context"
	"errors"
	"testing"

	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/metrics"
	"github.com/tbfs/tbfs/source/mmap"
	"github.com/tbfs/tbfs/source/sourcetest"
)

func TestConformance(t *testing.T) {
	sourcetest.Run(t, func(t *testing.T, dir string) source.Source {
		src, err := mmap.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		return metrics.Wrap(src, nil)
	})
}

// TestCounts: each call that reaches the wrapped source is counted once,
// bytes are what the reads returned, and neither io.EOF at the end nor a
// missing object is an error: both are answers (a probe of a material
// with no table is normal traffic, and an alert on the transport error
// count must not fire on it).
func TestCounts(t *testing.T) {
	dir := t.TempDir()
	sourcetest.WriteFixtures(t, dir)
	inner, err := mmap.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	src := metrics.Wrap(inner, nil)
	defer src.Close()
	ctx := context.Background()
	obj, err := src.Open(ctx, "a.txt") // 13 bytes
	if err != nil {
		t.Fatal(err)
	}
	obj.ReadAt(ctx, make([]byte, 5), 0, source.HintHeader)                       // 5 bytes
	obj.ReadAt(ctx, make([]byte, 10), 8, source.HintData)                        // 5 bytes and io.EOF
	obj.ReadAt(ctx, make([]byte, 1), 99, source.HintData)                        // invalid: an error
	if _, err := src.Open(ctx, "missing"); !errors.Is(err, source.ErrNotFound) { // an answer, not an error
		t.Fatalf("Open(missing) = %v, want source.ErrNotFound", err)
	}
	src.List(ctx, "dir/")
	want := metrics.Stats{Opens: 2, Requests: 3, Bytes: 10, Lists: 1, Errors: 1}
	if got := src.Stats(); got != want {
		t.Errorf("Stats = %+v, want %+v", got, want)
	}
	var nilc *metrics.Counters
	nilc.Hit(1) // a nil Counters ignores events
	if nilc.Stats() != (metrics.Stats{}) {
		t.Error("nil Counters has stats")
	}
}
