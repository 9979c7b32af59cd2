package chess

import (
	"testing"
)

// FuzzParseFEN: ParseFEN never panics, and every accepted FEN prints to a
// FEN that parses back to the same position and prints the same. Accepted
// positions also go through move generation (the count agreeing with the
// list), SAN, mirroring and unmoves (each parent leading back), which must
// not panic either.
func FuzzParseFEN(f *testing.F) {
	for _, s := range []string{
		StartFEN,
		"r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
		"8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
		"r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
		"rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
		"8/8/1k6/2b5/2pP4/8/5K2/8 b - d3 0 1",
		"5r1k/8/2p5/1n1pP3/4K3/r7/8/8 w - d6 0 2",
		"8/8/8/KPp4r/8/8/8/7k w - c6 0 2",
		"4k3/8/8/8/8/8/8/K7_w",
		"4k3/8/8/8/8/8/8/K7",
		"K7 w",
		"",
		"4k3/8/8/8/8/8/8/4K3 w - e6 0 1",
		"4k3/8/8/8/8/8/PPPPPPPP/QQ2K3 w - - 0 1",
		"8/8/8/8/8/8/8/8 w - - 0 1",
		"4k3/8/8/8/8/8/8/4K3 w - - 99999999999999999999 1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseFEN(s)
		if err != nil {
			return
		}
		out := p.FEN()
		q, err := ParseFEN(out)
		if err != nil {
			t.Fatalf("ParseFEN(%q) accepted, but its FEN %q does not parse: %v", s, out, err)
		}
		if q != p {
			t.Fatalf("ParseFEN(%q): position differs after a round trip through %q", s, out)
		}
		if q.FEN() != out {
			t.Fatalf("ParseFEN(%q): FEN %q prints back as %q", s, out, q.FEN())
		}
		m := p.Mirror()
		if mm := m.Mirror(); mm != p {
			t.Fatalf("%q: mirror twice differs", out)
		}
		if _, err := ParseFEN(m.FEN()); err != nil {
			t.Fatalf("%q: mirror %q does not parse: %v", out, m.FEN(), err)
		}
		moves := p.LegalMoves(nil)
		if n := p.CountLegalMoves(); n != len(moves) {
			t.Fatalf("%q: CountLegalMoves %d, LegalMoves lists %d", out, n, len(moves))
		}
		for _, mv := range moves {
			_ = p.SAN(mv)
			c := p.Play(mv)
			if _, err := ParseFEN(c.FEN()); err != nil {
				t.Fatalf("%q: child after %v, %q, does not parse: %v", out, mv, c.FEN(), err)
			}
		}
		child := fenNoClocks(&p)
		for _, u := range p.Unmoves(nil) {
			par := p.Unmake(u)
			if _, err := ParseFEN(par.FEN()); err != nil {
				t.Fatalf("%q: parent by %v, %q, does not parse: %v", out, u, par.FEN(), err)
			}
			found := false
			for _, mv := range par.LegalMoves(nil) {
				found = found || mv == u.Move()
			}
			c := par.Play(u.Move())
			if !found || fenNoClocks(&c) != child {
				t.Fatalf("%q: parent by %v, %q, does not lead back", out, u, par.FEN())
			}
		}
		_ = p.MaterialKey()
		_ = p.InsufficientMaterial()
		_ = p.IsCheckmate()
	})
}

// FuzzParseMove: ParseMove never panics, and an accepted move is legal and
// reads back the same from its UCI and its SAN spelling.
func FuzzParseMove(f *testing.F) {
	fens := []string{
		StartFEN,
		"r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
		"rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
		"5r1k/8/2p5/1n1pP3/4K3/r7/8/8 w - d6 0 2",
	}
	for i, s := range []string{"e4", "Nf3", "O-O", "0-0-0", "dxc8=Q+", "e1g1", "d7c8n", "exd6", "Kxd5", "a1a1", "Qh4#", "Nbd7"} {
		f.Add(uint8(i), s)
	}
	f.Fuzz(func(t *testing.T, which uint8, s string) {
		p, err := ParseFEN(fens[int(which)%len(fens)])
		if err != nil {
			t.Fatal(err)
		}
		m, err := p.ParseMove(s)
		if err != nil {
			return
		}
		var buf [256]Move
		found := false
		for _, l := range p.LegalMoves(buf[:0]) {
			found = found || l == m
		}
		if !found {
			t.Fatalf("ParseMove(%q) = %v, not a legal move", s, m)
		}
		for _, text := range []string{m.UCI(), p.SAN(m)} {
			if back, err := p.ParseMove(text); err != nil || back != m {
				t.Fatalf("ParseMove(%q) = %v, %v; want %v", text, back, err, m)
			}
		}
	})
}
