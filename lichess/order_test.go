package lichess

import (
	"strings"
	"testing"

	"github.com/tbfs/tbfs/chess"
)

// TestShakmatyOrder checks shakmatyOrder against the order shakmaty's
// Chess::legal_moves generates (shakmaty/src/position.rs: en passant
// first; in check the king's evasions, then the other moves onto the
// checking line; pawn captures towards the a-file, then the h-file, each
// plain before promoting, by target, promoting to queen, rook, bishop,
// knight; single pushes likewise; double pushes; knights, bishops, rooks,
// queens by origin then target; the king by target; castling, king's side
// first), the orders worked out by hand from that source.
func TestShakmatyOrder(t *testing.T) {
	for _, tc := range []struct{ fen, want string }{
		{"k7/8/8/3pP3/8/8/P7/R3K1N1 w Q d6 0 1",
			"e5d6 a2a3 e5e6 a2a4 g1e2 g1f3 g1h3 a1b1 a1c1 a1d1 e1d1 e1f1 e1d2 e1e2 e1f2 e1c1"},
		{"1n1n4/2P5/8/8/8/8/8/K6k w - - 0 1",
			"c7b8q c7b8r c7b8b c7b8n c7d8q c7d8r c7d8b c7d8n c7c8q c7c8r c7c8b c7c8n a1b1 a1a2 a1b2"},
		{"4k3/8/8/8/8/8/3q4/R3K2R w KQ - 0 1", "e1f1 e1d2"},
		{"4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1",
			"a1b1 a1c1 a1d1 a1a2 a1a3 a1a4 a1a5 a1a6 a1a7 a1a8 h1f1 h1g1 h1h2 h1h3 h1h4 h1h5 h1h6 h1h7 h1h8 e1d1 e1f1 e1d2 e1e2 e1f2 e1g1 e1c1"},
	} {
		pos, err := chess.ParseFEN(tc.fen)
		if err != nil {
			t.Fatal(err)
		}
		moves := pos.LegalMoves(nil)
		shakmatyOrder(&pos, moves)
		var got []string
		for _, m := range moves {
			got = append(got, m.UCI())
		}
		if g := strings.Join(got, " "); g != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.fen, g, tc.want)
		}
	}
}
