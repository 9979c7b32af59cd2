package chesstb

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/format/chesstb/internal/changepoint"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// packExpect is a row's expected value of every metric, as probe_fen
// printed it; ok is false where it printed nothing.
type packExpect struct {
	wdl            int
	dtz, dtm       int
	dtzOK, dtmOK   bool
	dtc            DTC
	dtcOK          bool
	dtm50          int
	dtm50OK        bool
	dtcRaw, d50Raw string
	// The verdicts the dtc and dtm50 fields print (WIN, DRAW, LOSE).
	dtcClass, d50Class Category
}

// classOf reads the CLASS part of a "CLASS/..." field.
func classOf(s string) Category {
	switch {
	case strings.HasPrefix(s, "WIN/"):
		return Win
	case strings.HasPrefix(s, "LOSE/"):
		return Loss
	}
	return Draw
}

// parseClassValue reads probe_fen's "CLASS/value" and "CLASS/order/value"
// fields: WIN/51 is +51, LOSE/n is -n, DRAW/0 is 0.
func parseClassValue(t testing.TB, s string, parts int) (vals []int, ok bool) {
	t.Helper()
	if s == "" {
		return nil, false
	}
	f := strings.Split(s, "/")
	if len(f) != parts {
		t.Fatalf("field %q: want %d parts", s, parts)
	}
	sign := 0
	switch f[0] {
	case "WIN":
		sign = 1
	case "LOSE":
		sign = -1
	case "DRAW":
	default:
		t.Fatalf("field %q: class %q", s, f[0])
	}
	for i, x := range f[1:] {
		v, err := strconv.Atoi(x)
		if err != nil {
			t.Fatalf("field %q: %v", s, err)
		}
		if i == len(f)-2 {
			v *= sign
		}
		vals = append(vals, v)
	}
	return vals, true
}

func (r oracleRow) expectAll(t testing.TB) packExpect {
	t.Helper()
	var e packExpect
	e.wdl, e.dtz, e.dtzOK, e.dtm, e.dtmOK = r.expected(t)
	if v, ok := parseClassValue(t, r.dtc, 3); ok {
		e.dtc, e.dtcOK = DTC{Pushes: v[0], Plies: v[1]}, true
		if e.dtc.Plies == 0 {
			e.dtc.Pushes = 0
		}
	}
	if v, ok := parseClassValue(t, r.dtm50, 2); ok {
		e.dtm50, e.dtm50OK = v[0], true
	}
	e.dtcRaw, e.d50Raw = r.dtc, r.dtm50
	e.dtcClass, e.d50Class = classOf(r.dtc), classOf(r.dtm50)
	return e
}

// probeDiffs probes pos with tb and lists every metric that disagrees with
// the row's expectation e (the probe's error, if it fails).
func probeDiffs(ctx context.Context, tb *Tablebase, pos *chess.Position, e packExpect) []string {
	res, err := tb.Probe(ctx, pos)
	if err != nil {
		return []string{err.Error()}
	}
	return compareAll(e, &res)
}

// compareAll lists every metric of res that disagrees with the row.
func compareAll(e packExpect, res *Result) []string {
	var d []string
	check := func(name string, wantOK bool, want int, has bool, got int, why error) {
		switch {
		case wantOK && !has:
			d = append(d, fmt.Sprintf("%s missing (%v)", name, why))
		case wantOK && got != want:
			d = append(d, fmt.Sprintf("%s %d want %d", name, got, want))
		case !wantOK && has && got != 0:
			d = append(d, fmt.Sprintf("%s %d where the reference has none", name, got))
		}
	}
	if !res.HasWDL || res.WDL != e.wdl {
		d = append(d, fmt.Sprintf("wdl %d want %d", res.WDL, e.wdl))
	}
	check("dtz", e.dtzOK, e.dtz, res.HasDTZ, res.DTZ, res.Unavailable[MetricDTZ])
	check("dtm", e.dtmOK, e.dtm, res.HasDTM, res.DTM, res.Unavailable[MetricDTM])
	check("dtm50", e.dtm50OK, e.dtm50, res.HasDTM50, res.DTM50, res.Unavailable[MetricDTM50])
	check("dtc.plies", e.dtcOK, e.dtc.Plies, res.HasDTC, res.DTC.Plies, res.Unavailable[MetricDTC])
	check("dtc.pushes", e.dtcOK, e.dtc.Pushes, res.HasDTC, res.DTC.Pushes, res.Unavailable[MetricDTC])
	if e.dtcOK && res.HasDTC && res.DTCClass != e.dtcClass {
		d = append(d, fmt.Sprintf("dtc class %v want %v", res.DTCClass, e.dtcClass))
	}
	if e.dtm50OK && res.HasDTM50 && res.DTM50Class != e.d50Class {
		d = append(d, fmt.Sprintf("dtm50 class %v want %v", res.DTM50Class, e.d50Class))
	}
	return d
}

