package chess

import (
	"bytes"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/tbfs/tbfs/chess/internal/attacktables"
)

// The walk below is the definition of a slider's attacks, the arbiter the
// table lookups are checked against.

var (
	rookDirs   = [4][2]int{{1, 0}, {-1, 0}, {0, 1}, {0, -1}}
	bishopDirs = [4][2]int{{1, 1}, {1, -1}, {-1, 1}, {-1, -1}}
)

func onBoard(f, r int) bool { return f >= 0 && f < 8 && r >= 0 && r < 8 }

// slideRay returns the squares a slider on sq reaches in direction d, stopping
// at (and including) the first occupied square.
func slideRay(sq Square, d [2]int, occ Bitboard) Bitboard {
	var b Bitboard
	f, r := sq.File()+d[0], sq.Rank()+d[1]
	for onBoard(f, r) {
		s := MakeSquare(f, r)
		b |= SquareBB(s)
		if occ.Has(s) {
			break
		}
		f, r = f+d[0], r+d[1]
	}
	return b
}

func slideAttacks(sq Square, dirs [4][2]int, occ Bitboard) Bitboard {
	var b Bitboard
	for _, d := range dirs {
		b |= slideRay(sq, d, occ)
	}
	return b
}

// relevantMask returns the squares whose occupancy matters for a slider on
// sq: its rays without the last square of each ray.
func relevantMask(sq Square, dirs [4][2]int) Bitboard {
	var b Bitboard
	for _, d := range dirs {
		f, r := sq.File()+d[0], sq.Rank()+d[1]
		for onBoard(f+d[0], r+d[1]) {
			b |= SquareBB(MakeSquare(f, r))
			f, r = f+d[0], r+d[1]
		}
	}
	return b
}

// TestAttackTablesGenerated: attacks_tables.go is what its generator
// writes now (run go generate after changing the generator). It proves the
// file is current, not that it is right: the tests below and the perft
// counts are the arbiters of the values.
func TestAttackTablesGenerated(t *testing.T) {
	if rookTableSize != attacktables.RookTableSize || bishopTableSize != attacktables.BishopTableSize {
		t.Fatalf("table sizes %d %d, generator's %d %d", rookTableSize, bishopTableSize, attacktables.RookTableSize, attacktables.BishopTableSize)
	}
	var want bytes.Buffer
	if err := attacktables.Build().WriteGo(&want, "chess"); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("attacks_tables.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatal("attacks_tables.go differs from the generator's output: run go generate ./chess")
	}
}

// TestSliderAttacks compares the magic lookups with walking the rays square
// by square (the definition of a slider's attacks) on random occupancies.
func TestSliderAttacks(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for sq := Square(0); sq < 64; sq++ {
		for range 300 {
			occ := Bitboard(rng.Uint64() & rng.Uint64())
			if got, want := RookAttacks(sq, occ), slideAttacks(sq, rookDirs, occ); got != want {
				t.Fatalf("RookAttacks(%v, %#x) = %#x, want %#x", sq, occ, got, want)
			}
			if got, want := BishopAttacks(sq, occ), slideAttacks(sq, bishopDirs, occ); got != want {
				t.Fatalf("BishopAttacks(%v, %#x) = %#x, want %#x", sq, occ, got, want)
			}
		}
	}
}

// TestSliderAttacksEverySubset compares the magic lookups with walking the
// rays for every occupancy of every square's relevant squares (the only
// squares a lookup sees), with the rest of the board filled and empty.
func TestSliderAttacksEverySubset(t *testing.T) {
	for sq := Square(0); sq < 64; sq++ {
		for _, sl := range []struct {
			name   string
			dirs   [4][2]int
			attack func(Square, Bitboard) Bitboard
		}{{"rook", rookDirs, RookAttacks}, {"bishop", bishopDirs, BishopAttacks}} {
			mask := relevantMask(sq, sl.dirs)
			var sub Bitboard
			for {
				for _, rest := range []Bitboard{0, ^mask} {
					occ := sub | rest
					if got, want := sl.attack(sq, occ), slideAttacks(sq, sl.dirs, occ); got != want {
						t.Fatalf("%s on %v, occupancy %#x: %#x, want %#x", sl.name, sq, occ, got, want)
					}
				}
				if sub = (sub - mask) & mask; sub == 0 {
					break
				}
			}
		}
	}
}

// TestBetweenAndLine checks the line tables against walking from one square
// towards the other: squares that share a rank, file or diagonal have the
// squares walked past between them and the whole walk, both ways, as their
// line; any other pair has neither.
func TestBetweenAndLine(t *testing.T) {
	all := [8][2]int{{1, 0}, {-1, 0}, {0, 1}, {0, -1}, {1, 1}, {1, -1}, {-1, 1}, {-1, -1}}
	for a := Square(0); a < 64; a++ {
		for b := Square(0); b < 64; b++ {
			var wantBetween, wantLine Bitboard
			for _, d := range all {
				if a == b || !slideRay(a, d, 0).Has(b) {
					continue
				}
				wantBetween = slideRay(a, d, SquareBB(b)) &^ SquareBB(b)
				wantLine = slideRay(a, d, 0) | slideRay(a, [2]int{-d[0], -d[1]}, 0) | SquareBB(a)
			}
			if between[a][b] != wantBetween || line[a][b] != wantLine {
				t.Fatalf("%v %v: between %#x line %#x, want %#x %#x", a, b, between[a][b], line[a][b], wantBetween, wantLine)
			}
		}
	}
}

// TestLeaperTables spot-checks the leaper tables against the rules.
func TestLeaperTables(t *testing.T) {
	sq := func(s string) Square {
		x, err := ParseSquare(s)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	bb := func(ss ...string) Bitboard {
		var b Bitboard
		for _, s := range ss {
			b |= SquareBB(sq(s))
		}
		return b
	}
	tests := []struct {
		name      string
		got, want Bitboard
	}{
		{"knight a1", KnightAttacks(A1), bb("b3", "c2")},
		{"knight e4", KnightAttacks(E4), bb("d6", "f6", "g5", "g3", "f2", "d2", "c3", "c5")},
		{"king h8", KingAttacks(H8), bb("g8", "g7", "h7")},
		{"white pawn a2", PawnAttacks(White, A2), bb("b3")},
		{"black pawn e5", PawnAttacks(Black, E5), bb("d4", "f4")},
		{"between a1 h8", between[A1][H8], bb("b2", "c3", "d4", "e5", "f6", "g7")},
		{"between a1 b3", between[A1][B3], 0},
		{"line c3 e5", line[C3][E5], bb("a1", "b2", "c3", "d4", "e5", "f6", "g7", "h8")},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s: %#x, want %#x", tc.name, tc.got, tc.want)
		}
	}
}
