package retro

import (
	"math/rand/v2"
	"testing"

	"github.com/tbfs/tbfs/chess"
)

// TestUnmovesMatchBruteForce referees the chess package's predecessor
// generator, which the engine and the solver rely on: for random positions
// of small materials, random game positions and hand-picked rule edges,
// the parents from Unmoves+Unmake must be exactly the parents the
// brute-force search (bruteParents, arbitrated by forward move generation)
// finds, and SameMaterialUnmoves exactly those that keep the material.
func TestUnmovesMatchBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var ps []chess.Position
	count := 60
	if testing.Short() || raceEnabled {
		count = 10
	}
	for _, name := range []string{"KQK", "KRK", "KBNK", "KPK", "KPKP", "KRKP", "KQKR", "KPPK"} {
		m := mustMat(t, name)
		for range count {
			ps = append(ps, randomPosition(rng, m, chess.Color(rng.IntN(2))))
		}
	}
	// En-passant positions (whose only parents are the double push's
	// origins) and the same boards without the right (which the double
	// push cannot have produced): SolveMaterial relies on both with pawns
	// on both sides.
	for _, name := range []string{"KPKP", "KRPKP", "KPPKP"} {
		m := mustMat(t, name)
		for range count {
			p := randomEPPosition(rng, m)
			plain, err := chess.FromBoard(boardOf(&p), p.SideToMove(), 0, chess.NoSquare, 0, 1)
			if err != nil {
				t.Fatal(err)
			}
			ps = append(ps, p, plain)
		}
	}
	for g := range count {
		p := chess.StartPosition()
		n := 10 + rng.IntN(60)
		for range n {
			ms := p.LegalMoves(nil)
			if len(ms) == 0 {
				break
			}
			p = p.Play(ms[rng.IntN(len(ms))])
		}
		_ = g
		ps = append(ps, p)
	}
	for _, fen := range []string{
		"4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1",    // en passant available
		"4k3/8/3P4/8/8/8/8/4K3 b - - 0 1",      // after an en-passant capture
		"3Qk3/8/8/8/8/8/8/4K3 b - - 0 1",       // after a promotion
		"2Q1k3/8/8/8/8/8/8/4K3 b - - 0 1",      // after a capturing promotion
		"r3k2r/8/8/8/8/8/8/R4RK1 b kq - 1 1",   // after castling
		"r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1", // rights intact
		foolsMate,
	} {
		ps = append(ps, mustFEN(t, fen))
	}
	for _, child := range ps {
		want := map[posKey]chess.Position{}
		for _, p := range bruteParents(child) {
			want[key(&p)] = p
		}
		got := map[posKey]chess.Position{}
		for _, u := range child.Unmoves(nil) {
			p := child.Unmake(u)
			got[key(&p)] = p
		}
		same := map[posKey]bool{}
		for _, u := range child.SameMaterialUnmoves(nil) {
			p := child.Unmake(u)
			same[key(&p)] = true
		}
		for k, p := range want {
			if _, ok := got[k]; !ok {
				t.Errorf("child %s: parent %s missing from Unmoves", child.FEN(), p.FEN())
			}
			if materialOf(&p).equal(materialOf(&child)) != same[k] {
				t.Errorf("child %s: parent %s: in SameMaterialUnmoves = %v", child.FEN(), p.FEN(), same[k])
			}
		}
		for k, p := range got {
			if _, ok := want[k]; !ok {
				t.Errorf("child %s: Unmoves gives %s, which has no legal move to it", child.FEN(), p.FEN())
			}
		}
	}
}

// boardOf returns p's board as an array.
func boardOf(p *chess.Position) [64]chess.Piece {
	var b [64]chess.Piece
	for occ := p.Occupied(); occ != 0; {
		sq := occ.PopLSB()
		b[sq] = p.PieceAt(sq)
	}
	return b
}

