package geister_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	geistertb "github.com/tbfs/tbfs/format/geister"
	"github.com/tbfs/tbfs/geister"
	"github.com/tbfs/tbfs/internal/testkit/geisteroracle"
)

// TestMovesOracle checks the legal moves and children of every parent in
// moves.tsv (reference move generator): the same set of moves, each with
// the reference's child board, material, index and terminal answer.
func TestMovesOracle(t *testing.T) {
	rows := geisteroracle.Shared(t, "moves.tsv")
	byParent := map[string][]geisteroracle.Row{}
	var order []string
	for _, r := range rows {
		if _, ok := byParent[r["board"]]; !ok {
			order = append(order, r["board"])
		}
		byParent[r["board"]] = append(byParent[r["board"]], r)
	}
	for _, board := range order {
		p, err := geister.ParseBoard(board)
		if err != nil {
			t.Fatalf("ParseBoard(%q): %v", board, err)
		}
		want := map[string]geisteroracle.Row{}
		for _, r := range byParent[board] {
			want[r["from"]+r["to"]] = r
		}
		moves := p.Moves(nil)
		if len(moves) != len(want) {
			t.Errorf("%s: %d moves, oracle %d", p, len(moves), len(want))
		}
		for _, mv := range moves {
			r, ok := want[mv.From.Coord()+mv.To.Coord()]
			if !ok {
				t.Errorf("%s: move %v not in the oracle", p, mv)
				continue
			}
			capture := "-"
			if mv.Capture != geister.Empty {
				capture = string(mv.Capture.Letter())
			}
			if mv.Dir.String() != r["dir"] || capture != r["capture"] {
				t.Errorf("%s %v: dir %v capture %s, oracle %s %s", p, mv, mv.Dir, capture, r["dir"], r["capture"])
			}
			c := p.Play(mv)
			if c.String() != r["child_board"] {
				t.Errorf("%s %v: child %s, oracle %s", p, mv, c, r["child_board"])
			}
			if geistertb.MaterialOf(c).String() != r["child_material"] {
				t.Errorf("%s %v: child material %v, oracle %s", p, mv, geistertb.MaterialOf(c), r["child_material"])
			}
			v, term := c.Terminal()
			if term != (r["child_terminal"] == "1") {
				t.Errorf("%s %v: child terminal %v, oracle %s", p, mv, term, r["child_terminal"])
			} else if term && fmt.Sprint(v) != r["child_value"] {
				t.Errorf("%s %v: terminal child value %d, oracle %s", p, mv, v, r["child_value"])
			}
			if r["child_id"] == "-1" {
				if _, _, err := geistertb.Rank(c); err == nil {
					t.Errorf("%s %v: child %s ranks, oracle has no table", p, mv, c)
				}
			} else {
				cm, idx, err := geistertb.Rank(c)
				if err != nil || fmt.Sprint(cm.ID()) != r["child_id"] || fmt.Sprint(idx) != r["child_obsblk_rank"] {
					t.Errorf("%s %v: child rank %d %d %v, oracle %s %s", p, mv, cm.ID(), idx, err, r["child_id"], r["child_obsblk_rank"])
				}
			}
			if p.CapturesLastBlue(mv) != (r["capture"] == "b" && r["child_material"][:3] == "pb0") {
				t.Errorf("%s %v: CapturesLastBlue = %v", p, mv, p.CapturesLastBlue(mv))
			}
		}
		if t.Failed() {
			return
		}
	}
}

// TestTerminal checks the terminal rules (FORMAT.md §1.2) on hand-built
// positions whose result follows from the rules alone.
func TestTerminal(t *testing.T) {
	tests := []struct {
		board string
		value uint8
		ok    bool
		why   string
	}{
		{"B...../....../..R.../....../...b../...r..", 1, true, "own blue on A1 escapes"},
		{".....B/....../..R.../....../...b../...r..", 1, true, "own blue on F1 escapes"},
		{"....../B...../..R.../....../...b../...r..", 0, false, "blue on A2 is not on an exit"},
		{"....../.B..../....../....../...b../...r..", 1, true, "no own red left: the opponent captured them all"},
		{"....../.B..../...R../....../....../...r..", 1, true, "no opponent blue left"},
		{"....../....../...R../....../...b../...r..", 2, true, "no own blue left"},
		{"....../..B.../...R../....../...b../......", 2, true, "no opponent red left"},
		{"B...../....../...R../....../...b../......", 1, true, "wins are checked before losses"},
		{"....../....../....../....../....../.....b", 1, true, "empty own side: no red counts first"},
	}
	for _, tc := range tests {
		p, err := geister.ParseBoard(tc.board)
		if err != nil {
			t.Fatalf("%s: %v", tc.board, err)
		}
		v, ok := p.Terminal()
		if v != tc.value || ok != tc.ok {
			t.Errorf("%s (%s): Terminal = %d %v, want %d %v", tc.board, tc.why, v, ok, tc.value, tc.ok)
		}
	}
}

// TestMoveGeometry checks, for every square, that a lone piece has exactly
// the steps the rules allow (on the board, one square orthogonally).
func TestMoveGeometry(t *testing.T) {
	for y := 0; y < 6; y++ {
		for x := 0; x < 6; x++ {
			s := geister.SquareAt(x, y)
			p := geister.Position{OwnRed: s.Bit()}
			want := 4
			if x == 0 || x == 5 {
				want--
			}
			if y == 0 || y == 5 {
				want--
			}
			moves := p.Moves(nil)
			if len(moves) != want {
				t.Errorf("%v: %d moves, want %d", s, len(moves), want)
			}
			for _, m := range moves {
				if dx, dy := m.To.X()-x, m.To.Y()-y; dx*dx+dy*dy != 1 || !m.To.Valid() {
					t.Errorf("%v: move %v", s, m)
				}
			}
		}
	}
}

// TestUnmoves proves Unmoves sound and complete on sampled positions of
// every material (the rules are the arbiter: Moves and Play): every
// parent has a move to the position, and every move of every position is
// undone by an unmove of its child.
func TestUnmoves(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, m := range geistertb.Materials() {
		for range 20 {
			q, err := geistertb.Unrank(m, rng.Uint64N(m.Entries()))
			if err != nil {
				t.Fatal(err)
			}
			for _, mv := range q.Moves(nil) {
				c := q.Play(mv)
				found := false
				for _, u := range c.Unmoves(nil) {
					found = found || u == q
				}
				if !found {
					t.Fatalf("%s %v -> %s: parent missing from Unmoves", q, mv, c)
				}
			}
			for _, u := range q.Unmoves(nil) {
				if err := u.Validate(); err != nil {
					t.Fatalf("unmove of %s: %s: %v", q, u, err)
				}
				found := false
				for _, mv := range u.Moves(nil) {
					found = found || u.Play(mv) == q
				}
				if !found {
					t.Fatalf("unmove %s of %s has no move to it", u, q)
				}
			}
		}
	}
}
