package chessprobe_test

import (
	"context"
	"testing"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/chessprobe"
	"github.com/tbfs/tbfs/format/chesstb"
	"github.com/tbfs/tbfs/internal/testkit/dtzproof"
	"github.com/tbfs/tbfs/internal/testkit/syzygyoracle"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// truthful reports whether a Syzygy DTZ50″ got of a plain win or loss is
// true of a position whose exact distance is want: equal, or one ply short
// where the value may be rounded.
func truthful(want, got int, precise bool) bool {
	return got == want || !precise && got == want-sign(want)
}

// roundedRows are positions where the Syzygy DTZ table holds only the
// other side to move and the one-ply search meets children tied at the
// loser's longest value, one exact and one stored in moves; each move
// leads there from a position lichess-bot played (issue 34's FENs).
var roundedRows = []struct {
	parent, move string
	// proved says how the exact DTZ is known (none of these positions is
	// in the chesstb oracle): "exact" when dtzproof proves it outright,
	// "bound" when it proves the distance longer than Syzygy's value and
	// Syzygy's rounding bounds it from above.
	proved string
}{
	{"k7/2p5/8/1QK5/8/8/8/8 w - - 13 9", "b5c6", "exact"},
	{"2K5/8/5Q2/1Pk5/8/8/8/8 w - - 0 1", "f6f4", "exact"},
	{"2K5/8/5Q2/kP6/8/8/8/8 w - - 0 1", "f6b2", "exact"},
	// The KPK mate after Ba7 Kxa7 is too long to prove here; after Ka8,
	// both pawn pushes stalemate White, so Black needs more than one move.
	{"8/K1k1bp2/8/8/8/8/8/8 b - - 0 1", "e7c5", "bound"},
}

// provedDTZ is the exact DTZ of pos by the row's method (see roundedRows),
// syz being the Syzygy tables' own answer for the bound.
func provedDTZ(t *testing.T, pos chess.Position, method string, syz *chessprobe.SyzygyAnswer) int {
	t.Helper()
	ctx := context.Background()
	switch method {
	case "exact":
		d, err := dtzproof.DTZ(ctx, pos, 5, 8)
		if err != nil {
			t.Fatalf("%s: %v", pos.FEN(), err)
		}
		return d
	case "bound":
		// Syzygy's value g stands for g or g+1 plies; the proof decides.
		if syz == nil || !syz.HasDTZ || syz.Precise {
			t.Fatalf("%s: Syzygy gives no rounded DTZ to bound the distance (%+v)", pos.FEN(), syz)
		}
		d, err := dtzproof.Rounded(ctx, pos, syz.DTZ, 8)
		if err != nil {
			t.Fatalf("%s: %v", pos.FEN(), err)
		}
		return d
	}
	t.Fatalf("unknown method %q", method)
	return 0
}

// TestRoundedTieAgrees: in these positions chesstb's DTZ is the exact
// distance (arbiter: dtzproof, see roundedRows) and Syzygy's, from its
// one-ply search, one ply short and flagged rounded. Both formats
// together answer with chesstb's distance, the Syzygy value as it stands;
// Syzygy alone gives its value flagged rounded and no plain DTZ; the
// parent's ranking, through both, carries the same child.
func TestRoundedTieAgrees(t *testing.T) {
	both := openTables(t, testenv.Shared(t, "chesstb", "shipped"), syzygyoracle.Tables(t))
	syzOnly := openTables(t, syzygyoracle.Tables(t))
	ctx := context.Background()
	for _, r := range roundedRows {
		t.Run(r.parent, func(t *testing.T) {
			parent := mustFEN(t, r.parent)
			m, err := parent.ParseMove(r.move)
			if err != nil {
				t.Fatal(err)
			}
			child := parent.Play(m)
			alone, err := syzOnly.Probe(ctx, &child)
			if err != nil {
				t.Fatalf("Syzygy alone: %v", err)
			}
			want := provedDTZ(t, child, r.proved, alone.Syzygy)

			s := alone.Syzygy
			if !truthful(want, s.DTZ, s.Precise) || s.Precise {
				t.Errorf("Syzygy alone: DTZ %d precise %v; the distance is %d, which the table's one-ply search can only round", s.DTZ, s.Precise, want)
			}
			if alone.HasDTZ && alone.DTZ != want {
				t.Errorf("Syzygy alone: plain DTZ %d, the distance is %d", alone.DTZ, want)
			}

			res, err := both.Probe(ctx, &child)
			if err != nil {
				t.Fatalf("both formats: %v", err)
			}
			if res.Formats != chessprobe.Chesstb|chessprobe.Syzygy || !res.HasDTZ || res.DTZ != want {
				t.Errorf("both formats: formats %s, DTZ %d (has %v); want both, %d", res.Formats, res.DTZ, res.HasDTZ, want)
			}
			if res.Syzygy == nil || res.Syzygy.DTZ != s.DTZ || res.Syzygy.Precise != s.Precise {
				t.Errorf("both formats: Syzygy answer %+v, alone %+v", res.Syzygy, s)
			}

			moves, err := both.RankMoves(ctx, &parent, moveRanking)
			if err != nil {
				t.Fatalf("RankMoves of the parent: %v", err)
			}
			found := false
			for _, rm := range moves {
				if rm.Move == m {
					found = true
					if rm.After.DTZ != want || rm.After.Formats != chessprobe.Chesstb|chessprobe.Syzygy {
						t.Errorf("ranked %s: child DTZ %d from %s, want %d from both", r.move, rm.After.DTZ, rm.After.Formats, want)
					}
				}
			}
			if !found {
				t.Errorf("%s is not among the parent's ranked moves", r.move)
			}
		})
	}
}

// TestRoundedTieDisagreement: the same Syzygy value called precise would
// contradict chesstb's exact distance, and that is still ErrDisagree
// (arbiter: the first row's proved distance, -3, against a precise -2).
func TestRoundedTieDisagreement(t *testing.T) {
	ctb := chesstb.Result{Material: "KQKP", WDL: -2, HasWDL: true, DTZ: -3, HasDTZ: true}
	if err := chessprobe.Agree(&ctb, &chessprobe.SyzygyAnswer{WDL: -2, DTZ: -2, HasDTZ: true}); err != nil {
		t.Errorf("rounded -2 beside -3: %v", err)
	}
	for _, s := range []chessprobe.SyzygyAnswer{
		{WDL: -2, DTZ: -2, HasDTZ: true, Precise: true},
		{WDL: -2, DTZ: -4, HasDTZ: true},
		{WDL: -2, DTZ: -1, HasDTZ: true},
	} {
		if err := chessprobe.Agree(&ctb, &s); err == nil {
			t.Errorf("%+v beside -3: agreed", s)
		}
	}
}
