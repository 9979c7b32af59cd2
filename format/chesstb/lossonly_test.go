package chesstb

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/mmap"
)

// hiding is a source that pretends the objects hide matches do not exist,
// to build a table view (a metric folder left out, a material removed)
// without copying files.
type hiding struct {
	source.Source
	hide func(name string) bool
}

func (h hiding) Open(ctx context.Context, name string) (source.Object, error) {
	if h.hide(name) {
		return nil, &source.Error{Op: "open", Name: name, Err: source.ErrNotFound}
	}
	return h.Source.Open(ctx, name)
}

// openView opens a Tablebase over dirs, each seen through hide.
func openView(t testing.TB, hide func(string) bool, dirs ...string) *Tablebase {
	t.Helper()
	var srcs []source.Source
	for _, d := range dirs {
		s, err := mmap.New(d)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		srcs = append(srcs, hiding{s, hide})
	}
	tb, err := Open(Options{}, srcs...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	return tb
}

// TestLossOnlyStandalone reads the loss-only DTZ and DTM tables on their
// own: with every pack hidden, DTZ and DTM can only come from dtz/ and dtm/,
// whose loss-only frames rebuild each win by one-ply minimax. The arbiter is
// the reference prober's output for the rows the loss-only set reproduces
// (the same DTZ and DTM the packs carry).
func TestLossOnlyStandalone(t *testing.T) {
	base := testenv.Shared(t, "chesstb")
	noPacks := func(name string) bool {
		return strings.HasPrefix(name, "dtm50/") || strings.HasPrefix(name, "dtc/")
	}
	tb := openView(t, noPacks, filepath.Join(base, "lossonly"), filepath.Join(base, "shipped"))
	rows := readOracle(t, filepath.Join(base, "oracle", "probe.tsv"), false)
	var sel []oracleRow
	for _, r := range rows {
		if r.hasForm("lossonly") {
			sel = append(sel, r)
		}
	}
	switch {
	case packRace:
		sel = sample(sel, 60)
	case testing.Short():
		sel = sample(sel, 300)
	}
	ctx := context.Background()
	bad := 0
	for _, r := range sel {
		pos := r.position(t)
		e := r.expectAll(t)
		res, err := tb.Probe(ctx, &pos)
		if err != nil {
			t.Errorf("line %d %s: %v", r.line, r.fen, err)
			bad++
			continue
		}
		// Only the metrics this view still carries are compared.
		e.dtcOK, e.dtm50OK = false, false
		res.HasDTC, res.HasDTM50 = false, false
		if d := compareAll(e, &res); len(d) > 0 {
			bad++
			if bad <= 20 {
				t.Errorf("line %d %s: %s", r.line, r.fen, strings.Join(d, "; "))
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d rows mismatch", bad, len(sel))
	}
}
