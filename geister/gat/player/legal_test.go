package player_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tbfs/tbfs/geister/gat"
	"github.com/tbfs/tbfs/geister/gat/player"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// Every move the table policy picks is legal by the rules (gat.Game is the
// arbiter): whole games in process from random setups with 1..4 pieces of
// each colour a side, where the tables reach some positions and the
// heuristic plays the rest.
func TestTablesMovesAreLegal(t *testing.T) {
	dirs := []string{testenv.Testdata(t, "geister")}
	if testenv.HasShared(t, "geister", "tables") {
		dirs = append(dirs, testenv.Shared(t, "geister", "tables"))
	}
	tb := openTables(t, dirs...)
	// One policy a side: a Tables remembers its own game's boards.
	pols := [2]*player.Tables{{TB: tb}, {TB: tb}}
	r := rand.New(rand.NewPCG(5, 6))
	ctx := context.Background()
	games := 300
	if testing.Short() {
		games = 50
	}
	reasons := map[string]int{}
	for i := 0; i < games; i++ {
		setup := randomSetup(r, 1+r.IntN(4), 1+r.IntN(4), 1+r.IntN(4), 1+r.IntN(4))
		g, err := gat.ParseSetup(setup)
		if err != nil {
			t.Fatalf("setup %s: %v", setup, err)
		}
		for _, p := range pols {
			if _, err := p.Setup(ctx); err != nil {
				t.Fatal(err)
			}
		}
		for {
			if over, _, _ := g.Over(); over {
				break
			}
			b := g.View(g.Turn(), false)
			c, err := pols[g.Turn()].Choose(ctx, b)
			if err != nil {
				t.Fatalf("game %d (%s) ply %d: Choose(%s): %v", i, setup, g.Ply, b, err)
			}
			reasons[c.Reason]++
			if _, err := g.Move(g.Turn(), c.Piece, c.Dir); err != nil {
				t.Fatalf("game %d (%s) ply %d: board %s: %s chose %c,%s: %v", i, setup, g.Ply, b, c.Reason, 'A'+c.Piece, c.Dir.Name(), err)
			}
		}
	}
	t.Logf("choices by rule: %v", reasons)
	if reasons[player.ReasonHeuristic] == 0 || reasons[player.ReasonEscape] == 0 {
		t.Errorf("rules not all exercised: %s", fmt.Sprint(reasons))
	}
}
