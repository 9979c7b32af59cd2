package lichess_test

import (
	"encoding/json"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fxamacker/cbor/v2"
	"github.com/tbfs/tbfs/internal/testkit/chesstboracle"
)

// lilaCheck is one assertion of lila-tablebase's test.py on a /standard
// answer: the root (move -1) or moves[move] has one of the categories,
// that SAN, that dtz, when given.
type lilaCheck struct {
	move       int
	san        string
	categories []string
	dtz        []float64
}

// lilaCases are lila-tablebase's test.py assertions (github.com/
// lichess-org/lila-tablebase, test.py), written as data, plus the same
// six-piece-mate assertions on a KQK mate in one, where lila's
// src/response.rs gives the same categories (a checkmate from a clock of
// 100 or more is a blessed loss, its root a cursed win).
var lilaCases = []struct {
	name, fen string
	cbor      bool
	checks    []lilaCheck
}{
	{"six_piece_mate/99", "8/4K2k/5Q1P/6P1/8/8/q7/8 w - - 99 148", false, []lilaCheck{{-1, "", []string{"win"}, nil}, {0, "Qg7#", []string{"loss"}, nil}}},
	{"six_piece_mate/100", "8/4K2k/5Q1P/6P1/8/8/q7/8 w - - 100 148", false, []lilaCheck{{-1, "", []string{"cursed-win"}, nil}, {0, "Qg7#", []string{"blessed-loss"}, nil}}},
	{"six_piece_mate/101", "8/4K2k/5Q1P/6P1/8/8/q7/8 w - - 101 148", false, []lilaCheck{{-1, "", []string{"cursed-win"}, nil}, {0, "Qg7#", []string{"blessed-loss"}, nil}}},
	{"eight_piece_mate", "7k/7p/1R6/6P1/P7/5n2/4r3/7K b - - 0 41", false, []lilaCheck{{-1, "", []string{"win"}, nil}, {0, "Rh2#", []string{"loss"}, nil}, {2, "", []string{"unknown"}, nil}}},
	{"syzygy_win/97", "K7/2k5/3n4/8/2b5/8/8/8 w - - 97 128", false, []lilaCheck{{-1, "", []string{"syzygy-loss", "blessed-loss"}, nil}, {0, "Ka7", []string{"syzygy-win", "cursed-win"}, []float64{2, 3}}}},
	{"syzygy_win/99", "2n5/K1k5/8/8/2b5/8/8/8 w - - 99 129", false, []lilaCheck{{-1, "", []string{"blessed-loss"}, nil}, {0, "Ka8", []string{"cursed-win"}, []float64{1}}}},
	{"blessed_loss", "4K1k1/1N1P4/8/8/8/1q6/8/8 w - - 0 1", false, []lilaCheck{{-1, "", []string{"blessed-loss"}, nil}, {0, "d8=N", []string{"cursed-win"}, nil}, {1, "Na5", []string{"win"}, nil}}},
	{"unknown", "4K1k1/1N1P4/8/8/8/1q6/5PPP/8 w - - 0 1", false, []lilaCheck{{-1, "", []string{"unknown"}, nil}, {0, "", []string{"unknown"}, nil}}},
	{"castling/KQ", "4k3/5q2/8/8/8/8/8/R3K2R w KQ - 0 1", false, []lilaCheck{{-1, "", []string{"unknown"}, nil}, {0, "", []string{"unknown"}, nil}, {19, "", []string{"draw"}, nil}}},
	{"castling/K", "4k2q/5q2/8/8/8/8/8/R3K2R w K - 0 1", false, []lilaCheck{{-1, "", []string{"win"}, nil}, {0, "Rxh8+", []string{"loss"}, nil}, {1, "", []string{"unknown"}, nil}, {11, "", []string{"win"}, nil}}},
	{"barely_losing/0", "8/6B1/6B1/8/2K5/3nk3/8/8 b - - 0 1", false, []lilaCheck{{-1, "", []string{"loss"}, nil}, {0, "Nf4", []string{"win"}, []float64{99}}}},
	{"barely_losing/1", "8/6B1/6B1/8/2K2n2/4k3/8/8 w - - 1 2", false, []lilaCheck{{-1, "", []string{"syzygy-win", "win"}, nil}, {0, "", []string{"syzygy-loss", "loss"}, []float64{-98}}}},
	{"cbor_six_piece_mate", "8/4K2k/5Q1P/6P1/8/8/q7/8 w - - 99 148", true, []lilaCheck{{-1, "", []string{"win"}, nil}, {0, "Qg7#", []string{"loss"}, nil}}},

	// The six-piece-mate assertions on our own material (KQK, mate in one).
	{"kqk_mate/99", "k7/8/1K6/8/8/8/8/2Q5 w - - 99 148", false, []lilaCheck{{-1, "", []string{"win"}, nil}, {0, "Qc8#", []string{"loss"}, nil}}},
	{"kqk_mate/100", "k7/8/1K6/8/8/8/8/2Q5 w - - 100 148", false, []lilaCheck{{-1, "", []string{"cursed-win"}, nil}, {0, "Qc8#", []string{"blessed-loss"}, nil}}},
	{"kqk_mate/101", "k7/8/1K6/8/8/8/8/2Q5 w - - 101 148", true, []lilaCheck{{-1, "", []string{"cursed-win"}, nil}, {0, "Qc8#", []string{"blessed-loss"}, nil}}},
}

