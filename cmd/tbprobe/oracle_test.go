package main

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"

	cchess "github.com/corentings/chess/v2"
	"github.com/tbfs/tbfs/internal/testkit/chesstboracle"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// wantJSON returns the JSON object the oracle row r says tbprobe --json
// must print for the position, as generic JSON values (numbers as
// float64), keyed exactly as the issue defines: a metric the reference
// printed nothing for has no key. Distances are signed from the side to
// move, as chesstboracle reads them. checkmate and stalemate come from the
// independent corentings/chess rules.
func wantJSON(t testing.TB, r chesstboracle.Row, fen string) map[string]any {
	t.Helper()
	wdl, dtz, dtm := r.Want(t)
	dtc, dtm50 := r.WantDTC(t)
	m := map[string]any{"fen": fen, "category": r.WantCategory(t), "wdl": float64(wdl)}
	if dtz != nil {
		m["dtz"] = float64(*dtz)
	}
	if dtm != nil {
		m["dtm"] = float64(*dtm)
	}
	if dtc != nil {
		m["dtc"] = map[string]any{"pushes": float64(dtc[0]), "plies": float64(dtc[1])}
	}
	if dtm50 != nil {
		m["dtm50"] = float64(*dtm50)
	}
	mate, stale := ccStatus(t, fen)
	m["checkmate"], m["stalemate"] = mate, stale
	if !mate && !stale && !bareKings(r.FEN, r.Move) {
		// chesstb's tables answer (wantProbe adds what Syzygy's do); the
		// board alone settles mates, stalemates and bare kings, which no
		// table answers.
		m["formats"] = []any{"chesstb"}
	}
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

// wantProbe is wantJSON for tables that include the Syzygy fixtures syz
// (the embedded defaults), which add their keys (syzygyFixtures.addProbe);
// nil syz is chesstb's tables alone.
func wantProbe(t *testing.T, syz *syzygyFixtures, r chesstboracle.Row, fen string) map[string]any {
	t.Helper()
	m := wantJSON(t, r, fen)
	if syz != nil {
		syz.addProbe(t, m, r, fen, func() dtzWant { return syz.root(t, r, fen) })
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
	// syzygy are the Syzygy fixtures among the tables (the built-in
	// ones), nil where the tables are chesstb's alone.
	syzygy *syzygyFixtures
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
		syzygy:   readSyzygyFixtures(t),
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
	return testenv.HasShared(t, "chesstb")
}

// tablesArgs turns a set's table locations into flags.
func (s oracleSet) tablesArgs() []string {
	var a []string
	for _, u := range s.tables {
		a = append(a, "--tables", u)
	}
	return a
}

// bareKings reports a FEN whose placement holds the two kings only, or,
// with a UCI move, whose move captures the last man beside them (a
// capture lands on an occupied square).
func bareKings(fen, move string) bool {
	men := 0
	occupied := map[string]bool{}
	for i, row := range strings.Split(strings.Fields(fen)[0], "/") {
		file := 0
		for _, c := range row {
			if c >= '1' && c <= '8' {
				file += int(c - '0')
				continue
			}
			occupied[string(rune('a'+file))+string(rune('8'-i))] = true
			file++
			men++
		}
	}
	if len(move) >= 4 && occupied[move[2:4]] {
		men--
	}
	return men == 2
}
