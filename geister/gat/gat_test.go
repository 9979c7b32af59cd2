package gat

import (
	"errors"
	"strings"
	"testing"

	geistertb "github.com/tbfs/tbfs/format/geister"
	"github.com/tbfs/tbfs/geister"
)

// startBoard is the first player's board at the standard start with pieces
// A..D red, as the GAT server's documentation gives it (the arbiter for the
// board layout: own A..H then opponent a..h, opponent squares turned).
const startBoard = "14R24R34R44R15B25B35B45B41u31u21u11u40u30u20u10u"

func TestParseBoardSpec(t *testing.T) {
	b, err := ParseBoard(startBoard)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != startBoard {
		t.Fatalf("round trip %q, want %q", got, startBoard)
	}
	// Piece A is at (1,4) and red; piece h (the opponent's H at its own
	// (4,5)) is at (1,0) in our view.
	if a := b[0]; a.X != 1 || a.Y != 4 || !a.Red() {
		t.Errorf("A = %+v", a)
	}
	if h := b[15]; h.X != 1 || h.Y != 0 || h.Colour != 'u' {
		t.Errorf("h = %+v", h)
	}
	if i := b.At(1, 0); i != 15 {
		t.Errorf("At(1,0) = %d, want 15 (h)", i)
	}
	o, err := b.Observation()
	if err != nil {
		t.Fatal(err)
	}
	if m := geistertb.ObservationMaterial(o); m != (geistertb.Material{PB: 4, PR: 4, OB: 4, OR: 4}) {
		t.Errorf("material %v", m)
	}
}

func TestParseBoardErrors(t *testing.T) {
	for _, tc := range []struct{ name, s string }{
		{"short", startBoard[:45]},
		{"long", startBoard + "10u"},
		{"off board", "64R" + startBoard[3:]},
		{"bad colour", "14X" + startBoard[3:]},
		{"own unknown", "14u" + startBoard[3:]},
		{"two on a square", "24R" + startBoard[3:]},
		{"half captured", "19R" + startBoard[3:]},
		// The reference server writes an unknown colour as u, and a
		// captured piece's colour always (Board.getEncodedItem).
		{"upper-case unknown", startBoard[:45] + "10U"},
		{"captured unknown", startBoard[:45] + "99u"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ParseBoard(tc.s); !errors.Is(err, ErrSyntax) {
				t.Fatalf("ParseBoard(%q) = %v, want ErrSyntax", tc.s, err)
			}
		})
	}
}

// The message rows are the protocol as docs/gat.md states it.
func TestParseServer(t *testing.T) {
	for _, tc := range []struct {
		line string
		want Message
	}{
		{"SET?\r\n", Message{Kind: SetQuery}},
		{"OK\r\n", Message{Kind: Accepted}},
		{"OK \r\n", Message{Kind: Accepted}},
		{"OKR\r\n", Message{Kind: Accepted, Taken: 'R'}},
		{"OKB\r\n", Message{Kind: Accepted, Taken: 'B'}},
		{"NG \r\n", Message{Kind: Refused}},
		{"NG\r\n", Message{Kind: Refused}},
		{"MOV?" + startBoard + "\r\n", Message{Kind: MoveQuery, Board: mustBoard(t, startBoard)}},
		{"WON:" + strings.ReplaceAll(startBoard, "u", "b") + "\r\n", Message{Kind: Won, Board: mustBoard(t, strings.ReplaceAll(startBoard, "u", "b"))}},
		{"LST:" + startBoard, Message{Kind: Lost, Board: mustBoard(t, startBoard)}},
		{"DRW:" + startBoard + "\n", Message{Kind: Drawn, Board: mustBoard(t, startBoard)}},
	} {
		got, err := ParseServer(tc.line)
		if err != nil {
			t.Errorf("ParseServer(%q): %v", tc.line, err)
			continue
		}
		if got != tc.want {
			t.Errorf("ParseServer(%q) = %+v, want %+v", tc.line, got, tc.want)
		}
		if again, err := ParseServer(got.String()); err != nil || again != got {
			t.Errorf("%q: String %q parses to %+v, %v", tc.line, got.String(), again, err)
		}
	}
	for _, bad := range []string{"", "SET", "OKX", "MOV?", "MOV?" + startBoard[:47], "WIN:" + startBoard, "HELLO", strings.Repeat("x", 300)} {
		if m, err := ParseServer(bad); !errors.Is(err, ErrSyntax) {
			t.Errorf("ParseServer(%q) = %+v, %v; want ErrSyntax", bad, m, err)
		}
	}
}

