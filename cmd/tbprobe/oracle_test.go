package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	cchess "github.com/corentings/chess/v2"
	"github.com/tbfs/tbfs/internal/testenv"
)

// oracleRow is one line of the reference prober's answers (probe.tsv,
// seed_cases.tsv or children.tsv): the arbiter of every value checked here.
type oracleRow struct {
	where                     string // file:line, for messages
	fen, move                 string // move is set for children.tsv rows
	wdl, dtz, dtc, dtm, dtm50 string
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
		want := 7
		if children {
			want = 8
		}
		if len(c) != want {
			t.Fatalf("%s: %d columns, want %d", r.where, len(c), want)
		}
		r.fen, c = c[0], c[1:]
		if children {
			r.move, c = c[0], c[1:]
		}
		r.wdl, r.dtz, r.dtc, r.dtm, r.dtm50 = c[0], c[1], c[2], c[3], c[4]
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// classes maps the reference's class names to WDL values and to the
// category names our JSON uses.
var classes = map[string]struct {
	wdl      int
	category string
}{
	"WIN": {2, "win"}, "CURSED_WIN": {1, "cursed-win"}, "DRAW": {0, "draw"},
	"BLESSED_LOSS": {-1, "blessed-loss"}, "LOSE": {-2, "loss"},
}

// class looks a class name up, failing the test on an unknown one.
func class(t testing.TB, where, name string) (wdl int, category string) {
	t.Helper()
	c, ok := classes[name]
	if !ok {
		t.Fatalf("%s: unknown class %q", where, name)
	}
	return c.wdl, c.category
}

func sign(wdl int) int {
	if wdl < 0 {
		return -1
	}
	return 1
}

func atoi(t testing.TB, where, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%s: number %q", where, s)
	}
	return n
}

// wantJSON returns the JSON object the row says tbprobe --json must print
// for the position, as generic JSON values (numbers as float64), keyed
// exactly as the issue defines: a metric the reference printed nothing for
// has no key. Distances are signed from the side to move: the reference
// prints them unsigned beside their class. checkmate and stalemate come
// from the independent corentings/chess rules.
func (r oracleRow) wantJSON(t testing.TB, fen string) map[string]any {
	t.Helper()
	wdl, cat := class(t, r.where, r.wdl)
	m := map[string]any{"fen": fen, "category": cat, "wdl": float64(wdl)}
	if r.dtz != "" {
		m["dtz"] = float64(sign(wdl) * atoi(t, r.where, r.dtz))
	}
	if r.dtm != "" {
		m["dtm"] = float64(sign(wdl) * atoi(t, r.where, r.dtm))
	}
	if r.dtc != "" {
		p := strings.Split(r.dtc, "/")
		if len(p) != 3 {
			t.Fatalf("%s: dtc %q", r.where, r.dtc)
		}
		w, _ := class(t, r.where, p[0])
		m["dtc"] = map[string]any{
			"pushes": float64(atoi(t, r.where, p[1])),
			"plies":  float64(sign(w) * atoi(t, r.where, p[2])),
		}
	}
	if r.dtm50 != "" {
		p := strings.Split(r.dtm50, "/")
		if len(p) != 2 {
			t.Fatalf("%s: dtm50 %q", r.where, r.dtm50)
		}
		w, _ := class(t, r.where, p[0])
		m["dtm50"] = float64(sign(w) * atoi(t, r.where, p[1]))
	}
	mate, stale := ccStatus(t, fen)
	m["checkmate"], m["stalemate"] = mate, stale
	if mate {
		// A checkmated side is mated in 0 plies by the rules of the game,
		// with or without a DTM table; the reference prints nothing where
		// the material has no DTM table (the 5-man sets), we print the 0.
		for _, k := range []string{"dtm", "dtm50"} {
			if _, ok := m[k]; !ok {
				m[k] = float64(0)
			}
		}
	}
	return m
}

// ccMu serialises calls into corentings/chess: its FEN decoder writes
// package-level state, so concurrent test clients would race in it.
var ccMu sync.Mutex

// ccStatus asks corentings/chess whether fen is checkmate or stalemate.
func ccStatus(t testing.TB, fen string) (checkmate, stalemate bool) {
	t.Helper()
	ccMu.Lock()
	defer ccMu.Unlock()
	opt, err := cchess.FEN(fen)
	if err != nil {
		t.Fatalf("corentings cannot read %q: %v", fen, err)
	}
	st := cchess.NewGame(opt).Position().Status()
	return st == cchess.Checkmate, st == cchess.Stalemate
}

// oracleSet is a table location with the oracle files it answers.
type oracleSet struct {
	name     string
	tables   []string // --tables arguments; none means the built-in fixtures
	probe    []string // probe.tsv-shaped files
	children string
}

// oracleSets lists the fixture set (always) and the shared shipped set when
// it is present (always in CI).
func oracleSets(t *testing.T) []oracleSet {
	t.Helper()
	sets := []oracleSet{{
		name: "fixtures",
		probe: []string{
			testenv.Testdata(t, "chesstb", "oracle", "probe.tsv"),
			testenv.Testdata(t, "chesstb", "oracle", "seed_cases.tsv"),
		},
		children: testenv.Testdata(t, "chesstb", "oracle", "children.tsv"),
	}}
	if sharedPresent(t) {
		base := testenv.Shared(t, "chesstb")
		sets = append(sets, oracleSet{
			name:   "shared",
			tables: []string{filepath.Join(base, "shipped")},
			probe: []string{
				filepath.Join(base, "oracle", "probe.tsv"),
				filepath.Join(base, "oracle", "seed_cases.tsv"),
			},
			children: filepath.Join(base, "oracle", "children.tsv"),
		})
	}
	return sets
}

// sharedPresent reports whether ../shared/chesstb exists, or must (CI).
func sharedPresent(t *testing.T) bool {
	t.Helper()
	shared := os.Getenv("TBFS_SHARED")
	if shared == "" {
		shared = filepath.Join(testenv.RepoRoot(t), "..", "shared")
	}
	_, err := os.Stat(filepath.Join(shared, "chesstb"))
	return err == nil || testenv.InCI()
}

// tablesArgs turns a set's table locations into flags.
func (s oracleSet) tablesArgs() []string {
	var a []string
	for _, u := range s.tables {
		a = append(a, "--tables", u)
	}
	return a
}
