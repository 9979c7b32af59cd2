package lichess_test

import (
	"encoding/json"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/chessprobe"
	"github.com/tbfs/tbfs/format/chesstb"
	"github.com/tbfs/tbfs/internal/testkit/chesstboracle"
	"github.com/tbfs/tbfs/internal/testkit/syzygyoracle"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/lichess"
	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/mmap"
)

// tablesServer serves the tables of dirs, chesstb and Syzygy found by
// name in each (chessprobe.Open, as tbprobe serve does).
func tablesServer(t testing.TB, dirs ...string) string {
	t.Helper()
	_, base := servedTables(t, dirs...)
	return base
}

// servedTables is tablesServer that also returns the tables it serves.
func servedTables(t testing.TB, dirs ...string) (*chessprobe.Tables, string) {
	t.Helper()
	var srcs []source.Source
	for _, d := range dirs {
		src, err := mmap.New(d)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { src.Close() })
		srcs = append(srcs, src)
	}
	// Under the race detector the whole-file checksums every table is
	// gated on take most of the run; the sweeps check the values anyway.
	tb, err := chessprobe.Open(chesstb.Options{BlockCacheBytes: 128 << 20, SkipChecksums: raceEnabled}, srcs...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	srv := httptest.NewServer(lichess.NewLimited(tb.Prober, nil, unhurried(t, lichess.Limits{})).Handler())
	t.Cleanup(srv.Close)
	return tb, srv.URL
}

// lilaName is lichess's name of a class under the 50-move rule, -2..2.
var lilaName = map[int]string{2: "win", 1: "cursed-win", 0: "draw", -1: "blessed-loss", -2: "loss"}

// syzygyCategory is the category lila-tablebase gives a move's child, from
// Fathom's per-move values at the root clock (which price the same sum as
// lila's AmbiguousWdl::from_dtz_and_halfmoves: the child's |DTZ| plus the
// clock the move leaves is Fathom's move dtz plus the root clock), for the
// child's side. Where that sum is exactly 100 the value may be rounded
// (n meaning n or n+1): lila says syzygy-win or syzygy-loss when the table
// rounds, and its inference from the root's own category may settle that
// to either neighbour, so all three are accepted there.
func syzygyCategory(m syzygyoracle.Move, clock int) []string {
	want := []string{lilaName[-m.WDL]}
	if m.WDL != 0 && m.DTZ+clock == 100 && clock < 100 {
		if m.WDL > 0 {
			want = append(want, "syzygy-loss", "blessed-loss")
		} else {
			want = append(want, "syzygy-win", "cursed-win")
		}
	}
	return want
}

func sign(v int) int {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}

