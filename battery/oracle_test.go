package battery_test

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tbfs/tbfs/battery"
	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/format/chesstb"
	"github.com/tbfs/tbfs/internal/testkit/chesstboracle"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/source/mmap"
)

// openTables opens a chesstb table folder for the tables arbiter.
func openTables(t *testing.T, dir string) *chesstb.Tablebase {
	t.Helper()
	src, err := mmap.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := chesstb.Open(chesstb.Options{}, src)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	return tb
}

// sharedTables returns the shared shipped tables, nil on a machine without
// them (never under CI).
func sharedTables(t *testing.T) *chesstb.Tablebase {
	t.Helper()
	if !testenv.HasShared(t, "chesstb") {
		return nil
	}
	return openTables(t, testenv.Shared(t, "chesstb", "shipped"))
}

// oracleOutcome is the mover's rule-true result of a children.tsv row: the
// negated 50-move-rule category of the position the move leaves, as the
// reference's clocked verdicts give it.
func oracleOutcome(t *testing.T, r chesstboracle.Row) battery.Outcome {
	t.Helper()
	switch r.WantRuleCategory(t) {
	case "win":
		return battery.Lost
	case "loss":
		return battery.Won
	}
	return battery.Drawn
}

// oracleSets groups children.tsv into each parent's move outcomes.
func oracleSets(t *testing.T, path, form string) (map[string]map[string]battery.Outcome, []string) {
	t.Helper()
	sets := map[string]map[string]battery.Outcome{}
	var order []string
	for _, r := range chesstboracle.Read(t, path) {
		if !r.HasForm(form) {
			continue
		}
		if sets[r.FEN] == nil {
			sets[r.FEN] = map[string]battery.Outcome{}
			order = append(order, r.FEN)
		}
		sets[r.FEN][r.Move] = oracleOutcome(t, r)
	}
	return sets, order
}

// TestMoveOutcomesAgainstChildrenOracle sweeps the whole children.tsv of
// the committed fixtures and of the shared set (a spread of 40 parents
// each under the race detector or -short): the tables arbiter's
// result of every legal move (and so every expected set it gives) is the
// one the reference prober's child values give, at the row's clock.
func TestMoveOutcomesAgainstChildrenOracle(t *testing.T) {
	type set struct{ name, tables, children string }
	sets := []set{{"fixtures", testenv.Testdata(t, "chesstb"), testenv.Testdata(t, "chesstb", "oracle", "children.tsv")}}
	if testenv.HasShared(t, "chesstb") {
		base := testenv.Shared(t, "chesstb")
		sets = append(sets, set{"shared", filepath.Join(base, "shipped"), filepath.Join(base, "oracle", "children.tsv")})
	}
	ctx := context.Background()
	for _, s := range sets {
		t.Run(s.name, func(t *testing.T) {
			tb := openTables(t, s.tables)
			want, order := oracleSets(t, s.children, "shipped")
			// The detector slows probing tenfold; it needs concurrency, not coverage.
			order = chesstboracle.Sample(order, 40, raceEnabled || testing.Short())
			for _, fen := range order {
				pos, err := chess.ParseFEN(fen)
				if err != nil {
					t.Fatal(err)
				}
				got, err := battery.MoveOutcomes(ctx, tb, &pos)
				if err != nil {
					t.Errorf("%s: %v", fen, err)
					continue
				}
				if !maps.Equal(got, want[fen]) {
					t.Errorf("%s: outcomes %v, oracle %v", fen, got, want[fen])
				}
				gk, gb := battery.KeepingMoves(got)
				wk, wb := battery.KeepingMoves(want[fen])
				if gb != wb || !slices.Equal(gk, wk) {
					t.Errorf("%s: keeping %v (%s), oracle %v (%s)", fen, gk, gb, wk, wb)
				}
			}
			t.Logf("%d parents", len(order))
		})
	}
}

// TestShippedTablesRowsAgainstOracle holds each shipped tables row to the
// reference's own values: a row whose position is a children.tsv parent
// has the oracle's keeping set (when it is not every move), and a row
// whose position is in probe.tsv says "no mate" exactly when the oracle
// calls it a cursed win or blessed loss at its clock.
func TestShippedTablesRowsAgainstOracle(t *testing.T) {
	base := testenv.Shared(t, "chesstb")
	children, _ := oracleSets(t, filepath.Join(base, "oracle", "children.tsv"), "shipped")
	probe := map[string]string{}
	for _, r := range chesstboracle.Read(t, filepath.Join(base, "oracle", "probe.tsv")) {
		if r.HasForm("shipped") {
			probe[r.FEN] = r.WantRuleCategory(t)
		}
	}
	rows, err := battery.Shipped()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, r := range rows {
		if r.Arbiter.Kind != "tables" {
			continue
		}
		props := map[string]battery.Property{}
		for _, p := range r.Props {
			props[p.Kind] = p
		}
		if oc, ok := children[r.FEN]; ok {
			checked++
			keep, _ := battery.KeepingMoves(oc)
			got, has := props["best-in"]
			switch {
			case len(keep) == len(oc) && has:
				t.Errorf("%s: best-in %v, but every move keeps the result", r.ID, got.Moves)
			case len(keep) < len(oc) && !slices.Equal(got.Moves, keep):
				t.Errorf("%s: best-in %v, oracle keeps %v", r.ID, got.Moves, keep)
			}
		}
		if c, ok := probe[r.FEN]; ok {
			checked++
			_, noMate := props["no-mate"]
			if want := c == "cursed-win" || c == "blessed-loss"; noMate != want {
				t.Errorf("%s: no-mate %v, oracle category %s", r.ID, noMate, c)
			}
		}
	}
	if checked < 50 {
		t.Errorf("only %d oracle comparisons; the tables rows should come from oracle positions", checked)
	}
}
