package retro_test

import (
	"context"
	"fmt"
	"log"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/retro"
)

// The astralbase example: Fool's Mate declared Loss(0) by the caller, one
// expansion, and every parent found is a win in one ply.
func ExampleEngine() {
	mate, err := chess.ParseFEN("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3")
	if err != nil {
		log.Fatal(err)
	}
	e := retro.NewEngine()
	if err := e.AddSeed(mate, retro.Loss(0)); err != nil {
		log.Fatal(err)
	}
	fmt.Println("expanded:", e.Solve(1))
	v, ok := e.Probe(mate)
	fmt.Println("seed:", v, ok)
	allWin1 := true
	e.Each(func(p chess.Position, v retro.Value) bool {
		if !e.Seeded(p) && v != retro.Win(1) {
			allWin1 = false
		}
		return true
	})
	fmt.Println("parents are Win(1):", allWin1)
	_, ok = e.Probe(chess.StartPosition())
	fmt.Println("start position present:", ok)
	// Output:
	// expanded: 1
	// seed: Loss(0) true
	// parents are Win(1): true
	// start position present: false
}

// A back-rank mate: the rook's move to a8 is the only mate.
func ExampleProveMate() {
	pos, err := chess.ParseFEN("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1")
	if err != nil {
		log.Fatal(err)
	}
	res, err := retro.ProveMate(context.Background(), pos, 3, true)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Kind, res.Moves, res.Line)
	// Output: mate 1 [a1a8]
}

// Solving KQK exactly; the answer for this position (mate in 10 moves, 19
// plies) is the reference prober's (seed_cases.tsv in ../shared/chesstb).
func ExampleSolveMaterial() {
	t, err := retro.SolveMaterial(context.Background(), "KQK", retro.Options{})
	if err != nil {
		log.Fatal(err)
	}
	pos, err := chess.ParseFEN("8/8/8/5k2/8/8/1Q6/K7 w - - 0 1")
	if err != nil {
		log.Fatal(err)
	}
	v, err := t.Probe(pos)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(t.Material(), v)
	// Output: KQK Win(19)
}
