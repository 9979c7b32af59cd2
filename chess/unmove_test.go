package chess

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// fenNoClocks returns the first four FEN fields: placement, side, castling
// and en passant, the identity of a position apart from its clocks.
func fenNoClocks(p *Position) string {
	f := strings.Fields(p.FEN())
	return strings.Join(f[:4], " ")
}

// unmovePositions returns random positions for the unmove properties:
// positions of random games from the start and from sparse positions, which
// bring promotions, under-promotions and en passant often.
func unmovePositions(t *testing.T, seed uint64, games, sparse int) []Position {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	var ps []Position
	keep := func(p *Position, _ []Move) bool {
		ps = append(ps, *p)
		return true
	}
	// Positions just after castling (and with rights at stake), which
	// random games reach rarely; each with its colour flip.
	for _, fen := range []string{
		"4k3/8/8/8/8/8/8/R4RK1 b - - 0 1",
		"r3k2r/8/8/8/8/8/8/2KR3R b kq - 0 1",
		"r3k2r/8/8/8/8/8/8/R4RK1 b kq - 0 1",
		"4k3/8/8/8/8/8/8/2KR4 b - - 0 1",
		"4k3/8/8/8/8/8/1r6/R4RK1 b - - 0 1",
		"2kr3r/8/8/8/8/8/8/R3K2R w KQ - 0 1",
		"r4r2/6k1/8/8/8/8/8/4K2R b K - 0 1",
	} {
		p := mustFEN(t, fen)
		ps = append(ps, p, p.Mirror())
	}
	for range games {
		playout(rng, StartPosition(), 200, keep)
	}
	for i := range sparse {
		playout(rng, randomSparse(t, rng, 3+i%10), 60, keep)
	}
	return ps
}

func unmoveBudget() (games, sparse int) {
	if raceEnabled || testing.Short() {
		return 2, 20
	}
	return 6, 80
}

// TestUnmovesSound: every generated parent is a valid position (it parses
// back from its FEN to itself), the unmove's forward move is legal in it,
// and playing it gives the child (the rules are the arbiter through the
// forward generator, itself checked by perft and corentings).
func TestUnmovesSound(t *testing.T) {
	games, sparse := unmoveBudget()
	var buf []Unmove
	var mbuf []Move
	n := 0
	kinds := map[string]int{}
	for _, p := range unmovePositions(t, 1, games, sparse) {
		child := fenNoClocks(&p)
		buf = p.Unmoves(buf[:0])
		for _, u := range buf {
			n++
			kinds[unmoveKind(&p, u)]++
			par := p.Unmake(u)
			back, err := ParseFEN(par.FEN())
			if err != nil {
				t.Fatalf("%s: unmove %v gives invalid parent %s: %v", p.FEN(), u, par.FEN(), err)
			}
			if back != par {
				t.Fatalf("%s: unmove %v: parent %s re-parses as %s", p.FEN(), u, par.FEN(), back.FEN())
			}
			mbuf = par.LegalMoves(mbuf[:0])
			if !slices.Contains(mbuf, u.Move()) {
				t.Fatalf("%s: unmove %v: %s is not legal in the parent %s", p.FEN(), u, u.Move(), par.FEN())
			}
			c := par.Play(u.Move())
			if got := fenNoClocks(&c); got != child {
				t.Fatalf("%s: unmove %v: parent %s plays %s to %s", p.FEN(), u, par.FEN(), u.Move(), got)
			}
			// Clocks as documented: zeroing moves give 0, others one less.
			wantHM := max(p.HalfmoveClock()-1, 0)
			if par.IsZeroing(u.Move()) {
				wantHM = 0
			}
			if par.HalfmoveClock() != wantHM {
				t.Fatalf("%s: unmove %v: parent clock %d, want %d", p.FEN(), u, par.HalfmoveClock(), wantHM)
			}
		}
	}
	t.Logf("%d unmoves checked: %v", n, kinds)
	// The sample must exercise every kind the generator knows.
	for _, k := range []string{"quiet", "uncapture", "unpromotion", "capturing unpromotion", "en passant", "double push", "parent en passant", "castling", "restored rights"} {
		if kinds[k] == 0 {
			t.Errorf("no unmove of kind %q in the sample", k)
		}
	}
}

