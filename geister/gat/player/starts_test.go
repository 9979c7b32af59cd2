package player_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tbfs/tbfs/format/geister"
	"github.com/tbfs/tbfs/geister/gat"
	"github.com/tbfs/tbfs/geister/gat/player"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// tableStarts returns n custom starts whose positions the shared total-5
// tables cover (two pieces of one colour, one of the other three), the
// four materials in turn, from a fixed seed.
func tableStarts(n int) []string {
	r := rand.New(rand.NewPCG(2026, 23))
	materials := [][4]int{{2, 1, 1, 1}, {1, 2, 1, 1}, {1, 1, 2, 1}, {1, 1, 1, 2}}
	var out []string
	for i := 0; i < n; i++ {
		m := materials[i%len(materials)]
		out = append(out, randomSetup(r, m[0], m[1], m[2], m[3]))
	}
	return out
}

// fromWin counts, over the seats a table player took in games, those in
// which it stood in a position the tables value as a win (its true
// colours, the server's record) at one of its moves, by how the game ended
// for it.
type fromWin struct {
	seats, stood, won, drawn, lost int
	// cycled counts the draws among stood in which a position the table
	// player moved from recurred three times.
	cycled int
}

func (f fromWin) String() string {
	return fmt.Sprintf("%d table seats; stood on a table win in %d: won %d, drawn %d (%d with a position three times), lost %d",
		f.seats, f.stood, f.won, f.drawn, f.cycled, f.lost)
}

// add adds o's counts to f.
func (f *fromWin) add(o fromWin) {
	f.seats += o.seats
	f.stood += o.stood
	f.won += o.won
	f.drawn += o.drawn
	f.lost += o.lost
	f.cycled += o.cycled
}

// judge checks game g for every seat a table player took (checkKeepsWins)
// and counts it in f.
func judge(t *testing.T, tb *geister.Tablebase, g game, pols [2]player.Policy, st *stats, f *fromWin) {
	t.Helper()
	for seat, p := range pols {
		if _, ok := p.(*player.Tables); ok {
			checkKeepsWins(t, tb, g, seat, st)
			f.count(t, tb, g, seat)
		}
	}
}

// count adds game g, with the table player in seat tp, to f. The tables
// are the arbiter of "a won position".
func (f *fromWin) count(t *testing.T, tb *geister.Tablebase, g game, tp int) {
	t.Helper()
	f.seats++
	stood := false
	seen := map[geister.Position]int{}
	thrice := false
	for _, rec := range g.res.Records {
		if rec.Player != tp {
			continue
		}
		seen[rec.Before]++
		thrice = thrice || seen[rec.Before] >= 3
		v, err := tb.DTW(context.Background(), rec.Before)
		if err != nil {
			t.Fatalf("ply %d: DTW(%s): %v", rec.Ply, rec.Before, err)
		}
		stood = stood || v%2 == 1
	}
	if !stood {
		return
	}
	f.stood++
	switch g.res.Winner {
	case tp:
		f.won++
	case gat.Draw:
		f.drawn++
		if thrice {
			f.cycled++
		}
	default:
		f.lost++
		t.Logf("lost from a table win: %s", g.res.Reason)
	}
}

// Games from 40 custom starts inside the shared tables, the table player
// in alternate seats, against our random player, against itself and (with
// TBFS_GAT_REFERENCE) against the reference's Java RandomPlayer. Every game
// must end with a legal result and keep every win the tables chose (the
// tables are the arbiter, as in TestTablesKeepWins); the counts of games
// won, drawn and lost from a table win are logged: they are the measure of
// the player, not an expected value.
func TestTableStarts(t *testing.T) {
	if !testenv.HasShared(t, "geister", "tables") {
		t.Skip("the shared total-5 tables are not here")
	}
	tb := openTables(t, testenv.Testdata(t, "geister"), testenv.Shared(t, "geister", "tables"))
	n := 40
	if testing.Short() {
		n = 8
	}
	starts := tableStarts(n)
	opponents := []struct {
		name string
		// opponent returns the policy for start i (t may skip).
		opponent func(t *testing.T) func(i int) player.Policy
	}{
		{"our random", func(*testing.T) func(int) player.Policy {
			return func(i int) player.Policy { return newRandom(uint64(100 + i)) }
		}},
		{"our tables", func(*testing.T) func(int) player.Policy {
			return func(int) player.Policy { return &player.Tables{TB: tb} }
		}},
		{"reference random", func(t *testing.T) func(int) player.Policy {
			cp := testenv.GATReference(t) // skips without a checkout or a JDK
			return func(int) player.Policy { return &referenceClient{cp} }
		}},
	}
	var total fromWin
	for _, opp := range opponents {
		t.Run(opp.name, func(t *testing.T) {
			newOpponent := opp.opponent(t)
			var f fromWin
			var st stats
			for i, setup := range starts {
				tp := i % 2
				var pols [2]player.Policy
				pols[tp] = &player.Tables{TB: tb}
				pols[1-tp] = newOpponent(i)
				t.Run(fmt.Sprint(i), func(t *testing.T) {
					judge(t, tb, playMatch(t, setup, pols[0], pols[1]), pols, &st, &f)
				})
			}
			t.Logf("against %s: %v", opp.name, f)
			total.add(f)
		})
	}
	t.Logf("all: %v", total)
}
