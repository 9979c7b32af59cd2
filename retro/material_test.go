package retro

import (
	"math/bits"
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

// randomEPPosition returns a random legal position of m whose side to move
// may capture en passant (chess keeps the square only then).
func randomEPPosition(rng *rand.Rand, m material) chess.Position {
	for {
		p := randomPosition(rng, m, chess.Color(rng.IntN(2)))
		files := epFiles(&p)
		if files == 0 {
			continue
		}
		var b [64]chess.Piece
		for occ := p.Occupied(); occ != 0; {
			sq := occ.PopLSB()
			b[sq] = p.PieceAt(sq)
		}
		ep := epSquare(p.SideToMove(), 7-bits.LeadingZeros8(files))
		if q, err := chess.FromBoard(b, p.SideToMove(), 0, ep, 0, 1); err == nil && q.EnPassant() == ep {
			return q
		}
	}
}

// TestEnPassantKey: an en-passant position and its mirror image (the only
// symmetry with pawns; the en-passant square mirrored with the board) have
// one key, the key decodes to one of the two, and the board part of the key
// is the index of the position without the right.
func TestEnPassantKey(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, name := range []string{"KPKP", "KRPKP", "KPPKP", "KPKPP"} {
		m := mustMat(t, name)
		ix, err := newIndexer(m)
		if err != nil {
			t.Fatal(err)
		}
		if !ix.bothPawns() {
			t.Fatalf("%s: bothPawns false", name)
		}
		for range 500 {
			p := randomEPPosition(rng, m)
			k, ok := ix.epKey(&p)
			if !ok {
				t.Fatalf("%s: no key for %s", name, p.FEN())
			}
			var b [64]chess.Piece
			for occ := p.Occupied(); occ != 0; {
				sq := occ.PopLSB()
				b[transform(sq, 1)] = p.PieceAt(sq)
			}
			q, err := chess.FromBoard(b, p.SideToMove(), 0, transform(p.EnPassant(), 1), 0, 1)
			if err != nil || q.EnPassant() == chess.NoSquare {
				t.Fatalf("%s: mirror image of %s is not an en-passant position: %v", name, p.FEN(), err)
			}
			if kq, _ := ix.epKey(&q); kq != k {
				t.Fatalf("%s: %s has key %d, its mirror %s has %d", name, p.FEN(), k, q.FEN(), kq)
			}
			d, err := ix.decodeEP(k)
			if err != nil {
				t.Fatalf("%s: key %d of %s: %v", name, k, p.FEN(), err)
			}
			if key(&d) != key(&p) && key(&d) != key(&q) {
				t.Fatalf("%s: key %d of %s decodes to %s", name, k, p.FEN(), d.FEN())
			}
			plain, err := chess.FromBoard(b, p.SideToMove(), 0, chess.NoSquare, 0, 1)
			if err != nil {
				t.Fatal(err)
			}
			if i, _ := ix.index(&plain); i != k>>3 {
				t.Fatalf("%s: key %d of %s has board index %d, the board without the right %d", name, k, p.FEN(), k>>3, i)
			}
		}
	}
	for _, name := range []string{"KPK", "KQKP", "KPPK"} {
		ix, err := newIndexer(mustMat(t, name))
		if err != nil {
			t.Fatal(err)
		}
		if ix.bothPawns() {
			t.Errorf("%s: bothPawns true", name)
		}
	}
}
