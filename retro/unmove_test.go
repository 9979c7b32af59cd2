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