// checkStandardRow compares one /standard answer with a Fathom row: the
// root's dtz (Syzygy's DTZ50″ as it stands, lila's dtz) and category, each
// move's category and, for a move that does not zero the clock, its
// child's dtz (Fathom's move dtz less the move's own ply), the order by
// lila's category order, and formats naming the tables that answered.
func checkStandardRow(t *testing.T, base string, r *syzygyoracle.Row, formats []string) {
	t.Helper()
	a := standard(t, base, r.FEN)
	where := r.FEN
	clock := clockOf(r.FEN)
	// Where chesstb answers the root too, its category is chesstb's exact
	// one, which lila's rule for a root's clock of 99 or more does not give
	// (chesstb's own tests check it against the chesstb oracle).
	rootChecked := !slices.Contains(formats, "chesstb") || clock < 99
	switch {
	case r.Checkmate():
		if a["checkmate"] != true || a["dtz"] != -1.0 || a["category"] != "loss" {
			t.Errorf("%s: checkmated root: checkmate %v dtz %v category %v", where, a["checkmate"], a["dtz"], a["category"])
		}
	case r.Terminal():
		if a["stalemate"] != true || a["category"] != "draw" {
			t.Errorf("%s: stalemate root: %v %v", where, a["stalemate"], a["category"])
		}
	default:
		d := float64(sign(r.WDL) * r.DTZ)
		if a["dtz"] != d {
			t.Errorf("%s: root dtz %v, Fathom's %v", where, a["dtz"], d)
		}
		if p := a["precise_dtz"]; p != nil && p != d {
			t.Errorf("%s: precise_dtz %v is not the dtz %v", where, p, d)
		}
		if !equalAny(a["formats"], formats) {
			t.Errorf("%s: formats %v, want %v", where, a["formats"], formats)
		}
	}
	moves := movesOf(a)
	if len(moves) != len(r.Moves) {
		t.Errorf("%s: %d moves, Fathom %d", where, len(moves), len(r.Moves))
		return
	}
	byUCI := map[string]syzygyoracle.Move{}
	best := -3
	for _, m := range r.Moves {
		byUCI[m.UCI] = m
		best = max(best, m.WDL)
	}
	if !r.Terminal() && rootChecked {
		if cat, _ := a["category"].(string); !slices.Contains(rootCategories(best, r), cat) {
			t.Errorf("%s: root category %v, Fathom's best move class %d", where, a["category"], best)
		}
	}
	for i, mv := range moves {
		uci, _ := mv["uci"].(string)
		m, ok := byUCI[uci]
		if !ok {
			t.Errorf("%s: move %s not in Fathom's list", where, uci)
			continue
		}
		if cat, _ := mv["category"].(string); !slices.Contains(syzygyCategory(m, clock), cat) {
			t.Errorf("%s %s: category %v, want one of %v (Fathom: %d:%d)", where, uci, cat, syzygyCategory(m, clock), m.WDL, m.DTZ)
		}
		if i > 0 && lilaOrder[mv["category"].(string)] < lilaOrder[moves[i-1]["category"].(string)] {
			t.Errorf("%s: move %d %s (%v) sorts after %v", where, i, uci, mv["category"], moves[i-1]["category"])
		}
		if mv["checkmate"] == true {
			if mv["dtz"] != -1.0 {
				t.Errorf("%s %s: a mate leaves dtz %v, want -1", where, uci, mv["dtz"])
			}
			continue
		}
		if mv["zeroing"] == true || m.WDL == 0 {
			continue
		}
		if want := float64(-sign(m.WDL) * (m.DTZ - 1)); mv["dtz"] != want {
			t.Errorf("%s %s: child dtz %v, Fathom's move dtz %d less the move's ply gives %v", where, uci, mv["dtz"], m.DTZ, want)
		}
	}
}

// rootCategories are the categories lila gives a root whose best moves
// are of class best at the clock (lila: the root takes its first move's
// category, negated; which of the best moves sorts first depends on the
// boundary's alternatives, see syzygyCategory).
func rootCategories(best int, r *syzygyoracle.Row) []string {
	var out []string
	for _, m := range r.Moves {
		if m.WDL != best {
			continue
		}
		for _, c := range syzygyCategory(m, clockOf(r.FEN)) {
			out = append(out, negated[c])
		}
	}
	return out
}

var negated = map[string]string{"win": "loss", "loss": "win", "cursed-win": "blessed-loss", "blessed-loss": "cursed-win",
	"syzygy-win": "syzygy-loss", "syzygy-loss": "syzygy-win", "draw": "draw"}

func clockOf(fen string) int {
	f := strings.Fields(fen)
	n := 0
	for _, c := range f[4] {
		n = 10*n + int(c-'0')
	}
	return n
}

func equalAny(v any, want []string) bool {
	list, _ := v.([]any)
	if len(list) != len(want) {
		return false
	}
	for i := range list {
		if list[i] != want[i] {
			return false
		}
	}
	return true
}

// TestStandardSyzygyFixtures sweeps the committed Syzygy fixtures' Fathom
// rows through /standard over those tables alone (a fresh clone runs it).
func TestStandardSyzygyFixtures(t *testing.T) {
	dir := testenv.Testdata(t, "syzygy")
	base := tablesServer(t, dir)
	rows := syzygyoracle.Read(t, dir+"/probe.tsv")
	rows = chesstboracle.Sample(rows, 60, raceEnabled || testing.Short())
	for i := range rows {
		checkStandardRow(t, base, &rows[i], []string{"syzygy"})
	}
	t.Logf("%d rows", len(rows))
}

