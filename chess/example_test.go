package chess_test

import (
	"fmt"

	"github.com/tbfs/tbfs/chess"
)

func ExampleParseFEN() {
	p, err := chess.ParseFEN("8/8/8/5k2/8/8/1Q6/K7_w")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.FEN(), p.MaterialKey())

	_, err = chess.ParseFEN("8/8/8/5k2/8/8/1Q6/K6K w - - 0 1")
	fmt.Println(err)
	// Output:
	// 8/8/8/5k2/8/8/1Q6/K7 w - - 0 1 KQvK
	// chess: illegal position: white has 2 kings, want 1
}

func ExamplePosition_LegalMoves() {
	p := chess.StartPosition()
	moves := p.LegalMoves(make([]chess.Move, 0, 256))
	fmt.Println(len(moves), "moves")
	m, _ := p.ParseMove("Nf3")
	c := p.Play(m)
	fmt.Println(m.UCI(), c.FEN())
	// Output:
	// 20 moves
	// g1f3 rnbqkbnr/pppppppp/8/8/8/5N2/PPPPPPPP/RNBQKB1R b KQkq - 1 1
}

func ExamplePosition_Unmoves() {
	// The usable en-passant square says the last move was e2-e4.
	p, _ := chess.ParseFEN("4k3/8/8/8/3pP3/8/8/4K3 b - e3 0 1")
	for _, u := range p.Unmoves(nil) {
		parent := p.Unmake(u)
		fmt.Println(u, parent.FEN())
	}
	// Output:
	// e2e4 4k3/8/8/8/3p4/8/4P3/4K3 w - - 0 1
}