// unmoveKind names the kind of an unmove for the coverage count.
func unmoveKind(p *Position, u Unmove) string {
	m := u.Move()
	switch {
	case m.IsCastle():
		return "castling"
	case u.RestoredCastling() != 0:
		return "restored rights"
	case m.IsEnPassant():
		return "en passant"
	case u.ParentEnPassant() != NoSquare:
		return "parent en passant"
	case m.Promotion() != NoPieceType && u.Captured() != NoPieceType:
		return "capturing unpromotion"
	case m.Promotion() != NoPieceType:
		return "unpromotion"
	case u.Captured() != NoPieceType:
		return "uncapture"
	case p.PieceAt(m.To()).Type() == Pawn && (m.To()-m.From() == 16 || m.From()-m.To() == 16):
		return "double push"
	}
	return "quiet"
}

// TestUnmovesComplete: for every legal move of random positions, castling
// and moves that lose castling rights included, the child's unmoves include
// one leading back to the parent.
func TestUnmovesComplete(t *testing.T) {
	games, sparse := unmoveBudget()
	var ubuf []Unmove
	n := 0
	kinds := map[string]int{}
	for _, p := range unmovePositions(t, 2, games, sparse) {
		parent := fenNoClocks(&p)
		for _, m := range p.LegalMoves(nil) {
			c := p.Play(m)
			n++
			ubuf = c.Unmoves(ubuf[:0])
			found := false
			for _, u := range ubuf {
				if u.Move() != m {
					continue
				}
				par := c.Unmake(u)
				if fenNoClocks(&par) == parent {
					found = true
					kinds[unmoveKind(&c, u)]++
					break
				}
			}
			if !found {
				var us []string
				for _, u := range ubuf {
					us = append(us, u.String())
				}
				t.Fatalf("%s: after %s (%s) no unmove gives the parent back; unmoves %v", p.FEN(), m, c.FEN(), us)
			}
		}
	}
	t.Logf("%d moves retracted: %v", n, kinds)
	for _, k := range []string{"quiet", "uncapture", "unpromotion", "capturing unpromotion", "en passant", "double push", "parent en passant", "castling", "restored rights"} {
		if kinds[k] == 0 {
			t.Errorf("no move of kind %q in the sample", k)
		}
	}
}

// TestUnmoveCounts checks hand-built children whose parents follow from the
// rules; each row's comment derives the count.
func TestUnmoveCounts(t *testing.T) {
	tests := []struct {
		fen  string
		want int
	}{
		// White's king came to a1 from a2, b1 or b2, capturing nothing or a
		// black knight, bishop, rook or queen (no pawn on rank 1): 3 x 5.
		{"k7/8/8/8/8/8/8/K7 b - - 0 1", 15},
		// The same for Black's king on a8.
		{"k7/8/8/8/8/8/8/K7 w - - 0 1", 15},
		// The d6 pawn: pushed from d5 (1); captured from c5 or e5 one of
		// five black kinds (10); took en passant from c5 or e5 (2). The
		// king came to e1 from d1 d2 e2 f1 f2, capturing nothing or one
		// of four kinds (25). Total 38.
		{"4k3/8/3P4/8/8/8/8/4K3 b - - 0 1", 38},
		// A usable en-passant square: the last move was e2-e4, only.
		{"4k3/8/8/8/3pP3/8/8/4K3 b - e3 0 1", 1},

		// The b8 knight came from a6, c6 or d7, capturing nothing or one of
		// four kinds (15); or it is a promotion from b7 (1) or a capturing
		// promotion from a7 or c7 taking one of four kinds (8). The king:
		// 25 as above. Total 49.
		{"1N2k3/8/8/8/8/8/8/4K3 b - - 0 1", 49},
		// Black is in check from Re2, so the rook made the last move and
		// came along rank 2 (a2-d2, f2-h2; from e3-e7 Black would already
		// have been in check with White to move), capturing nothing or one
		// of five kinds: 7 x 6 = 42. No king move leaves the check.
		{"4k3/8/8/8/8/8/4R3/4K3 b - - 0 1", 42},
	}
	for _, tc := range tests {
		p := mustFEN(t, tc.fen)
		us := p.Unmoves(nil)
		if len(us) != tc.want {
			var s []string
			for _, u := range us {
				s = append(s, u.String())
			}
			t.Errorf("%s: %d unmoves, want %d: %v", tc.fen, len(us), tc.want, s)
		}
	}
}

