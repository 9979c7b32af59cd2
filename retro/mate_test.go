package retro

import (
	"context"
	"testing"

	"github.com/tbfs/tbfs/internal/testkit/chesstboracle"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// TestProveMateReferee checks the cases the referee gives, plus
// cases decided by the rules alone.
func TestProveMateReferee(t *testing.T) {
	tests := []struct {
		name    string
		fen     string
		n       int
		rule50  bool
		kind    MateKind
		moves   int
		arbiter string
	}{
		{"mated in 3", "8/N5k1/3Q4/7p/3R4/8/2P2K1P/8 b - - 0 38", 3, true, Mated, 3, "referee: Black is mated in 3 whatever it plays"},
		{"not mated in 2", "8/N5k1/3Q4/7p/3R4/8/2P2K1P/8 b - - 0 38", 2, true, NoMate, 0, "referee: and not in 2"},
		{"rule50 draw", "2k5/8/3R2K1/8/8/8/8/8 w - - 88 1", 7, true, NoMate, 0, "referee: no mate within the 12 plies the clock leaves (seed_cases.tsv: dtm50 DRAW)"},
		{"no rule50 mate", "2k5/8/3R2K1/8/8/8/8/8 w - - 88 1", 8, false, Mates, 8, "referee: a mate exists without the rule (seed_cases.tsv: dtm 15 plies)"},
		{"back-rank mate in 1", "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", 2, true, Mates, 1, "rules: Ra8 is checkmate"},
		{"fool's mate, mate in 1", "rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq - 0 2", 1, true, Mates, 1, "rules: Qh4 is checkmate"},
		{"fool's mate, mated", "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3", 2, true, Mated, 0, "rules: checkmated"},
		{"stalemate", "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", 3, true, NoMate, 0, "rules: stalemate, no move at all"},
		{"mate in 1 at clock 99", "1Q4QK/8/8/8/7k/8/8/8 w - - 99 1", 1, true, Mates, 1, "probe.tsv dtm50 WIN/1 at clock 99"},
		{"clock 100 is a draw", "1Q4QK/8/8/8/7k/8/8/8 w - - 100 1", 1, true, NoMate, 0, "probe.tsv dtm50 DRAW/0 at clock 100"},
		{"clock 100 ignored", "1Q4QK/8/8/8/7k/8/8/8 w - - 100 1", 1, false, Mates, 1, "probe.tsv dtm 1"},
		{"bound zero", "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", 0, true, NoMate, 0, "rules: mate in 1 is beyond a bound of 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := ProveMate(context.Background(), mustFEN(t, tc.fen), tc.n, tc.rule50)
			if err != nil {
				t.Fatal(err)
			}
			if res.Kind != tc.kind || res.Moves != tc.moves {
				t.Fatalf("ProveMate(%s, %d, rule50=%v) = %v in %d, want %v in %d (%s)", tc.fen, tc.n, tc.rule50, res.Kind, res.Moves, tc.kind, tc.moves, tc.arbiter)
			}
			checkLine(t, tc.fen, res)
		})
	}
}

// checkLine verifies a result's line with the independent library: it mates
// and its length matches the number of moves claimed.
func checkLine(t *testing.T, fen string, res MateResult) {
	t.Helper()
	switch res.Kind {
	case NoMate:
		if len(res.Line) != 0 {
			t.Errorf("no mate, but a line %v", res.Line)
		}
		return
	case Mates:
		if len(res.Line) != 2*res.Moves-1 {
			t.Errorf("mate in %d with a line of %d plies", res.Moves, len(res.Line))
		}
	case Mated:
		if len(res.Line) != 2*res.Moves {
			t.Errorf("mated in %d with a line of %d plies", res.Moves, len(res.Line))
		}
	}
	if !ccLineMates(t, fen, res.Line) {
		t.Errorf("line %v from %s does not end in checkmate (corentings/chess)", res.Line, fen)
	}
}

func TestProveMateCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := ProveMate(ctx, mustFEN(t, "2k5/8/3R2K1/8/8/8/8/8 w - - 0 1"), 8, false)
	if err == nil {
		t.Fatal("cancelled search returned no error")
	}
}

// TestProveMateOracle compares the prover with the reference prober's DTM
// (without the rule) and DTM50 (with it) on every oracle row: with a bound
// of n moves, a row whose distance fits must come out exactly, and any
// other row must come out as no mate.
func TestProveMateOracle(t *testing.T) {
	n := 3
	if testing.Short() || raceEnabled {
		n = 2
	}
	rows := chesstboracle.Read(t, testenv.Shared(t, "chesstb", "oracle", "probe.tsv"))
	seen := map[string]bool{}
	checked := 0
	for i, r := range rows {
		if r.DTM == "" || r.WDL == "" {
			continue // no DTM for this material
		}
		wdl, _, dtm := r.Want(t)
		if raceEnabled && (i/7)%4 != 0 {
			continue // a quarter of the positions (seven clocks each) under -race
		}
		pos := mustFEN(t, r.FEN)
		if pos.Occupied().Count() > 4 {
			continue // keep the exhaustive search small
		}
		// Without the 50-move rule the answer does not depend on the clock.
		k4 := fenFields(r.FEN, 4)
		if !seen[k4] {
			seen[k4] = true
			want := expectFromDTM(wdl, *dtm, n)
			res, err := ProveMate(context.Background(), pos, n, false)
			if err != nil {
				t.Fatal(err)
			}
			if res.Kind != want.Kind || res.Moves != want.Moves {
				t.Errorf("%s: ProveMate(n=%d, no rule50) = %v %d, want %v %d (oracle dtm %s %s)", r.Where, n, res.Kind, res.Moves, want.Kind, want.Moves, r.DTM, r.WDL)
			} else {
				checkLine(t, r.FEN, res)
			}
			checked++
		}
		class, v, ok, err := r.DTM50Class()
		if err != nil || !ok {
			t.Fatalf("%s: bad dtm50 %q: %v", r.Where, r.DTM50, err)
		}
		want := expectFromDTM50(class, v, n)
		res, err := ProveMate(context.Background(), pos, n, true)
		if err != nil {
			t.Fatal(err)
		}
		if res.Kind != want.Kind || res.Moves != want.Moves {
			t.Errorf("%s: ProveMate(n=%d, rule50) = %v %d, want %v %d (oracle dtm50 %s)", r.Where, n, res.Kind, res.Moves, want.Kind, want.Moves, r.DTM50)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no oracle rows checked")
	}
	t.Logf("%d oracle answers checked with bound %d", checked, n)
}

// expectFromDTM turns an oracle WDL class (-2..2) and DTM (plies signed
// by the class as chesstboracle reads it: odd for a win, even for a loss,
// 0 for a draw or a checkmated side) into the prover's answer with bound n.
func expectFromDTM(wdl, dtm, n int) MateResult {
	dtm = max(dtm, -dtm)
	switch {
	case wdl > 0 && (dtm+1)/2 <= n:
		return MateResult{Kind: Mates, Moves: (dtm + 1) / 2}
	case wdl < 0:
		if dtm/2 <= n {
			return MateResult{Kind: Mated, Moves: dtm / 2}
		}
	}
	return MateResult{Kind: NoMate}
}

func expectFromDTM50(class string, v, n int) MateResult {
	switch {
	case class == "WIN" && (v+1)/2 <= n:
		return MateResult{Kind: Mates, Moves: (v + 1) / 2}
	case class == "LOSE" && v/2 <= n:
		return MateResult{Kind: Mated, Moves: v / 2}
	}
	return MateResult{Kind: NoMate}
}
