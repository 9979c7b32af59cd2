package metrics

import (
	"context"
	"testing"
	"time"

	"github.com/tbfs/tbfs/source"
)

// TestTraceRoundTrips: the longest chain of requests each sent no earlier
// than the one before it was answered (the arbiter is the definition,
// counted by hand for each shape).
func TestTraceRoundTrips(t *testing.T) {
	at := func(ms int) time.Time { return time.Unix(0, 0).Add(time.Duration(ms) * time.Millisecond) }
	cases := []struct {
		name  string
		spans [][2]int // sent, answered, in ms
		want  int
	}{
		{"none", nil, 0},
		{"one", [][2]int{{0, 50}}, 1},
		{"together", [][2]int{{0, 50}, {1, 51}, {2, 52}}, 1},
		{"one after another", [][2]int{{0, 50}, {50, 100}, {101, 150}}, 3},
		{"sent before the first was answered", [][2]int{{0, 50}, {49, 99}}, 1},
		{"a fan out after one, then one more after the slowest", [][2]int{{0, 50}, {60, 110}, {60, 130}, {131, 180}}, 3},
		{"recorded out of order", [][2]int{{131, 180}, {60, 130}, {0, 50}, {60, 110}}, 3},
	}
	for _, c := range cases {
		var tr Trace
		for _, s := range c.spans {
			tr.sent++
			tr.add(span{at(s[0]), at(s[1])})
		}
		if got := tr.RoundTrips(); got != c.want {
			t.Errorf("%s: %d round trips, want %d", c.name, got, c.want)
		}
		if tr.Requests() != len(c.spans) {
			t.Errorf("%s: %d requests, want %d", c.name, tr.Requests(), len(c.spans))
		}
	}
}

// pagedLister is a source whose List sends pages requests one after
// another and reports each.
type pagedLister struct{ pages int }

func (p pagedLister) Open(ctx context.Context, name string) (source.Object, error) {
	return nil, source.ErrNotFound
}
func (p pagedLister) Close() error { return nil }
func (p pagedLister) List(ctx context.Context, prefix string) ([]source.Entry, error) {
	for range p.pages {
		source.ObserveRequest(ctx)()
	}
	return nil, nil
}

// TestTraceWrapper: the wrapper records each request a transport reports,
// and a call that reports none as one.
func TestTraceWrapper(t *testing.T) {
	var tr Trace
	c := new(Counters)
	c.SetTrace(&tr)
	s := Wrap(pagedLister{pages: 3}, c)
	if _, err := s.List(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	if got := tr.Requests(); got != 3 {
		t.Errorf("a listing of 3 pages recorded %d requests", got)
	}
	s.Open(context.Background(), "x")
	if got := tr.Requests(); got != 4 {
		t.Errorf("an open that reports no request recorded %d, want 1 more", got-3)
	}
	if st := s.Stats(); st.Lists != 1 || st.Opens != 1 {
		t.Errorf("%+v: calls are still counted as calls", st)
	}
	tr.Reset()
	if tr.Requests() != 0 || tr.RoundTrips() != 0 {
		t.Error("Reset left requests")
	}
}
