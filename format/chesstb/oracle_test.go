package chesstb

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/internal/testkit/chesstboracle"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/mmap"
)

// expected is the row's class and its DTZ and DTM signed by it, as
// chesstboracle reads them; ok is false for a metric the reference printed
// nothing for.
func expected(t testing.TB, r chesstboracle.Row) (wdl int, dtz int, dtzOK bool, dtm int, dtmOK bool) {
	t.Helper()
	wdl, pz, pm := r.Want(t)
	if pz != nil {
		dtz, dtzOK = *pz, true
	}
	if pm != nil {
		dtm, dtmOK = *pm, true
	}
	return wdl, dtz, dtzOK, dtm, dtmOK
}

func openDirs(t testing.TB, opts Options, dirs ...string) *Tablebase {
	t.Helper()
	var srcs []source.Source
	for _, d := range dirs {
		s, err := mmap.New(d)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		srcs = append(srcs, s)
	}
	tb, err := Open(opts, srcs...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	return tb
}

// missingDTZTable reports whether the table set lacks the DTZ file of the
// row's material: shipped KNNKP keeps its DTZ only inside the DTC pack,
// which the pack reader answers.
func missingDTZTable(dir string, material string) bool {
	_, err := os.Stat(filepath.Join(dir, "dtz", material+".lzdtz"))
	return err != nil
}

// checkRows probes every row against tb and reports mismatches. It returns
// how many rows were compared and how many DTZ values were left to the
// DTC pack.
func checkRows(t *testing.T, tb *Tablebase, dir string, rows []chesstboracle.Row) (compared, packDTZ int) {
	t.Helper()
	ctx := context.Background()
	bad := 0
	for _, r := range rows {
		pos := r.WantPosition(t)
		wdl, dtz, dtzOK, dtm, dtmOK := expected(t, r)
		res, err := tb.Probe(ctx, &pos)
		if err != nil {
			t.Errorf("line %d %s %s: %v", r.Line, r.FEN, r.Move, err)
			bad++
			continue
		}
		compared++
		var diffs []string
		if !res.HasWDL || res.WDL != wdl {
			diffs = append(diffs, "wdl "+strconv.Itoa(res.WDL)+" want "+strconv.Itoa(wdl))
		}
		switch {
		case dtzOK && res.HasDTZ && res.DTZ != dtz:
			diffs = append(diffs, "dtz "+strconv.Itoa(res.DTZ)+" want "+strconv.Itoa(dtz))
		case dtzOK && !res.HasDTZ:
			if errors.Is(res.Unavailable[MetricDTZ], ErrNoTable) && missingDTZTable(dir, res.Material) {
				packDTZ++
			} else {
				diffs = append(diffs, "dtz missing: "+errString(res.Unavailable[MetricDTZ]))
			}
		case !dtzOK && res.HasDTZ:
			diffs = append(diffs, "dtz "+strconv.Itoa(res.DTZ)+" where the reference has none")
		}
		switch {
		case dtmOK && res.HasDTM && res.DTM != dtm:
			diffs = append(diffs, "dtm "+strconv.Itoa(res.DTM)+" want "+strconv.Itoa(dtm))
		case dtmOK && !res.HasDTM:
			diffs = append(diffs, "dtm missing: "+errString(res.Unavailable[MetricDTM]))
		case !dtmOK && res.HasDTM && res.DTM != 0:
			diffs = append(diffs, "dtm "+strconv.Itoa(res.DTM)+" where the reference has none")
		}
		if len(diffs) > 0 {
			bad++
			if bad <= 40 {
				t.Errorf("line %d %s %s: %s", r.Line, r.FEN, r.Move, strings.Join(diffs, "; "))
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d rows mismatch", bad, len(rows))
	}
	return compared, packDTZ
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

func TestSharedOracle(t *testing.T) {
	base := testenv.Shared(t, "chesstb")
	for _, form := range []string{"shipped", "full"} {
		for _, file := range []string{"probe.tsv", "children.tsv", "seed_cases.tsv"} {
			t.Run(form+"/"+file, func(t *testing.T) {
				rows := chesstboracle.Read(t, filepath.Join(base, "oracle", file))
				var sel []chesstboracle.Row
				for _, r := range rows {
					if r.HasForm(form) {
						sel = append(sel, r)
					}
				}
				if testing.Short() && len(sel) > 300 {
					sel = sample(sel, 300)
				}
				single := sel
				if testing.Short() {
					single = sample(sel, 150)
				}
				if raceEnabled {
					// The race detector slows probes tenfold; the full sweep
					// runs without it.
					sel, single = sample(sel, 60), sample(sel, 30)
				}
				dir := filepath.Join(base, form)
				tb := openDirs(t, Options{}, dir)
				n, pack := checkRows(t, tb, dir, sel)
				checkSingleMetrics(t, openDirs(t, Options{}, dir), single)
				t.Logf("%d rows compared, %d DTZ values left to the DTC pack", n, pack)
			})
		}
	}
}

// sample keeps every k-th row so short runs still touch every material.
func sample(rows []chesstboracle.Row, n int) []chesstboracle.Row {
	k := (len(rows) + n - 1) / n
	var out []chesstboracle.Row
	for i := 0; i < len(rows); i += k {
		out = append(out, rows[i])
	}
	return out
}

// TestFixtureOracle runs the committed subset (testdata/chesstb) so a fresh
// clone checks real tables against the reference's answers.
func TestFixtureOracle(t *testing.T) {
	dir := testenv.Testdata(t, "chesstb")
	for _, file := range []string{"probe.tsv", "children.tsv", "seed_cases.tsv"} {
		t.Run(file, func(t *testing.T) {
			rows := chesstboracle.Read(t, filepath.Join(dir, "oracle", file))
			if len(rows) == 0 {
				t.Fatal("no fixture rows")
			}
			tb := openDirs(t, Options{}, dir)
			n, pack := checkRows(t, tb, dir, rows)
			checkSingleMetrics(t, openDirs(t, Options{}, dir), rows)
			if pack != 0 {
				t.Errorf("%d DTZ values missing from the fixture set", pack)
			}
			t.Logf("%d rows compared", n)
		})
	}
}

// checkSingleMetrics checks that WDL, DTZ and DTM asked one at a time agree
// with the reference too: they take their own, cheaper paths.
func checkSingleMetrics(t *testing.T, tb *Tablebase, rows []chesstboracle.Row) {
	t.Helper()
	ctx := context.Background()
	bad := 0
	for _, r := range rows {
		pos := r.WantPosition(t)
		wdl, dtz, dtzOK, dtm, dtmOK := expected(t, r)
		if w, err := tb.WDL(ctx, &pos); err != nil || w != wdl {
			bad++
			t.Errorf("line %d %s %s: WDL %d %v, want %d", r.Line, r.FEN, r.Move, w, err, wdl)
		}
		if d, err := tb.DTZ(ctx, &pos); dtzOK && (err != nil || d != dtz) {
			bad++
			t.Errorf("line %d %s %s: DTZ %d %v, want %d", r.Line, r.FEN, r.Move, d, err, dtz)
		}
		if d, err := tb.DTM(ctx, &pos); dtmOK && (err != nil || d != dtm) {
			bad++
			t.Errorf("line %d %s %s: DTM %d %v, want %d", r.Line, r.FEN, r.Move, d, err, dtm)
		}
		if bad > 20 {
			t.Fatal("too many mismatches")
		}
	}
}