// The server's acknowledgements byte for byte as the reference server
// (miyo/geister_server.java at 8ed0409) writes them: "OK%s" with " " when
// nothing was taken (server/TCPServerWithBlock.java:220,
// server/GameServer.java:102-105), "NG " (TCPServerWithBlock.java:226).
func TestAcknowledgementBytes(t *testing.T) {
	for _, tc := range []struct {
		m    Message
		want string
	}{
		{Message{Kind: Accepted}, "OK "},
		{Message{Kind: Accepted, Taken: 'R'}, "OKR"},
		{Message{Kind: Accepted, Taken: 'B'}, "OKB"},
		{Message{Kind: Refused}, "NG "},
		{Message{Kind: SetQuery}, "SET?"},
	} {
		if got := tc.m.String(); got != tc.want {
			t.Errorf("%+v.String() = %q, want %q", tc.m, got, tc.want)
		}
	}
}

func TestParseClient(t *testing.T) {
	for _, tc := range []struct {
		line string
		want Message
	}{
		{"SET:ABCD\r\n", Message{Kind: Set, Red: [4]int{0, 1, 2, 3}}},
		{"SET:hgfe", Message{Kind: Set, Red: [4]int{4, 5, 6, 7}}},
		{"MOV:A,NORTH\r\n", Message{Kind: MoveCmd, Piece: 0, Dir: geister.North}},
		{"MOV:H,W", Message{Kind: MoveCmd, Piece: 7, Dir: geister.West}},
		{"MOV:c,east", Message{Kind: MoveCmd, Piece: 2, Dir: geister.East}},
		{"MOV:D,S", Message{Kind: MoveCmd, Piece: 3, Dir: geister.South}},
	} {
		got, err := ParseClient(tc.line)
		if err != nil {
			t.Errorf("ParseClient(%q): %v", tc.line, err)
			continue
		}
		if got != tc.want {
			t.Errorf("ParseClient(%q) = %+v, want %+v", tc.line, got, tc.want)
		}
		if again, err := ParseClient(got.String()); err != nil || again != got {
			t.Errorf("%q: String %q parses to %+v, %v", tc.line, got.String(), again, err)
		}
	}
	for _, bad := range []string{"", "SET:ABC", "SET:ABCDE", "SET:ABCA", "SET:ABCI", "MOV:A", "MOV:I,N", "MOV:A,UP", "MOV:AB,N", "MOV:,N", "PASS"} {
		if m, err := ParseClient(bad); !errors.Is(err, ErrSyntax) {
			t.Errorf("ParseClient(%q) = %+v, %v; want ErrSyntax", bad, m, err)
		}
	}
}