// TestSameMaterialUnmoves: SameMaterialUnmoves is exactly the part of
// Unmoves without uncaptures and unpromotions, in the same order.
func TestSameMaterialUnmoves(t *testing.T) {
	games, sparse := unmoveBudget()
	var all, same []Unmove
	for _, p := range unmovePositions(t, 3, games, sparse) {
		all = p.Unmoves(all[:0])
		same = p.SameMaterialUnmoves(same[:0])
		var want []Unmove
		for _, u := range all {
			if u.Captured() == NoPieceType && u.Move().Promotion() == NoPieceType {
				want = append(want, u)
			}
		}
		if !slices.Equal(same, want) {
			t.Fatalf("%s: SameMaterialUnmoves %v, want %v", p.FEN(), same, want)
		}
		par := p
		if len(same) > 0 {
			par = p.Unmake(same[0])
		}
		if par.MaterialKey() != p.MaterialKey() {
			t.Fatalf("%s: parent %s has other material", p.FEN(), par.FEN())
		}
	}
}

// TestCastlingUnmoves lists the castling parents the rules give for
// hand-built children.
func TestCastlingUnmoves(t *testing.T) {
	tests := []struct {
		fen  string
		want []string // the castling unmoves, as Unmove.String
	}{
		// O-O from a parent with K, or with KQ since the a1 rook is home.
		{"4k3/8/8/8/8/8/8/R4RK1 b - - 0 1", []string{"e1g1 +K", "e1g1 +KQ"}},
		// No a1 rook: only K.
		{"4k3/8/8/8/8/8/8/5RK1 b - - 0 1", []string{"e1g1 +K"}},
		// O-O-O: b1 must have been empty, and it is.
		{"4k3/8/8/8/8/8/8/2KR4 b - - 0 1", []string{"e1c1 +Q"}},
		// b1 occupied: the rook could not have passed.
		{"4k3/8/8/8/8/8/8/1NKR4 b - - 0 1", nil},
		// Black's rook on f8 attacks f1 in the parent: O-O was illegal.
		{"5r2/8/8/8/8/k7/8/5RK1 b - - 0 1", nil},
		// Black's rook on e8 would have checked the e1 king in the
		// parent: castling out of check was illegal.
		{"4r3/8/8/8/8/k7/8/5RK1 b - - 0 1", nil},
		// Black's rook on h8 attacks h1 only: legal, since the rook may
		// pass attacked squares.
		{"7r/8/8/5k2/8/8/8/2KR4 b - - 0 1", []string{"e1c1 +Q"}},
		// Black's castling: its rights are kept in the parent.
		{"2kr4/8/8/8/8/8/8/R3K2R w KQ - 0 1", []string{"e8c8 +q"}},
	}
	for _, tc := range tests {
		p := mustFEN(t, tc.fen)
		var got []string
		for _, u := range p.Unmoves(nil) {
			if u.Move().IsCastle() {
				got = append(got, u.String())
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: castling unmoves %v, want %v", tc.fen, got, tc.want)
		}
	}
}
