package player_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/tbfs/tbfs/format/geister"
	"github.com/tbfs/tbfs/geister/gat"
	"github.com/tbfs/tbfs/geister/gat/player"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// tally is one move judged over every colouring of an observation.
type tally struct{ wins, losses int }

// tallies judges every legal move of b in every colouring the board allows,
// from the tables' values of each colouring's moves (tb.Moves, one
// full-information position at a time: the arbiter). ok is false when a
// child lacks a table.
func tallies(t *testing.T, tb *geister.Tablebase, b gat.Board) (map[[2]geister.Square]tally, bool) {
	t.Helper()
	ctx := context.Background()
	obs, err := b.Observation()
	if err != nil {
		t.Fatal(err)
	}
	_, _, cols, err := tb.ColouringValues(ctx, obs)
	if err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	out := map[[2]geister.Square]tally{}
	for _, c := range cols {
		ms, err := tb.Moves(ctx, c.Position)
		if errors.Is(err, geister.ErrNoTable) {
			return nil, false
		}
		if err != nil {
			t.Fatalf("%s: %v", c.Position, err)
		}
		for _, mv := range ms.List {
			k := [2]geister.Square{mv.From, mv.To}
			s := out[k]
			switch mv.Result.Outcome {
			case geister.Win:
				s.wins++
			case geister.Loss:
				s.losses++
			}
			out[k] = s
		}
	}
	return out, true
}

// target is the square a choice moves to on b.
func target(b gat.Board, c player.Choice) [2]geister.Square {
	x, y := int(b[c.Piece].X), int(b[c.Piece].Y)
	d := [4][2]int{{0, -1}, {1, 0}, {0, 1}, {-1, 0}}[c.Dir]
	return [2]geister.Square{geister.SquareAt(x, y), geister.SquareAt(x+d[0], y+d[1])}
}

// When no move is best in every colouring, the confident rule takes a move
// that loses in the fewest colourings and, among those, wins in the most,
// also when every move loses somewhere (the reference's ranking then looks
// at the quickest loss only, and could pick a move that wins nowhere over
// one that wins somewhere). The counts come from the tables, colouring by
// colouring. Boards: the first player's view of random total-5 starts.
func TestConfidentCountsWins(t *testing.T) {
	if !testenv.HasShared(t, "geister", "tables") {
		t.Skip("the shared total-5 tables are not here")
	}
	tb := openTables(t, testenv.Testdata(t, "geister"), testenv.Shared(t, "geister", "tables"))
	r := rand.New(rand.NewPCG(23, 3))
	materials := [][4]int{{2, 1, 1, 1}, {1, 2, 1, 1}, {1, 1, 2, 1}, {1, 1, 1, 2}}
	boards := 2000
	if testing.Short() {
		boards = 300
	}
	ctx := context.Background()
	var confident, allLose, decisive int
	for i := 0; i < boards; i++ {
		m := materials[i%len(materials)]
		g, err := gat.ParseSetup(randomSetup(r, m[0], m[1], m[2], m[3]))
		if err != nil {
			t.Fatal(err)
		}
		b := g.View(0, false)
		c, err := (&player.Tables{TB: tb}).Choose(ctx, b)
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if c.Reason != player.ReasonConfident {
			continue
		}
		ts, ok := tallies(t, tb, b)
		if !ok {
			continue
		}
		confident++
		minLoss := -1
		for _, s := range ts {
			if minLoss < 0 || s.losses < minLoss {
				minLoss = s.losses
			}
		}
		mostWins, fewestWins := -1, -1
		for _, s := range ts {
			if s.losses == minLoss {
				mostWins = max(mostWins, s.wins)
				if fewestWins < 0 || s.wins < fewestWins {
					fewestWins = s.wins
				}
			}
		}
		if minLoss > 0 {
			allLose++
			if mostWins > fewestWins {
				decisive++
			}
		}
		got := ts[target(b, c)]
		if got.losses != minLoss || got.wins != mostWins {
			t.Errorf("%s: chose %c,%s (wins %d, loses %d of the colourings); the best loses %d and wins %d",
				b, 'A'+c.Piece, c.Dir.Name(), got.wins, got.losses, minLoss, mostWins)
		}
	}
	t.Logf("%d boards: %d chosen by the confident rule, %d where every move loses somewhere, %d of them where the wins decide", boards, confident, allLose, decisive)
	if decisive == 0 {
		t.Error("no board where every move loses somewhere and the wins decide: the sweep does not test the rule")
	}
}

// A won game is not walked round a cycle: from two starts the tables value
// as wins for the first player, each in both colourings of the opponent's
// two pieces (each row one colouring; its value is checked here), the
// table player, against itself, used to go round a 4-ply cycle until the
// 300-move draw. Now it never moves from the same position three times
// while the tables choose its moves, and no game ends in the 300-move
// draw (it may still lose: it cannot see the colours).
func TestTablesLeaveCycles(t *testing.T) {
	if !testenv.HasShared(t, "geister", "tables") {
		t.Skip("the shared total-5 tables are not here")
	}
	tb := openTables(t, testenv.Testdata(t, "geister"), testenv.Shared(t, "geister", "tables"))
	for _, setup := range []string{
		"31B99b99b99b21R99r99r99r" + "51b99b99b99b01r99r99r99r",
		"31B99b99b99b21R99r99r99r" + "01b99b99b99b51r99r99r99r",
		"55B99b99b99b50R23R99r99r" + "00b99b99b99b24r99r99r99r",
		"55B99b99b99b50R23R99r99r" + "24b99b99b99b00r99r99r99r",
	} {
		t.Run(setup, func(t *testing.T) {
			g0, err := gat.ParseSetup(setup)
			if err != nil {
				t.Fatal(err)
			}
			v, err := tb.DTW(context.Background(), g0.Position(0))
			if err != nil || v%2 != 1 {
				t.Fatalf("the start is not a table win for player 1: DTW %d, %v", v, err)
			}
			g := playMatch(t, setup, &player.Tables{TB: tb}, &player.Tables{TB: tb})
			seen := map[geister.Position]int{}
			k := 0
			for _, rec := range g.res.Records {
				if rec.Player != 0 {
					continue
				}
				reason := g.outcomes[0].Decisions[k].Choice.Reason
				k++
				if reason == player.ReasonHeuristic {
					continue
				}
				if seen[rec.Before]++; seen[rec.Before] == 3 {
					t.Errorf("ply %d: player 1 moves from %s for the third time", rec.Ply, rec.Before)
				}
			}
			if g.res.Winner == gat.Draw {
				t.Errorf("a table win drawn: %s", g.res.Reason)
			}
			t.Logf("winner %d after %d plies: %s", g.res.Winner+1, g.res.Plies, g.res.Reason)
		})
	}
}