// formDirs is the search order a row's forms column means: the folder
// itself, and for the reduced forms that folder before shipped/.
func formDirs(base, form string) []string {
	switch form {
	case "lossonly", "relaxed":
		return []string{filepath.Join(base, form), filepath.Join(base, "shipped")}
	}
	return []string{filepath.Join(base, form)}
}

// stateTally counts, per pack kind and record shape, the cells read and the
// rows whose answer was right, so every shape is shown reached and correct.
type stateTally struct {
	mu      sync.Mutex
	cur     map[[2]uint8]bool
	reached map[[2]uint8]int
	wrong   map[[2]uint8]int
}

func (s *stateTally) install(t *testing.T) {
	s.cur = map[[2]uint8]bool{}
	s.reached = map[[2]uint8]int{}
	s.wrong = map[[2]uint8]int{}
	f := func(k Kind, st changepoint.State) {
		s.mu.Lock()
		s.cur[[2]uint8{uint8(k), uint8(st)}] = true
		s.mu.Unlock()
	}
	packVisitHook.Store(&f)
	t.Cleanup(func() { packVisitHook.Store(nil) })
}

func (s *stateTally) row(ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.cur {
		s.reached[k]++
		if !ok {
			s.wrong[k]++
		}
	}
	clear(s.cur)
}

// TestPackOracle compares every metric of every oracle row (probe.tsv,
// children.tsv, seed_cases.tsv) with each table set its forms column
// names. The arbiter is the reference prober's printed output. Every record
// shape of both packs must be reached by some row, and all such rows right.
func TestPackOracle(t *testing.T) {
	base := testenv.Shared(t, "chesstb")
	var tally stateTally
	tally.install(t)
	ctx := context.Background()
	for _, form := range []string{"shipped", "full", "lossonly", "relaxed"} {
		// One table set per form, so its blocks are decoded once for all
		// three files.
		tb := openDirs(t, Options{BlockCacheBytes: 1 << 30}, formDirs(base, form)...)
		for _, file := range []string{"seed_cases.tsv", "probe.tsv", "children.tsv"} {
			t.Run(form+"/"+file, func(t *testing.T) {
				rows := readOracle(t, filepath.Join(base, "oracle", file), file == "children.tsv")
				var sel []oracleRow
				for _, r := range rows {
					if r.hasForm(form) {
						sel = append(sel, r)
					}
				}
				switch {
				case packRace && len(sel) > 25:
					// Every cold block costs seconds under the race
					// detector; the full sweep runs without it.
					sel = sample(sel, 25)
				case testing.Short() && len(sel) > 400:
					sel = sample(sel, 400)
				}
				bad := 0
				for _, r := range sel {
					pos := r.position(t)
					e := r.expectAll(t)
					diffs := probeDiffs(ctx, tb, &pos, e)
					// The single-metric calls skip reads Probe makes, and
					// must still give the same answers.
					if e.dtm50OK {
						if v, err := tb.DTM50(ctx, &pos); err != nil || v != e.dtm50 {
							diffs = append(diffs, fmt.Sprintf("DTM50() %d, %v", v, err))
						}
					}
					if e.dtcOK {
						if v, err := tb.DTC(ctx, &pos); err != nil || v != e.dtc {
							diffs = append(diffs, fmt.Sprintf("DTC() %+v, %v", v, err))
						}
					}
					tally.row(len(diffs) == 0)
					if len(diffs) > 0 {
						bad++
						if bad <= 30 {
							t.Errorf("line %d %s %s (dtc %s dtm50 %s): %s", r.line, r.fen, r.move, e.dtcRaw, e.d50Raw, strings.Join(diffs, "; "))
						}
					}
				}
				if bad > 0 {
					t.Errorf("%d of %d rows mismatch", bad, len(sel))
				}
			})
		}
	}
	for _, k := range []Kind{KindDTM50, KindDTC} {
		for st := changepoint.Const; st <= changepoint.Multi; st++ {
			key := [2]uint8{uint8(k), uint8(st)}
			t.Logf("%s %s: %d rows read it, %d wrong", k, st, tally.reached[key], tally.wrong[key])
			if tally.reached[key] == 0 {
				if k == KindDTC && st == changepoint.Multi {
					// No oracle row reads one; TestDTCMultiRecords reaches
					// them and checks each against a rebuild.
					continue
				}
				t.Errorf("no row reached a %s %s record", k, st)
			}
			if tally.wrong[key] != 0 {
				t.Errorf("%d rows reading a %s %s record are wrong", tally.wrong[key], k, st)
			}
		}
	}
}
