package player_test

import (
	"context"
	"testing"

	"github.com/tbfs/tbfs/geister"
	"github.com/tbfs/tbfs/geister/gat"
	"github.com/tbfs/tbfs/geister/gat/player"
)

// Rows from the documented rules of Tables with no tables: the escape (a
// rule of the game: it wins at once) and the heuristic's stated
// preferences, each board built so that one preference decides.
func TestHeuristicRows(t *testing.T) {
	for _, tc := range []struct {
		name  string
		board string
		piece int
		dir   geister.Dir
	}{
		{
			name:  "escape east from (5,0)",
			board: "50B99b99b99b44R99r99r99r" + "31u99b99b99b23u99r99r99r",
			piece: 0, dir: geister.East,
		},
		{
			name:  "escape west from (0,0) before anything else",
			board: "12B00B99b99b44R99r99r99r" + "22u99b99b99b23u99r99r99r",
			piece: 1, dir: geister.West,
		},
		{
			// The opponent has one red left among two pieces: taking
			// either might lose, so A steps north toward the exit
			// rather than take c on (3,3).
			name:  "no capture when one red is left",
			board: "23B99b99b99b55R99r99r99r" + "99b99b33u99r99r99r41u99b",
			piece: 0, dir: geister.North,
		},
		{
			// Stepping north would put A next to the opponent on (2,0);
			// west keeps it out of reach and as close to an exit.
			name:  "keep the blue out of reach",
			board: "22B99b99b99b55R99r99r99r" + "20u99b99b99b45u99r99r99r",
			piece: 0, dir: geister.West,
		},
		{
			name:  "the blue nearest an exit advances",
			board: "23B99b99b99b55R99r99r99r" + "45u99b99b99b44u99r99r99r",
			piece: 0, dir: geister.North,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := gat.ParseBoard(tc.board)
			if err != nil {
				t.Fatal(err)
			}
			c, err := (&player.Tables{}).Choose(context.Background(), b)
			if err != nil {
				t.Fatal(err)
			}
			if c.Piece != tc.piece || c.Dir != tc.dir {
				t.Fatalf("chose %c,%s (%s), want %c,%s", 'A'+c.Piece, c.Dir.Name(), c.Reason, 'A'+tc.piece, tc.dir.Name())
			}
		})
	}
}