// TestSolverParentsReplay checks the relation SolveMaterial's counts rely
// on, at the level of its nodes (canonical index, or side-table key for an
// en-passant position), with pawns on both sides: every parent node the
// solver derives from SameMaterialUnmoves has a legal move (by forward move
// generation, the arbiter) to the child's node, and every child node a
// position's moves reach inside the material lists the position's node
// among its parents. Positions with and without en-passant rights, and
// double pushes that do and do not give one, are all covered.
func TestSolverParentsReplay(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	count := 300
	if testing.Short() || raceEnabled {
		count = 60
	}
	for _, name := range []string{"KPKP", "KRPKP"} {
		m := mustMat(t, name)
		ix, err := newIndexer(m)
		if err != nil {
			t.Fatal(err)
		}
		nodeOf := func(p *chess.Position) int64 {
			t.Helper()
			k, ok := ix.nodeKey(p)
			if !ok {
				t.Fatalf("%s: %s has no node", name, p.FEN())
			}
			return k
		}
		// parents are the nodes the solver's expand step derives.
		parents := func(p *chess.Position) map[int64]bool {
			t.Helper()
			var us []chess.Unmove
			ns, err := appendParents(nil, p, &us, ix)
			if err != nil {
				t.Fatal(err)
			}
			out := map[int64]bool{}
			for _, n := range ns {
				if out[n] {
					t.Fatalf("%s: parent node %d of %s listed twice", name, n, p.FEN())
				}
				out[n] = true
			}
			return out
		}
		var ps []chess.Position
		for range count {
			ep := randomEPPosition(rng, m)
			plain, err := chess.FromBoard(boardOf(&ep), ep.SideToMove(), 0, chess.NoSquare, 0, 1)
			if err != nil {
				t.Fatal(err)
			}
			ps = append(ps, ep, plain, randomPosition(rng, m, chess.Color(rng.IntN(2))))
		}
		// Positions with a double push available, whose child may carry
		// the right.
		for len(ps) < 4*count {
			p := randomPosition(rng, m, chess.Color(rng.IntN(2)))
			for _, mv := range p.LegalMoves(nil) {
				if c := p.Play(mv); c.EnPassant() != chess.NoSquare {
					ps = append(ps, p)
					break
				}
			}
		}
		for _, p := range ps {
			pn := nodeOf(&p)
			pp := parents(&p)
			for qn := range pp {
				q := decodeNode(t, ix, qn)
				found := false
				for _, mv := range q.LegalMoves(nil) {
					if q.IsCapture(mv) || mv.Promotion() != chess.NoPieceType {
						continue
					}
					if c := q.Play(mv); nodeOf(&c) == pn {
						found = true
						break
					}
				}
				if !found {
					t.Errorf("%s: parent %s (node %d) of %s has no move to it", name, q.FEN(), qn, p.FEN())
				}
			}
			for _, mv := range p.LegalMoves(nil) {
				if p.IsCapture(mv) || mv.Promotion() != chess.NoPieceType {
					continue
				}
				c := p.Play(mv)
				if _, ok := parents(&c)[pn]; !ok {
					t.Errorf("%s: %s after %s: %s is not among the child's parents", name, c.FEN(), mv.UCI(), p.FEN())
				}
			}
		}
	}
}

// decodeNode returns the position of a nodeKey.
func decodeNode(t *testing.T, ix *indexer, n int64) chess.Position {
	t.Helper()
	if n >= ix.size {
		p, err := ix.decodeEP(n - ix.size)
		if err != nil {
			t.Fatalf("node %d: %v", n, err)
		}
		return p
	}
	var b [64]chess.Piece
	side, ok := ix.decode(n, &b)
	if !ok {
		t.Fatalf("node %d does not decode", n)
	}
	p, err := chess.FromBoard(b, side, 0, chess.NoSquare, 0, 1)
	if err != nil {
		t.Fatalf("node %d: %v", n, err)
	}
	return p
}
