package dtzproof_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/internal/testkit/chesstboracle"
	"github.com/tbfs/tbfs/internal/testkit/dtzproof"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// proofRows are positions of the chesstb oracle (probe.tsv) with short
// distances, of pawnless and pawn materials, both sides to move, that the
// prover settles in well under a second each.
var proofRows = []string{
	"8/8/8/2Q5/8/2K5/k7/8 w - -",
	"1k6/8/8/8/8/2Q2K2/2R5/8 w - -",
	"8/8/2Q5/8/8/5R2/8/5K1k b - -",
	"7k/1R6/8/8/4K3/5Q2/8/8 w - -",
	"8/Q7/P7/8/8/3K4/8/2k5 w - -",
	"8/3K4/8/4k3/8/5R2/8/R7 w - -",
	"8/3P2K1/R7/8/8/8/8/1k6 w - -",
	"8/1R6/6P1/7K/8/8/8/k7 b - -",
	"8/3kB3/8/3K4/1Q6/8/8/8 w - -",
	"8/8/8/8/K5Q1/8/k7/6q1 w - -",
	"k7/7R/8/8/8/K7/8/3Q4 b - -",
	"7k/4K3/8/8/3n4/2Q5/8/8 b - -",
	"3Q4/8/8/8/2K5/7b/8/k7 w - -",
	"8/P7/K7/8/8/4k3/8/1Q6 b - -",
	"8/1k6/8/2K5/4Q3/8/3P4/8 b - -",
}

// TestDTZMatchesOracle proves the DTZ of proofRows and compares it with
// probe_fen's (arbiter: the chesstb oracle, whose DTZ is exact outside the
// cursed band).
func TestDTZMatchesOracle(t *testing.T) {
	want := map[string]int{}
	for _, r := range chesstboracle.Read(t, testenv.Shared(t, "chesstb", "oracle", "probe.tsv")) {
		key := strings.Join(strings.Fields(r.FEN)[:4], " ")
		if _, ok := want[key]; !ok {
			_, dtz, _ := r.Want(t)
			want[key] = *dtz
		}
	}
	ctx := context.Background()
	for _, fen := range proofRows {
		w, ok := want[fen]
		if !ok {
			t.Fatalf("%s is not in the oracle", fen)
		}
		pos, err := chess.ParseFEN(fen)
		if err != nil {
			t.Fatal(err)
		}
		got, err := dtzproof.DTZ(ctx, pos, 4, 8)
		if err != nil || got != w {
			t.Errorf("%s: DTZ %d, %v; the oracle's %d", fen, got, err, w)
		}
		if err := dtzproof.Beyond(ctx, pos, abs(w)-1, 8); err != nil {
			t.Errorf("%s: Beyond(%d) = %v, the oracle's DTZ being %d", fen, abs(w)-1, err, w)
		}
		if err := dtzproof.Beyond(ctx, pos, abs(w), 8); !errors.Is(err, dtzproof.ErrWithin) {
			t.Errorf("%s: Beyond(%d) = %v, want ErrWithin, the oracle's DTZ being %d", fen, abs(w), err, w)
		}
		// A rounded value is the distance or one ply short of it.
		for _, rounded := range []int{w, w - sign(w)} {
			if rounded == 0 {
				continue
			}
			if got, err := dtzproof.Rounded(ctx, pos, rounded, 8); err != nil || got != w {
				t.Errorf("%s: Rounded(%d) = %d, %v; the oracle's DTZ %d", fen, rounded, got, err, w)
			}
		}
	}
}

// TestNoGuess: a drawn position has no DTZ to prove, and where the mate
// proofs a result needs are out of reach the prover says so instead of
// guessing (arbiter: the rules; the oracle's DTZ for the position).
func TestNoGuess(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, fen string
		plies     int
		mate      int
	}{
		// Black takes the queen at once (the oracle's first row: DRAW).
		{"draw", "K7/8/5Q2/5k2/8/8/8/8 b - - 0 1", 3, 4},
		// The oracle's DTZ is 19, past the horizon.
		{"beyond the horizon", "8/8/8/5k2/8/8/1Q6/K7 w - - 0 1", 2, 4},
		// DTZ 1 (the oracle: b5 promotes in time), but the queen's mate
		// after b5 is further than one move.
		{"mate out of reach", "8/8/8/7K/1P6/1k6/8/8 w - - 0 1", 2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pos, err := chess.ParseFEN(tc.fen)
			if err != nil {
				t.Fatal(err)
			}
			if d, err := dtzproof.DTZ(ctx, pos, tc.plies, tc.mate); !errors.Is(err, dtzproof.ErrUnproved) {
				t.Errorf("DTZ = %d, %v; want ErrUnproved", d, err)
			}
		})
	}
	mate, _ := chess.ParseFEN("k7/1Q6/1K6/8/8/8/8/8 b - - 0 1")
	if d, err := dtzproof.DTZ(ctx, mate, 2, 2); d != 0 || err != nil {
		t.Errorf("checkmate: DTZ %d, %v; want 0 (chesstb's convention)", d, err)
	}
}

func sign(n int) int {
	switch {
	case n > 0:
		return 1
	case n < 0:
		return -1
	}
	return 0
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
