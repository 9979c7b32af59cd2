package player_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/tbfs/tbfs/geister/gat"
	"github.com/tbfs/tbfs/geister/gat/player"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// BenchmarkChoose measures table-driven decisions on first-player boards of
// random total-5 setups (every colouring and every move's child probed),
// and heuristic decisions on standard starts for comparison.
func BenchmarkChoose(b *testing.B) {
	tb := openTables(b, testenv.Testdata(b, "geister"), testenv.Shared(b, "geister", "tables"))
	r := rand.New(rand.NewPCG(1, 2))
	var tables, start []gat.Board
	for len(tables) < 256 {
		g, err := gat.ParseSetup(randomSetup(r, 2, 1, 1, 1))
		if err != nil {
			b.Fatal(err)
		}
		tables = append(tables, g.View(0, false))
	}
	for len(start) < 256 {
		red := r.Perm(8)
		start = append(start, gat.NewGame([4]int(red[:4]), [4]int{0, 1, 2, 3}).View(0, false))
	}
	ctx := context.Background()
	pol := &player.Tables{TB: tb}
	for _, bc := range []struct {
		name   string
		boards []gat.Board
	}{{"tables", tables}, {"heuristic", start}} {
		b.Run(bc.name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				if _, err := pol.Choose(ctx, bc.boards[i%len(bc.boards)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
