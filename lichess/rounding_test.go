package lichess_test

import (
	"context"
	"encoding/json"
	"net/url"
	"testing"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/internal/testkit/dtzproof"
)

// TestRoundedSyzygyBesideChesstb asks for the positions lichess-bot
// aborted on (issue 34: 500 "tables disagree") over both formats. Each
// move's child has a Syzygy DTZ one ply short of the truth (the table
// holds the other side to move and its one-ply search meets tied
// children, one stored in moves). None of the children is in the chesstb
// oracle, so the distance is proved (arbiter: dtzproof from the rules,
// exactly, or for the KBPK child settling Syzygy's rounded value, which
// stands for it or one ply more). The server must answer, with chesstb's
// distance as chesstb_dtz, lila's dtz consistent with it (the distance,
// or one ply short with precise_dtz null), and a mainline that ends in
// mate by the side the distance says wins.
func TestRoundedSyzygyBesideChesstb(t *testing.T) {
	tb, base := bothTables(t)
	ctx := context.Background()
	for _, r := range []struct {
		parent, move string
		exact        bool // dtzproof proves the child's DTZ outright
	}{
		{"k7/2p5/8/1QK5/8/8/8/8 w - - 13 9", "b5c6", true},
		{"2K5/8/5Q2/1Pk5/8/8/8/8 w - - 0 1", "f6f4", true},
		{"2K5/8/5Q2/kP6/8/8/8/8 w - - 0 1", "f6b2", true},
		{"8/K1k1bp2/8/8/8/8/8/8 b - - 0 1", "e7c5", false},
	} {
		t.Run(r.parent, func(t *testing.T) {
			parent, err := chess.ParseFEN(r.parent)
			if err != nil {
				t.Fatal(err)
			}
			m, err := parent.ParseMove(r.move)
			if err != nil {
				t.Fatal(err)
			}
			child := parent.Play(m)
			var want int
			if r.exact {
				want, err = dtzproof.DTZ(ctx, child, 5, 8)
			} else {
				var g int
				var rounded bool
				g, rounded, err = tb.Syzygy.DTZWithRounding(ctx, &child)
				if err == nil && !rounded {
					t.Fatalf("Syzygy's DTZ %d of the child is not flagged rounded: no bound to settle", g)
				}
				if err == nil {
					want, err = dtzproof.Rounded(ctx, child, g, 8)
				}
			}
			if err != nil {
				t.Fatalf("the child's distance: %v", err)
			}

			a := standard(t, base, r.parent) // fails the test on any status but 200
			var mv answer
			for _, x := range movesOf(a) {
				if x["uci"] == r.move {
					mv = x
				}
			}
			if mv == nil {
				t.Fatalf("%s is not among the moves", r.move)
			}
			checkRoundedDTZ(t, "move "+r.move, mv, want)
			checkRoundedDTZ(t, "child", standard(t, base, child.FEN()), want)

			// The child is lost for its side to move: the parent's mover wins.
			winner := "w"
			if parent.SideToMove() == chess.Black {
				winner = "b"
			}
			for _, fen := range []string{r.parent, child.FEN()} {
				code, _, b := fetch(t, "GET", base+"/standard/mainline?fen="+url.QueryEscape(fen), nil, "")
				var ml struct {
					Mainline []struct{ UCI string }
					Winner   *string
					DTZ      float64
				}
				if err := json.Unmarshal(b, &ml); code != 200 || err != nil {
					t.Fatalf("mainline of %s: status %d, %v: %s", fen, code, err, b)
				}
				if ml.Winner == nil || *ml.Winner != winner {
					t.Errorf("mainline of %s: winner %v after %d plies, want %s", fen, ml.Winner, len(ml.Mainline), winner)
				}
				if fen == child.FEN() && ml.DTZ != float64(want) && ml.DTZ != float64(want+1) {
					t.Errorf("mainline of the child: dtz %v, the distance %d (or one ply short, rounded)", ml.DTZ, want)
				}
			}
		})
	}
}

// checkRoundedDTZ holds a position's lila fields to a proved distance
// want of a loss: chesstb_dtz is it, dtz is it or one ply short, and
// precise_dtz is null unless dtz is it.
func checkRoundedDTZ(t *testing.T, where string, p answer, want int) {
	t.Helper()
	w := float64(want)
	if p["chesstb_dtz"] != w {
		t.Errorf("%s: chesstb_dtz %v, the distance %d", where, p["chesstb_dtz"], want)
	}
	switch d := p["dtz"]; {
	case d == w:
		if pd := p["precise_dtz"]; pd != nil && pd != w {
			t.Errorf("%s: precise_dtz %v beside dtz %v", where, pd, d)
		}
	case d == w+1:
		if pd := p["precise_dtz"]; pd != nil {
			t.Errorf("%s: dtz %v is one ply short of %d but precise_dtz is %v", where, d, want, pd)
		}
	default:
		t.Errorf("%s: dtz %v, the distance %d", where, d, want)
	}
	if p["category"] != "loss" {
		t.Errorf("%s: category %v, want loss (a lost side to move, its distance within the clock)", where, p["category"])
	}
}
