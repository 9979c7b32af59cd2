package chesstb

import (
	"bufio"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/mmap"
)

// oracleRow is one line of the reference prober's output (probe.tsv,
// children.tsv, seed_cases.tsv), the arbiter of every value test here.
type oracleRow struct {
	line    int
	fen     string // the position probed (for children: the parent)
	move    string // children.tsv: the UCI move played from fen
	wdl     string
	dtz     string
	dtc     string
	dtm     string
	dtm50   string
	forms   []string
	childOf bool
}

func (r oracleRow) hasForm(f string) bool {
	for _, x := range r.forms {
		if x == f {
			return true
		}
	}
	return false
}

// readOracle parses a probe.tsv-shaped (children=false) or
// children.tsv-shaped file.
func readOracle(t testing.TB, path string, children bool) []oracleRow {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []oracleRow
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		if line == 1 {
			continue
		}
		c := strings.Split(sc.Text(), "\t")
		r := oracleRow{line: line, childOf: children}
		if children {
			if len(c) != 8 {
				t.Fatalf("%s:%d: %d columns", path, line, len(c))
			}
			r.fen, r.move, c = c[0], c[1], c[2:]
		} else {
			if len(c) != 7 {
				t.Fatalf("%s:%d: %d columns", path, line, len(c))
			}
			r.fen, c = c[0], c[1:]
		}
		r.wdl, r.dtz, r.dtc, r.dtm, r.dtm50 = c[0], c[1], c[2], c[3], c[4]
		r.forms = strings.Split(c[5], ",")
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

var categoryByName = map[string]int{"WIN": 2, "CURSED_WIN": 1, "DRAW": 0, "BLESSED_LOSS": -1, "LOSE": -2}

// expected turns a row's printed fields into our signed values. ok is false
// for a metric the reference printed nothing for.
func (r oracleRow) expected(t testing.TB) (wdl int, dtz int, dtzOK bool, dtm int, dtmOK bool) {
	t.Helper()
	wdl, found := categoryByName[r.wdl]
	if !found {
		t.Fatalf("line %d: class %q", r.line, r.wdl)
	}
	sign := 1
	if wdl < 0 {
		sign = -1
	}
	num := func(s string) (int, bool) {
		if s == "" {
			return 0, false
		}
		v, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("line %d: number %q", r.line, s)
		}
		return sign * v, true
	}
	dtz, dtzOK = num(r.dtz)
	dtm, dtmOK = num(r.dtm)
	return
}

// position returns the position the row's values describe: the FEN, or for
// a children row the FEN with the move played (clock threaded by Play).
func (r oracleRow) position(t testing.TB) chess.Position {
	t.Helper()
	pos, err := chess.ParseFEN(r.fen)
	if err != nil {
		t.Fatalf("line %d: %v", r.line, err)
	}
	if r.move == "" {
		return pos
	}
	m, err := pos.ParseMove(r.move)
	if err != nil {
		t.Fatalf("line %d: move %s: %v", r.line, r.move, err)
	}
	return pos.Play(m)
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
func checkRows(t *testing.T, tb *Tablebase, dir string, rows []oracleRow) (compared, packDTZ int) {
	t.Helper()
	ctx := context.Background()
	bad := 0
	for _, r := range rows {
		pos := r.position(t)
		wdl, dtz, dtzOK, dtm, dtmOK := r.expected(t)
		res, err := tb.Probe(ctx, &pos)
		if err != nil {
			t.Errorf("line %d %s %s: %v", r.line, r.fen, r.move, err)
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
				t.Errorf("line %d %s %s: %s", r.line, r.fen, r.move, strings.Join(diffs, "; "))
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
				rows := readOracle(t, filepath.Join(base, "oracle", file), file == "children.tsv")
				var sel []oracleRow
				for _, r := range rows {
					if r.hasForm(form) {
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
func sample(rows []oracleRow, n int) []oracleRow {
	k := (len(rows) + n - 1) / n
	var out []oracleRow
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
			rows := readOracle(t, filepath.Join(dir, "oracle", file), file == "children.tsv")
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
func checkSingleMetrics(t *testing.T, tb *Tablebase, rows []oracleRow) {
	t.Helper()
	ctx := context.Background()
	bad := 0
	for _, r := range rows {
		pos := r.position(t)
		wdl, dtz, dtzOK, dtm, dtmOK := r.expected(t)
		if w, err := tb.WDL(ctx, &pos); err != nil || w != wdl {
			bad++
			t.Errorf("line %d %s %s: WDL %d %v, want %d", r.line, r.fen, r.move, w, err, wdl)
		}
		if d, err := tb.DTZ(ctx, &pos); dtzOK && (err != nil || d != dtz) {
			bad++
			t.Errorf("line %d %s %s: DTZ %d %v, want %d", r.line, r.fen, r.move, d, err, dtz)
		}
		if d, err := tb.DTM(ctx, &pos); dtmOK && (err != nil || d != dtm) {
			bad++
			t.Errorf("line %d %s %s: DTM %d %v, want %d", r.line, r.fen, r.move, d, err, dtm)
		}
		if bad > 20 {
			t.Fatal("too many mismatches")
		}
	}
}
