package render_test

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tbfs/tbfs/internal/testenv"
)

// oracleRow is one line of the reference prober's answers (probe.tsv,
// seed_cases.tsv or children.tsv), the arbiter of every value checked here.
type oracleRow struct {
	where                     string // file:line, for messages
	fen, move                 string // move is set for children.tsv rows
	wdl, dtz, dtc, dtm, dtm50 string
	forms                     string
}

// readOracle reads a probe.tsv- or children.tsv-shaped file.
func readOracle(t testing.TB, path string) []oracleRow {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	children := strings.HasSuffix(path, "children.tsv")
	var rows []oracleRow
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		if n == 1 {
			continue
		}
		c := strings.Split(sc.Text(), "\t")
		r := oracleRow{where: filepath.Base(path) + ":" + strconv.Itoa(n)}
		if children {
			if len(c) != 8 {
				t.Fatalf("%s: %d columns", r.where, len(c))
			}
			r.fen, r.move, c = c[0], c[1], c[2:]
		} else {
			if len(c) != 7 {
				t.Fatalf("%s: %d columns", r.where, len(c))
			}
			r.fen, c = c[0], c[1:]
		}
		r.wdl, r.dtz, r.dtc, r.dtm, r.dtm50, r.forms = c[0], c[1], c[2], c[3], c[4], c[5]
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

func (r oracleRow) hasForm(form string) bool {
	for f := range strings.SplitSeq(r.forms, ",") {
		if f == form {
			return true
		}
	}
	return false
}

var wdlByClass = map[string]int{"WIN": 2, "CURSED_WIN": 1, "DRAW": 0, "BLESSED_LOSS": -1, "LOSE": -2}

// want returns the row's values as the report carries them: the class as
// -2..2, and each distance signed by the class (the reference prints
// unsigned distances next to the class). ok is false for a metric the
// reference printed nothing for.
func (r oracleRow) want(t testing.TB) (wdl int, dtz *int, dtm *int) {
	t.Helper()
	wdl, found := wdlByClass[r.wdl]
	if !found {
		t.Fatalf("%s: class %q", r.where, r.wdl)
	}
	sign := 1
	if wdl < 0 {
		sign = -1
	}
	num := func(s string) *int {
		if s == "" {
			return nil
		}
		v, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("%s: number %q", r.where, s)
		}
		v *= sign
		return &v
	}
	return wdl, num(r.dtz), num(r.dtm)
}

// oracleSets lists the table folders and oracle files the tests check: the
// committed fixtures always, and the full shared set when it is present
// (always under CI).
type oracleSet struct {
	name   string
	tables string
	files  []string
	// raceRows is how many rows a sweep keeps under the race detector or
	// -short: the shared set's rows need derivations that the detector
	// slows a hundredfold, and races are about concurrency, not coverage.
	raceRows int
}

func oracleSets(t *testing.T) []oracleSet {
	t.Helper()
	sets := []oracleSet{{
		name:     "fixtures",
		tables:   testenv.Testdata(t, "chesstb"),
		files:    []string{testenv.Testdata(t, "chesstb", "oracle", "probe.tsv")},
		raceRows: 150,
	}}
	shared := os.Getenv("TBFS_SHARED")
	if shared == "" {
		shared = filepath.Join(testenv.RepoRoot(t), "..", "shared")
	}
	if _, err := os.Stat(filepath.Join(shared, "chesstb")); err == nil || testenv.InCI() {
		base := testenv.Shared(t, "chesstb")
		sets = append(sets, oracleSet{
			name:   "shared",
			tables: filepath.Join(base, "shipped"),
			files: []string{
				filepath.Join(base, "oracle", "probe.tsv"),
				filepath.Join(base, "oracle", "seed_cases.tsv"),
			},
			raceRows: 30,
		})
	}
	return sets
}

// sampled keeps every row normally and an even spread of at most n rows
// under the race detector or -short, so every material is still touched.
func sampled(rows []oracleRow, n int) []oracleRow {
	if (!raceEnabled && !testing.Short()) || len(rows) <= n {
		return rows
	}
	k := (len(rows) + n - 1) / n
	var out []oracleRow
	for i := 0; i < len(rows); i += k {
		out = append(out, rows[i])
	}
	return out
}

// timeLeft reports whether the test has at least a minute before its
// deadline. Sweeps stop early otherwise: a test binary killed by its
// timeout while a goroutine waits on the binary's own mount leaves that
// mount hung, which no cleanup can undo.
func timeLeft(t *testing.T) bool {
	d, ok := t.Deadline()
	return !ok || time.Until(d) > time.Minute
}

// wantDTC returns the row's DTC ("CLASS/order/value") as pushes and signed
// plies, and its DTM50 ("CLASS/value") signed, nil where the reference
// printed nothing. The class gives the sign: WIN +, LOSE -, DRAW 0.
func (r oracleRow) wantDTC(t testing.TB) (dtc *[2]int, dtm50 *int) {
	t.Helper()
	classSign := map[string]int{"WIN": 1, "LOSE": -1, "DRAW": 0}
	if r.dtc != "" {
		f := strings.Split(r.dtc, "/")
		sign, ok := classSign[f[0]]
		if len(f) != 3 || !ok {
			t.Fatalf("%s: dtc %q", r.where, r.dtc)
		}
		pushes, err1 := strconv.Atoi(f[1])
		plies, err2 := strconv.Atoi(f[2])
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: dtc %q", r.where, r.dtc)
		}
		dtc = &[2]int{pushes, sign * plies}
	}
	if r.dtm50 != "" {
		f := strings.Split(r.dtm50, "/")
		sign, ok := classSign[f[0]]
		if len(f) != 2 || !ok {
			t.Fatalf("%s: dtm50 %q", r.where, r.dtm50)
		}
		v, err := strconv.Atoi(f[1])
		if err != nil {
			t.Fatalf("%s: dtm50 %q", r.where, r.dtm50)
		}
		v *= sign
		dtm50 = &v
	}
	return dtc, dtm50
}
