package dataset_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/dataset"
	"github.com/tbfs/tbfs/internal/testkit/chesstboracle"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// The arbiter of these tests is the reference prober's oracle TSVs: every
// exact label of a row whose FEN the oracle holds must equal the oracle's
// value, never our own earlier output.

// oracleWant is what an oracle row says a dataset row must hold.
type oracleWant struct {
	wdl, dtz, dtm, dtm50 *int
	dtc                  *dataset.DTC
	category             string
}

func wantOf(t *testing.T, r chesstboracle.Row) oracleWant {
	t.Helper()
	wdl, dtz, dtm := r.Want(t)
	dtc, dtm50 := r.WantDTC(t)
	w := oracleWant{wdl: &wdl, dtz: dtz, dtm: dtm, dtm50: dtm50, category: r.WantRuleCategory(t)}
	if dtc != nil {
		w.dtc = &dataset.DTC{Pushes: dtc[0], Plies: dtc[1]}
	}
	return w
}

// checkRow compares one exact row with the oracle's values. A position the
// board settles (mate, stalemate) has distance 0 by the rules of the game
// where the reference printed nothing (it prints nothing without a table).
func checkRow(t *testing.T, where string, got *dataset.Row, w oracleWant) {
	t.Helper()
	if got.Label != dataset.LabelExact {
		t.Errorf("%s: %s: %s (%s), the oracle has values", where, got.FEN, got.Label, got.Reason)
		return
	}
	v := got.Values
	board := v.Checkmate || v.Stalemate
	zero := 0
	fill := func(p *int) *int {
		if p == nil && board {
			return &zero
		}
		return p
	}
	if w.dtc == nil && board {
		w.dtc = &dataset.DTC{}
	}
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"wdl", v.WDL, w.wdl}, {"dtz", v.DTZ, fill(w.dtz)}, {"dtm", v.DTM, fill(w.dtm)},
		{"dtm50", v.DTM50, fill(w.dtm50)}, {"dtc", v.DTC, w.dtc}, {"category", got.Category, w.category},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: %s: %s %v, the oracle says %v", where, got.FEN, c.name, show(c.got), show(c.want))
		}
	}
}

func show(v any) any {
	switch p := v.(type) {
	case *int:
		if p == nil {
			return "none"
		}
		return *p
	case *dataset.DTC:
		if p == nil {
			return "none"
		}
		return *p
	}
	return v
}

// oracleRows reads probe.tsv-shaped files, keeping the rows the table form
// form reproduces ("" keeps all), keyed by normalised FEN.
func oracleRows(t *testing.T, form string, files ...string) ([]chesstboracle.Row, map[string]chesstboracle.Row) {
	t.Helper()
	var rows []chesstboracle.Row
	byFEN := map[string]chesstboracle.Row{}
	for _, f := range files {
		for _, r := range chesstboracle.Read(t, f) {
			if form != "" && !r.HasForm(form) {
				continue
			}
			pos, err := chess.ParseFEN(r.FEN)
			if err != nil {
				t.Fatalf("%s: %v", r.Where, err)
			}
			rows = append(rows, r)
			byFEN[pos.FEN()] = r
		}
	}
	return rows, byFEN
}

// generateFENs generates an artifact of rows' FENs with l and reads it back.
func generateFENs(t *testing.T, l *dataset.Labeler, rows []chesstboracle.Row) []dataset.Row {
	t.Helper()
	var b strings.Builder
	for _, r := range rows {
		b.WriteString(r.FEN + "\n")
	}
	dir := filepath.Join(t.TempDir(), "out")
	if _, err := dataset.Generate(context.Background(), l, dataset.GenerateOptions{FENs: []byte(b.String())}, dir); err != nil {
		t.Fatal(err)
	}
	got := readRows(t, dir)
	if len(got) != len(rows) {
		t.Fatalf("%d rows for %d FENs", len(got), len(rows))
	}
	return got
}

