package retro

import (
	"math/rand/v2"
	"testing"

	"github.com/tbfs/tbfs/chess"
)

func TestParseMaterial(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"KQK", "KQK"}, {"KQvK", "KQK"}, {"kbnk", "KBNK"}, {"KNBK", "KBNK"}, {"KvKQ", "KKQ"}, {"KRKP", "KRKP"}, {"KK", "KK"},
	} {
		m, err := parseMaterial(tc.in)
		if err != nil {
			t.Errorf("parseMaterial(%q): %v", tc.in, err)
			continue
		}
		if m.String() != tc.want {
			t.Errorf("parseMaterial(%q) = %s, want %s", tc.in, m, tc.want)
		}
	}
	for _, bad := range []string{"", "K", "QK", "KQ", "KXK", "KKK", "KQvKvK"} {
		if _, err := parseMaterial(bad); err == nil {
			t.Errorf("parseMaterial(%q) succeeded", bad)
		}
	}
	if got := mustMat(t, "KvKQ").canonical().String(); got != "KQK" {
		t.Errorf("canonical(KvKQ) = %s", got)
	}
}

func mustMat(t *testing.T, s string) material {
	t.Helper()
	m, err := parseMaterial(s)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// randomPosition places m's men at random until the placement is a legal
// position with the given side to move.
func randomPosition(rng *rand.Rand, m material, side chess.Color) chess.Position {
	for {
		var b [64]chess.Piece
		place := func(pc chess.Piece) bool {
			sq := chess.Square(rng.IntN(64))
			if b[sq] != chess.NoPiece {
				return false
			}
			b[sq] = pc
			return true
		}
		ok := place(chess.MakePiece(chess.White, chess.King)) && place(chess.MakePiece(chess.Black, chess.King))
		for c := range 2 {
			for _, pt := range m.side[c] {
				ok = ok && place(chess.MakePiece(chess.Color(c), pt))
			}
		}
		if !ok {
			continue
		}
		if p, err := chess.FromBoard(b, side, 0, chess.NoSquare, 0, 1); err == nil {
			return p
		}
	}
}

// symmetric returns p transformed by symmetry t (see transform).
func symmetric(t *testing.T, p chess.Position, tr uint8) (chess.Position, bool) {
	t.Helper()
	var b [64]chess.Piece
	for occ := p.Occupied(); occ != 0; {
		sq := occ.PopLSB()
		b[transform(sq, tr)] = p.PieceAt(sq)
	}
	q, err := chess.FromBoard(b, p.SideToMove(), 0, chess.NoSquare, 0, 1)
	return q, err == nil
}

// TestIndexSymmetry: every symmetric image of a position has the same
// index (the board's symmetries preserve chess without castling, and
// without pawns all eight of them), the index decodes to a position with
// that index, and distinct classes get distinct indices.
func TestIndexSymmetry(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, name := range []string{"KQK", "KBNK", "KNNK", "KPK", "KRKP", "KPKP", "KQKR", "KK"} {
		m := mustMat(t, name)
		ix, err := newIndexer(m)
		if err != nil {
			t.Fatal(err)
		}
		syms := []uint8{0, 1, 2, 3, 4, 5, 6, 7}
		if m.hasPawns() {
			syms = []uint8{0, 1}
		}
		for range 2000 {
			p := randomPosition(rng, m, chess.Color(rng.IntN(2)))
			i, ok := ix.index(&p)
			if !ok {
				t.Fatalf("%s: no index for %s", name, p.FEN())
			}
			for _, s := range syms {
				q, ok := symmetric(t, p, s)
				if !ok {
					t.Fatalf("symmetry %d of %s is not legal", s, p.FEN())
				}
				if j, _ := ix.index(&q); j != i {
					t.Fatalf("%s: %s has index %d, its image %s under %d has %d", name, p.FEN(), i, q.FEN(), s, j)
				}
			}
			var b [64]chess.Piece
			side, ok := ix.decode(i, &b)
			if !ok {
				t.Fatalf("%s: index %d of %s does not decode", name, i, p.FEN())
			}
			d, err := chess.FromBoard(b, side, 0, chess.NoSquare, 0, 1)
			if err != nil {
				t.Fatalf("%s: index %d decodes to an illegal board: %v", name, i, err)
			}
			if j, _ := ix.index(&d); j != i {
				t.Fatalf("%s: %s decodes from %d but indexes to %d", name, d.FEN(), i, j)
			}
			found := false
			for _, s := range syms {
				if q, _ := symmetric(t, p, s); key(&q) == key(&d) {
					found = true
				}
			}
			if !found {
				t.Fatalf("%s: index %d of %s decodes to %s, not a symmetric image", name, i, p.FEN(), d.FEN())
			}
		}
	}
}