// TestLilaTestPy runs lila-tablebase's test.py assertions against our
// server. A case runs when the tables hold its material: the root and
// every move have an answer (no error, no unknown category). The others
// are skipped, naming why; the counts are logged.
func TestLilaTestPy(t *testing.T) {
	base, _ := sharedServer(t)
	if ran := runLilaCases(t, base); ran == 0 {
		t.Error("no case ran")
	}
}

// runLilaCases runs every lilaCases row whose material the server at base
// holds, and returns how many ran.
func runLilaCases(t *testing.T, base string) int {
	ran, passed := 0, 0
	for _, tc := range lilaCases {
		t.Run(tc.name, func(t *testing.T) {
			a := standard(t, base, tc.fen)
			held := a["error"] == nil
			for _, m := range movesOf(a) {
				held = held && m["category"] != "unknown"
			}
			if !held {
				t.Skipf("the tables do not hold this material (%v)", a["error"])
			}
			ran++
			defer func() {
				if !t.Failed() {
					passed++
				}
			}()
			checkLila(t, base, a, tc.fen, tc.cbor, tc.checks)
		})
	}
	t.Logf("lila test.py cases: %d of %d run (material held), %d passed", ran, len(lilaCases), passed)
	return ran
}

// checkLila checks one answer a of fen against lila's test.py assertions,
// re-fetching it as CBOR first when asCBOR.
func checkLila(t *testing.T, base string, a answer, fen string, asCBOR bool, checks []lilaCheck) {
	t.Helper()
	if asCBOR {
		code, h, b := fetch(t, "GET", base+"/standard?fen="+url.QueryEscape(fen), map[string]string{"Accept": "application/cbor"}, "")
		var v any
		if code != 200 || h.Get("Content-Type") != "application/cbor" || cbor.Unmarshal(b, &v) != nil {
			t.Fatalf("CBOR: status %d, %q", code, h.Get("Content-Type"))
		}
		a = normalise(v).(answer)
	}
	moves := movesOf(a)
	for _, c := range checks {
		obj, where := a, "root"
		if c.move >= 0 {
			if c.move >= len(moves) {
				t.Fatalf("moves[%d] asked, %d moves", c.move, len(moves))
			}
			obj, where = moves[c.move], "moves["+string(rune('0'+c.move%10))+"]"
		}
		if c.san != "" && obj["san"] != c.san {
			t.Errorf("%s san %v, want %s", where, obj["san"], c.san)
		}
		if cat, _ := obj["category"].(string); !slices.Contains(c.categories, cat) {
			t.Errorf("%s category %v, want one of %v", where, obj["category"], c.categories)
		}
		if d, _ := obj["dtz"].(float64); c.dtz != nil && !slices.Contains(c.dtz, d) {
			t.Errorf("%s dtz %v, want one of %v", where, obj["dtz"], c.dtz)
		}
	}
}