// TestOracleFixtures sweeps the fixture oracle: probe.tsv's positions
// generated from the fixture tables carry the oracle's values and
// rule-true category; children.tsv's complete parents give the moves
// that keep the result.
func TestOracleFixtures(t *testing.T) {
	rows, _ := oracleRows(t, "shipped", testenv.Testdata(t, "chesstb", "oracle", "probe.tsv"))
	rows = chesstboracle.Sample(rows, 150, raceEnabled || testing.Short())
	got := generateFENs(t, fixtureLabeler(t), rows)
	for i := range rows {
		checkRow(t, rows[i].Where, &got[i], wantOf(t, rows[i]))
	}
}

// TestOracleKeepingMoves: for every parent of children.tsv whose legal
// moves (the rules) the file lists in full, the moves that keep the
// mover's best rule-true result, read from the oracle's child values,
// are the row's keeping moves; every best move is one of them.
func TestOracleKeepingMoves(t *testing.T) {
	kids := chesstboracle.Read(t, testenv.Testdata(t, "chesstb", "oracle", "children.tsv"))
	byParent := map[string][]chesstboracle.Row{}
	var parents []string
	for _, k := range kids {
		if !k.HasForm("shipped") {
			continue
		}
		if _, ok := byParent[k.FEN]; !ok {
			parents = append(parents, k.FEN)
		}
		byParent[k.FEN] = append(byParent[k.FEN], k)
	}
	outcome := map[string]int{"win": 1, "cursed-win": 0, "draw": 0, "blessed-loss": 0, "loss": -1}
	var complete []chesstboracle.Row
	want := map[string][]string{}
	for _, p := range parents {
		pos, err := chess.ParseFEN(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(byParent[p]) != len(pos.LegalMoves(nil)) {
			continue
		}
		best := -2
		moves := map[string]int{}
		for _, k := range byParent[p] {
			o := -outcome[k.WantRuleCategory(t)]
			moves[k.Move] = o
			best = max(best, o)
		}
		var keep []string
		for m, o := range moves {
			if o == best {
				keep = append(keep, m)
			}
		}
		slices.Sort(keep)
		want[p] = keep
		complete = append(complete, chesstboracle.Row{FEN: p, Where: byParent[p][0].Where})
	}
	if len(complete) == 0 {
		t.Fatal("children.tsv lists no parent in full")
	}
	got := generateFENs(t, fixtureLabeler(t), complete)
	for i, p := range complete {
		g := &got[i]
		if !slices.Equal(g.KeepingMoves, want[p.FEN]) {
			t.Errorf("%s: %s: keeping moves %v, the oracle's children say %v", p.Where, p.FEN, g.KeepingMoves, want[p.FEN])
		}
		for _, m := range g.BestMoves {
			if !slices.Contains(want[p.FEN], m) {
				t.Errorf("%s: %s: best move %s loses the result the oracle's children keep", p.Where, p.FEN, m)
			}
		}
	}
	t.Logf("%d complete parents", len(complete))
}

// TestOracleSample: every row of the shipped sample whose FEN the fixture
// oracle holds carries the oracle's values.
func TestOracleSample(t *testing.T) {
	_, byFEN := oracleRows(t, "shipped", testenv.Testdata(t, "chesstb", "oracle", "probe.tsv"))
	n := 0
	for _, r := range readRows(t, sampleDir(t)) {
		o, ok := byFEN[r.FEN]
		if !ok {
			continue
		}
		n++
		checkRow(t, o.Where, &r, wantOf(t, o))
	}
	if n < 30 {
		t.Errorf("only %d sample rows are in the oracle", n)
	}
}

// TestOracleShared sweeps the shared shipped set's oracle files against
// the shared tables (always present in CI).
func TestOracleShared(t *testing.T) {
	if !testenv.HasShared(t, "chesstb") {
		t.Skip("no ../shared/chesstb")
	}
	base := testenv.Shared(t, "chesstb")
	rows, _ := oracleRows(t, "", filepath.Join(base, "oracle", "probe.tsv"), filepath.Join(base, "oracle", "seed_cases.tsv"))
	rows = chesstboracle.Sample(rows, 30, raceEnabled || testing.Short())
	if _, err := os.Stat(filepath.Join(base, "shipped")); err != nil {
		t.Fatal(err)
	}
	got := generateFENs(t, dirLabeler(t, filepath.Join(base, "shipped")), rows)
	for i := range rows {
		checkRow(t, rows[i].Where, &got[i], wantOf(t, rows[i]))
	}
}