// TestStandardSyzygyOracle sweeps the whole Fathom oracle through /standard
// over the shared Syzygy tables alone, and over them beside chesstb's
// shipped tables of the same materials (formats [chesstb syzygy]).
func TestStandardSyzygyOracle(t *testing.T) {
	rows := syzygyoracle.Read(t, syzygyoracle.Path(t))
	rows = chesstboracle.Sample(rows, 100, raceEnabled || testing.Short())
	for _, tc := range []struct {
		name    string
		chesstb bool // chesstb's shipped tables beside the Syzygy ones
		formats []string
	}{
		{"syzygy", false, []string{"syzygy"}},
		{"both", true, []string{"chesstb", "syzygy"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Asked here, so a folder with the Syzygy part alone still
			// runs the first case.
			dirs := []string{syzygyoracle.Tables(t)}
			if tc.chesstb {
				dirs = append([]string{testenv.Shared(t, "chesstb", "shipped")}, dirs...)
			}
			base := tablesServer(t, dirs...)
			rows := rows
			if tc.chesstb {
				// chessprobe's TestOracleBothFormats sweeps every row
				// through both formats; here a third checks the API on top.
				rows = chesstboracle.Sample(rows, len(rows)/3, true)
			}
			for i := range rows {
				checkStandardRow(t, base, &rows[i], tc.formats)
				if t.Failed() && i > 50 {
					t.Fatalf("stopping after row %d", i)
				}
			}
			t.Logf("%d rows", len(rows))
		})
	}
}

// TestLilaTestPySyzygy runs lila-tablebase's test.py assertions (lilaCases)
// against a server over Syzygy tables alone, the tables lila serves: the
// cases whose material the shared set holds run (KBNvK's syzygy_win, the
// KQvK mates), the others skip.
func TestLilaTestPySyzygy(t *testing.T) {
	base := tablesServer(t, syzygyoracle.Tables(t))
	if ran := runLilaCases(t, base); ran < 4 {
		t.Errorf("only %d cases ran", ran)
	}
}

// TestMainlineSyzygy follows /standard/mainline over the Syzygy fixtures
// alone from the Fathom rows at clock 0 (lila's README: the line claims
// the 50-move draw as soon as it can): a row Fathom calls a win or loss
// (wdl ±2) ends in checkmate by the winner, a cursed win or blessed loss
// (±1) with no winner, a draw with no line; every step's dtz is nonzero.
func TestMainlineSyzygy(t *testing.T) {
	dir := testenv.Testdata(t, "syzygy")
	base := tablesServer(t, dir)
	var rows []syzygyoracle.Row
	for _, r := range syzygyoracle.Read(t, dir+"/probe.tsv") {
		if clockOf(r.FEN) == 0 && !r.Terminal() {
			rows = append(rows, r)
		}
	}
	rows = chesstboracle.Sample(rows, 60, true)
	for _, r := range rows {
		code, _, b := fetch(t, "GET", base+"/standard/mainline?fen="+strings.ReplaceAll(r.FEN, " ", "_"), nil, "")
		var ml struct {
			Mainline []struct {
				UCI string
				DTZ float64
			}
			Winner *string
			DTZ    float64
		}
		if err := json.Unmarshal(b, &ml); code != 200 || err != nil {
			t.Errorf("%s: status %d %v: %s", r.FEN, code, err, b)
			continue
		}
		if ml.DTZ != float64(r.SignedDTZ()) {
			t.Errorf("%s: mainline dtz %v, Fathom's %d", r.FEN, ml.DTZ, r.SignedDTZ())
		}
		white := strings.Fields(r.FEN)[1] == "w"
		switch r.WDL {
		case 0:
			if len(ml.Mainline) != 0 || ml.Winner != nil {
				t.Errorf("%s (draw): line of %d, winner %v", r.FEN, len(ml.Mainline), ml.Winner)
			}
		case 2, -2:
			want := "w"
			if (r.WDL > 0) != white {
				want = "b"
			}
			if ml.Winner == nil || *ml.Winner != want {
				t.Errorf("%s (wdl %d): winner %v, want %s after %d plies", r.FEN, r.WDL, ml.Winner, want, len(ml.Mainline))
			}
		default:
			if ml.Winner != nil {
				t.Errorf("%s (wdl %d): winner %v; the 50-move rule draws it", r.FEN, r.WDL, *ml.Winner)
			}
		}
		for i, s := range ml.Mainline {
			if s.DTZ == 0 {
				t.Errorf("%s: ply %d %s has dtz 0 inside a decisive line", r.FEN, i, s.UCI)
			}
		}
	}
	t.Logf("%d mainlines followed", len(rows))
}