// TestMainline checks /standard/mainline as lila-tablebase defines it (its
// README: "Claims draw by 50-move rule as soon as possible and ends the
// mainline"; winner "w", "b" or null): a root the oracle calls a win at
// its clock (DTC/DTM50 WIN) gets a line ending in checkmate by that side;
// a win the clock draws (cursed, or a clocked verdict of DRAW) gets a line
// that stops when the clock reaches 100, with no winner; a draw gets no
// line. Each step's dtz alternates sign as the sides alternate.
func TestMainline(t *testing.T) {
	base, oracle := sharedServer(t)
	rows := chesstboracle.Read(t, filepath.Join(oracle, "probe.tsv"))
	var picked []chesstboracle.Row
	for _, r := range rows {
		// Clock-0 and clock-80 rows: a fresh count, and one running.
		if f := strings.Fields(r.FEN); f[4] == "80" || f[4] == "0" {
			picked = append(picked, r)
		}
	}
	picked = chesstboracle.Sample(picked, 60, true)
	if raceEnabled || testing.Short() {
		picked = chesstboracle.Sample(picked, 10, true)
	}
	picked = append(picked, chesstboracle.Read(t, filepath.Join(oracle, "seed_cases.tsv"))...)
	for _, r := range picked {
		code, _, b := fetch(t, "GET", base+"/standard/mainline?fen="+url.QueryEscape(r.FEN), nil, "")
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
		cat := r.WantCategory(t)
		white := strings.Fields(r.FEN)[1] == "w"
		switch cat {
		case "draw":
			if len(ml.Mainline) != 0 || ml.Winner != nil {
				t.Errorf("%s (draw): line of %d, winner %v", r.FEN, len(ml.Mainline), ml.Winner)
			}
		case "win", "loss":
			want := "w"
			if (cat == "win") != white {
				want = "b"
			}
			if ml.Winner == nil || *ml.Winner != want {
				t.Errorf("%s (%s): winner %v, want %s after %d plies", r.FEN, cat, ml.Winner, want, len(ml.Mainline))
			}
		default: // cursed-win, blessed-loss
			if ml.Winner != nil {
				t.Errorf("%s (%s): winner %v; the clock draws it", r.FEN, cat, *ml.Winner)
			}
		}
		for i, s := range ml.Mainline {
			if s.DTZ == 0 {
				t.Errorf("%s: ply %d %s has dtz 0 inside a decisive line", r.FEN, i, s.UCI)
			}
		}
	}
	t.Logf("%d mainlines checked", len(picked))
}

// TestMainlineIssueExample is the issue's KNNKP line (3N4/3p4/3K4/8/8/N7/
// 8/6k1 w, where main's line went 133 plies without a zeroing move): the
// line must agree with /standard's verdict on the root, ending in mate by
// White when the root is a win, and never run 100 plies without a capture
// or pawn move (lila claims the draw then).
func TestMainlineIssueExample(t *testing.T) {
	base, _ := sharedServer(t)
	const fen = "3N4/3p4/3K4/8/8/N7/8/6k1 w - - 0 1"
	a := standard(t, base, fen)
	code, _, b := fetch(t, "GET", base+"/standard/mainline?fen="+url.QueryEscape(fen), nil, "")
	var ml struct {
		Mainline []struct{ UCI, SAN string }
		Winner   *string
	}
	if err := json.Unmarshal(b, &ml); code != 200 || err != nil {
		t.Fatalf("status %d %v: %s", code, err, b)
	}
	if a["category"] == "win" && (ml.Winner == nil || *ml.Winner != "w") {
		t.Errorf("root category win, mainline of %d plies ends with winner %v", len(ml.Mainline), ml.Winner)
	}
	quiet := 0
	for _, s := range ml.Mainline {
		// SAN marks a capture with x; a pawn move starts with a file letter.
		if strings.Contains(s.SAN, "x") || s.SAN[0] >= 'a' && s.SAN[0] <= 'h' {
			quiet = 0
			continue
		}
		if quiet++; quiet > 100 {
			t.Fatalf("more than 100 plies without a zeroing move, at %s", s.UCI)
		}
	}
}
