package syzygy

import (
	"context"
	"testing"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/internal/testkit/chesstboracle"
	"github.com/tbfs/tbfs/internal/testkit/dtzproof"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// TestDTZRounding checks DTZWithRounding against the values peers publish
// for positions of the shared materials.
func TestDTZRounding(t *testing.T) {
	tb := openDir(t, testenv.Shared(t, "syzygy", "tables"))
	for _, c := range []struct {
		fen     string
		dtz     int
		rounded bool
		arbiter string
	}{
		{"8/8/8/8/B7/N7/K2k4/8 b - - 0 1", -59, true, "shakmaty-syzygy's crate example: Rounded(Dtz(-59))"},
		{"4k3/6KP/8/8/8/8/7p/8 w - - 0 1", 1, false, "lila-tablebase README: dtz 1, precise_dtz 1"},
		{"4k2Q/6K1/8/8/8/8/7p/8 b - - 0 1", -2, false, "lila-tablebase README: after h7h8q dtz -2, precise_dtz -2"},
	} {
		pos := mustFEN(t, c.fen)
		d, r, err := tb.DTZWithRounding(context.Background(), &pos)
		if err != nil || d != c.dtz || r != c.rounded {
			t.Errorf("%s: DTZ %d rounded %v, %v; want %d %v (%s)", c.fen, d, r, err, c.dtz, c.rounded, c.arbiter)
		}
	}
}

// truthful reports whether a DTZ50″ got, flagged rounded or not, is true
// of a position whose exact distance is want (a win or loss outside the
// cursed band, where DTZ50″ is the plain distance): equal, or, when
// rounded, one ply short.
func truthful(want, got int, rounded bool) bool {
	switch {
	case got == want:
		return true
	case !rounded:
		return false
	case want > 0:
		return got == want-1
	}
	return got == want+1
}

// TestDTZRoundingTruthfulProved checks the rounding flag against exact
// distances that dtzproof proves from the rules (an exhaustive search over
// every move, its leaves settled by mate proofs or by the rules): an
// unrounded value must be exact, a rounded one exact or one ply short.
// The rows are lila-tablebase's clients' failing case and its
// neighbourhood: in k7/2p5/2Q5/2K5 b, which the KQvKP table holds only
// with White to move, Black's two king moves both have DTZ 1, Ka7's exact
// (Qxc7) and Kb8's stored in moves (1 standing for 2: Qa6 and Black's
// only move c6 zeroes), so Black's longest line is 3 plies, not 2.
func TestDTZRoundingTruthfulProved(t *testing.T) {
	tb := openDir(t, testenv.Shared(t, "syzygy", "tables"))
	ctx := context.Background()
	for _, fen := range []string{
		"k7/2p5/2Q5/2K5/8/8/8/8 b - - 14 9",
		"1k6/2p5/2Q5/2K5/8/8/8/8 w - - 15 10",
		"8/k1p5/2Q5/2K5/8/8/8/8 w - - 15 10",
		"k7/2p5/8/1QK5/8/8/8/8 w - - 13 9",
		"2K5/8/8/1Pk5/5Q2/8/8/8 b - - 1 1",
		"2K5/8/8/kP6/8/8/1Q6/8 b - - 1 1",
	} {
		pos := mustFEN(t, fen)
		want, err := dtzproof.DTZ(ctx, pos, 5, 8)
		if err != nil {
			t.Fatalf("%s: %v", fen, err)
		}
		got, rounded, err := tb.DTZWithRounding(ctx, &pos)
		if err != nil || !truthful(want, got, rounded) {
			t.Errorf("%s: DTZ %d rounded %v, %v; the proved distance is %d", fen, got, rounded, err, want)
		}
	}
}

// TestDTZRoundingTruthfulOracle checks the rounding flag against chesstb's
// exact DTZ (the chesstb oracle: probe_fen's answers for its positions and
// their children) wherever the class is a plain win or loss: the Syzygy
// value must be exact unless flagged rounded, and then exact or one ply
// short.
func TestDTZRoundingTruthfulOracle(t *testing.T) {
	tb := openDir(t, testenv.Shared(t, "syzygy", "tables"))
	dir := testenv.Shared(t, "chesstb", "oracle")
	type exact struct {
		where string
		pos   chess.Position
		dtz   int
	}
	var rows []exact
	seen := map[string]bool{}
	add := func(r chesstboracle.Row, pos chess.Position) {
		if r.WDL != "WIN" && r.WDL != "LOSE" || pos.IsCheckmate() {
			return
		}
		if key := pos.FEN(); !seen[key] {
			seen[key] = true
			_, dtz, _ := r.Want(t)
			rows = append(rows, exact{r.Where, pos, *dtz})
		}
	}
	for _, r := range chesstboracle.Read(t, dir+"/probe.tsv") {
		add(r, mustFEN(t, r.FEN))
	}
	for _, r := range chesstboracle.Read(t, dir+"/children.tsv") {
		parent := mustFEN(t, r.FEN)
		m, err := parent.ParseMove(r.Move)
		if err != nil {
			t.Fatalf("%s: %v", r.Where, err)
		}
		add(r, parent.Play(m))
	}
	rows = chesstboracle.Sample(rows, 400, raceEnabled || testing.Short())
	ctx := context.Background()
	bad, rounded, short := 0, 0, 0
	for _, r := range rows {
		got, rnd, err := tb.DTZWithRounding(ctx, &r.pos)
		if err != nil || !truthful(r.dtz, got, rnd) {
			bad++
			if bad <= 20 {
				t.Errorf("%s %s: DTZ %d rounded %v, %v; chesstb's exact DTZ %d", r.where, r.pos.FEN(), got, rnd, err, r.dtz)
			}
		}
		if rnd {
			rounded++
			if got != r.dtz {
				short++
			}
		}
	}
	t.Logf("%d positions: %d flagged rounded, %d of them one ply short", len(rows), rounded, short)
}