func mustBoard(t *testing.T, s string) Board {
	t.Helper()
	b, err := ParseBoard(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The standard start as each player sees it: the documentation's example
// board for the first player, and the same for the second (the game is
// symmetric, so its view reads the same with its own colours).
func TestStandardStartViews(t *testing.T) {
	g := NewGame([4]int{0, 1, 2, 3}, [4]int{4, 5, 6, 7})
	if got := g.View(0, false).String(); got != startBoard {
		t.Errorf("player 1 view %q, want %q", got, startBoard)
	}
	want2 := "14B24B34B44B15R25R35R45R41u31u21u11u40u30u20u10u"
	if got := g.View(1, false).String(); got != want2 {
		t.Errorf("player 2 view %q, want %q", got, want2)
	}
	want1 := "14R24R34R44R15B25B35B45B41b31b21b11b40r30r20r10r"
	if got := g.View(0, true).String(); got != want1 {
		t.Errorf("player 1 revealed %q, want %q", got, want1)
	}
}

// Rules rows: each follows from the rules of the game (FORMAT.md §1 and
// the GAT server's rules: escape from the own corners, 300 moves draw).
func TestGameRules(t *testing.T) {
	type step struct {
		player, piece int
		dir           geister.Dir
		illegal       bool
		taken         byte
	}
	for _, tc := range []struct {
		name   string
		setup  string // from player 1's view
		steps  []step
		winner int // -2: not over
	}{
		{
			name:   "blue escapes west from 00",
			setup:  "00B99b99b99b55R99r99r99r" + "30b99b99b99b31r99r99r99r",
			steps:  []step{{player: 0, piece: 0, dir: geister.West}},
			winner: 0,
		},
		{
			name:   "blue escapes north from 50",
			setup:  "50B99b99b99b55R99r99r99r" + "30b99b99b99b31r99r99r99r",
			steps:  []step{{player: 0, piece: 0, dir: geister.North}},
			winner: 0,
		},
		{
			name:   "red cannot escape",
			setup:  "22B99b99b99b00R99r99r99r" + "30b99b99b99b31r99r99r99r",
			steps:  []step{{player: 0, piece: 4, dir: geister.West, illegal: true}},
			winner: -2,
		},
		{
			name:   "blue cannot leave by a side",
			setup:  "02B99b99b99b55R99r99r99r" + "30b99b99b99b31r99r99r99r",
			steps:  []step{{player: 0, piece: 0, dir: geister.West, illegal: true}},
			winner: -2,
		},
		{
			name:   "no move onto an own piece",
			setup:  "22B99b99b99b23R99r99r99r" + "30b99b99b99b31r99r99r99r",
			steps:  []step{{player: 0, piece: 0, dir: geister.South, illegal: true}},
			winner: -2,
		},
		{
			name:   "out of turn",
			setup:  "22B99b99b99b23R99r99r99r" + "30b99b99b99b31r99r99r99r",
			steps:  []step{{player: 1, piece: 0, dir: geister.South, illegal: true}},
			winner: -2,
		},
		{
			name:   "captured piece cannot move",
			setup:  "22B99b99b99b23R99r99r99r" + "30b99b99b99b31r99r99r99r",
			steps:  []step{{player: 0, piece: 1, dir: geister.South, illegal: true}},
			winner: -2,
		},
		{
			name:   "capturing the last blue wins",
			setup:  "22B99b99b99b44R99r99r99r" + "32b99b99b99b00r99r99r99r",
			steps:  []step{{player: 0, piece: 0, dir: geister.East, taken: 'B'}},
			winner: 0,
		},
		{
			name:   "capturing the last red loses",
			setup:  "22B99b99b99b44R99r99r99r" + "32r99r99r99r00b99b99b99b",
			steps:  []step{{player: 0, piece: 0, dir: geister.East, taken: 'R'}},
			winner: 1,
		},
		{
			// Player 2's piece a stands at (3,2) in player 1's view,
			// (2,3) in its own; moving east it takes player 1's blue A at (2,2).
			name:  "second player captures",
			setup: "22B23B99b99b44R99r99r99r" + "32b99b99b99b00r99r99r99r",
			steps: []step{
				{player: 0, piece: 4, dir: geister.North},
				{player: 1, piece: 0, dir: geister.East, taken: 'B'},
			},
			winner: -2,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := ParseSetup(tc.setup)
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range tc.steps {
				taken, err := g.Move(s.player, s.piece, s.dir)
				if s.illegal {
					if !errors.Is(err, ErrIllegal) {
						t.Fatalf("step %d: %v, want ErrIllegal", i, err)
					}
					if g.Ply != i {
						t.Fatalf("illegal move counted")
					}
					continue
				}
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				if taken != s.taken {
					t.Fatalf("step %d took %q, want %q", i, taken, s.taken)
				}
			}
			over, winner, reason := g.Over()
			if tc.winner == -2 {
				if over {
					t.Fatalf("game over (%d, %s), want it going on", winner, reason)
				}
				return
			}
			if !over || winner != tc.winner {
				t.Fatalf("over %v winner %d (%s), want winner %d", over, winner, reason, tc.winner)
			}
		})
	}
}

// The 300th move without a result draws; a result on that move wins.
func TestGameDrawAt300(t *testing.T) {
	g := NewGame([4]int{0, 1, 2, 3}, [4]int{0, 1, 2, 3})
	for ply := 0; ply < DefaultMaxPlies; ply++ {
		if over, _, _ := g.Over(); over {
			t.Fatalf("over at ply %d", ply)
		}
		// Both players shuffle piece A north and back south.
		d := geister.North
		if (ply/2)%2 == 1 {
			d = geister.South
		}
		if _, err := g.Move(g.Turn(), 0, d); err != nil {
			t.Fatalf("ply %d: %v", ply, err)
		}
	}
	over, winner, _ := g.Over()
	if !over || winner != Draw || g.Ply != 300 {
		t.Fatalf("after 300 plies: over %v winner %d ply %d", over, winner, g.Ply)
	}
}

func TestParseSetupErrors(t *testing.T) {
	for _, tc := range []struct{ name, s string }{
		{"unknown colour", "22B99b99b99b44R99r99r99r" + "32u99b99b99b00r99r99r99r"},
		{"no red on board", "22B99b99b99b99R99r99r99r" + "32b99b99b99b00r99r99r99r"},
		{"five blues", "22B23B99b99b44B99r99r99r" + "32b99b99b99b00r99r99r99r"},
		{"escaped", "88B99b99b99b44R99r99r99r" + "32b99b99b99b00r99r99r99r"},
	} {
		if _, err := ParseSetup(tc.s); !errors.Is(err, ErrSyntax) {
			t.Errorf("%s: ParseSetup = %v, want ErrSyntax", tc.name, err)
		}
	}
}
