package retro

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/internal/testkit/chesstboracle"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// testSolver caches solves across tests, sub-materials included (KBNK takes
// a while, and KPKP solves fourteen four-man materials on the way), so
// that a later test asking for a sub-material gets the table the recursive
// solve used.
var (
	solvedMu   sync.Mutex
	testSolver = &solver{opts: Options{Workers: runtime.GOMAXPROCS(0)}, tables: map[string]*Table{}}
)

func solved(t *testing.T, material string) *Table {
	t.Helper()
	solvedMu.Lock()
	defer solvedMu.Unlock()
	m, err := parseMaterial(material)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := testSolver.solve(context.Background(), m)
	if err != nil {
		t.Fatalf("SolveMaterial(%s): %v", material, err)
	}
	return tb
}

// materialsUnderTest are the materials plus KQKR (both sides with
// pieces, conversions into a colour-flipped sub-material) and KPKP (pawns
// on both sides, so en passant); the 4-man ones' 5.2M indices are left to
// runs without the race detector, and KPKP's 16.8M (with its fourteen
// four-man sub-materials) to runs without -short too.
func materialsUnderTest() []string {
	switch {
	case raceEnabled:
		return []string{"KQK", "KRK", "KPK"}
	case testing.Short():
		return []string{"KQK", "KRK", "KPK", "KBNK", "KQKR"}
	}
	return []string{"KQK", "KRK", "KPK", "KBNK", "KQKR", "KPKP"}
}

// oracleValue turns an oracle row into the value our tables give: the wdl
// class decides win, loss or draw (cursed and blessed results still carry
// their mate distance), dtm the distance.
func oracleValue(t *testing.T, r chesstboracle.Row) Value {
	t.Helper()
	wdl, _, dtm := r.Want(t)
	if dtm == nil {
		t.Fatalf("%s: no dtm in the oracle row", r.Where)
	}
	switch {
	case wdl > 0:
		return Win(uint32(*dtm))
	case wdl < 0:
		return Loss(uint32(-*dtm))
	}
	return Draw
}

// TestSolveMaterialOracle compares every oracle row of the solved materials
// with the table.
func TestSolveMaterialOracle(t *testing.T) {
	compareOracle(t, chesstboracle.Read(t, testenv.Shared(t, "chesstb", "oracle", "probe.tsv")))
}

// TestSolveMaterialFixture does the same with the committed sample of
// oracle rows, so that a clone without ../shared checks the solver too.
func TestSolveMaterialFixture(t *testing.T) {
	compareOracle(t, chesstboracle.Read(t, testenv.Testdata(t, "retro", "oracle_sample.tsv")))
}

func compareOracle(t *testing.T, rows []chesstboracle.Row) {
	for _, mat := range materialsUnderTest() {
		t.Run(mat, func(t *testing.T) {
			tb := solved(t, mat)
			m, _ := parseMaterial(mat)
			checked := 0
			for _, r := range rows {
				p := mustFEN(t, r.FEN)
				pm := materialOf(&p)
				if !pm.equal(m) && !pm.equal(m.mirrored()) {
					continue
				}
				got, err := tb.Probe(p)
				if err != nil {
					t.Errorf("%s: %v", r.FEN, err)
					continue
				}
				if want := oracleValue(t, r); got != want {
					t.Errorf("%s %s: table %v, oracle %v (%s dtm %s)", r.Where, r.FEN, got, want, r.WDL, r.DTM)
				}
				checked++
			}
			if checked == 0 {
				t.Fatalf("no oracle row of %s", mat)
			}
			st := tb.Stats()
			t.Logf("%s: %d oracle rows agree; %d positions: %d wins, %d losses, %d draws, longest win %d plies",
				mat, checked, st.Positions, st.Wins, st.Losses, st.Draws, st.LongestWin)
		})
	}
}

// TestSolveMaterialConsistent proves each table exact without trusting the
// unmove generator: every position's value is recomputed from its legal
// children by forward move generation (children in the material from the
// table, conversions from the sub-tables), and must equal the stored one.
// A labelling that passes this check everywhere is the true distance to mate
// (by induction on the distance, given exact sub-tables), so this is an
// exhaustive proof of the whole table.
func TestSolveMaterialConsistent(t *testing.T) {
	for _, mat := range materialsUnderTest() {
		t.Run(mat, func(t *testing.T) {
			tb := solved(t, mat)
			m, _ := parseMaterial(mat)
			var subs Tables
			for _, sm := range subMaterials(m) {
				if sm.men() > 2 {
					subs = append(subs, solved(t, sm.String()))
				}
			}
			n, bad := 0, 0
			tb.Each(func(p chess.Position, v Value) bool {
				n++
				want := minimax(t, &p, func(c chess.Position) Value {
					if bareKings(&c) {
						return Draw
					}
					if _, ok := tb.lookup(&c); ok {
						cv, err := tb.Probe(c)
						if err != nil {
							t.Fatal(err)
						}
						return cv
					}
					cv, err := subs.ProbeDTM(context.Background(), c)
					if err != nil {
						t.Fatal(err)
					}
					return cv
				})
				if want != v {
					bad++
					if bad <= 10 {
						t.Errorf("%s: stored %v, children say %v", p.FEN(), v, want)
					}
				}
				return true
			})
			if bad > 0 {
				t.Errorf("%d of %d positions inconsistent", bad, n)
			}
			if n == 0 {
				t.Fatal("empty table")
			}
		})
	}
}

// minimax is the value of p from its children's values by the rules:
// checkmate is Loss(0), stalemate a draw, a move to a Loss(n) child wins in
// n+1 (the nearest), all children Win(n) lose in 1+max n, otherwise draw.
func minimax(t *testing.T, p *chess.Position, child func(chess.Position) Value) Value {
	moves := p.LegalMoves(nil)
	if len(moves) == 0 {
		if p.InCheck() {
			return Loss(0)
		}
		return Draw
	}
	best, win := uint32(0), false
	var worst uint32
	all := true
	for _, m := range moves {
		cv := child(p.Play(m))
		switch cv.Kind {
		case LossKind:
			if !win || cv.Plies+1 < best {
				best = cv.Plies + 1
			}
			win = true
			all = false
		case WinKind:
			worst = max(worst, cv.Plies)
		case DrawKind:
			all = false
		default:
			t.Fatalf("child of %s after %s: %v", p.FEN(), m.UCI(), cv)
		}
	}
	switch {
	case win:
		return Win(best)
	case all:
		return Loss(worst + 1)
	}
	return Draw
}

func TestSolveMaterialErrors(t *testing.T) {
	for _, tc := range []struct {
		mat  string
		want error
	}{
		{"", ErrMaterial},
		{"KQ", ErrMaterial},
		{"QKK", ErrMaterial},
		{"KXK", ErrMaterial},
		{"KKK", ErrMaterial},
		{"KQRBNK", ErrUnsupported},
	} {
		_, err := SolveMaterial(context.Background(), tc.mat, Options{})
		if !errors.Is(err, tc.want) {
			t.Errorf("SolveMaterial(%q) = %v, want %v", tc.mat, err, tc.want)
		}
	}
}

func TestSolveMaterialCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := SolveMaterial(ctx, "KQK", Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled solve: %v, want context.Canceled", err)
	}
}

func TestSolveMaterialProgress(t *testing.T) {
	var got []Progress
	tb, err := SolveMaterial(context.Background(), "KRK", Options{Progress: func(p Progress) { got = append(got, p) }, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	phases := map[string]bool{}
	var last Progress
	for _, p := range got {
		if p.Material == "KRK" {
			phases[p.Phase] = true
			if p.Done < last.Done {
				t.Errorf("progress went backwards: %+v after %+v", p, last)
			}
			last = p
		}
	}
	if !phases["enumerate"] || !phases["propagate"] {
		t.Errorf("phases reported: %v", phases)
	}
	if last.Done == 0 || last.Total < last.Done || last.Rate <= 0 {
		t.Errorf("final progress %+v", last)
	}
	if tb.Material() != "KRK" {
		t.Errorf("Material() = %q", tb.Material())
	}
}

// TestTableProbeErrors: positions outside the table are errors, not values.
func TestTableProbeErrors(t *testing.T) {
	tb := solved(t, "KQK")
	for _, fen := range []string{
		"8/8/8/8/8/8/8/K1k5 w - - 0 1",    // bare kings
		"4k3/8/8/8/8/8/8/R3K3 w Q - 0 1",  // castling rights, other material
		"4k3/8/8/8/8/8/8/4K2R w K - 0 1",  // KRK with castling
		"3qk3/8/8/8/8/8/8/3QK3 w - - 0 1", // KQKQ
		"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
	} {
		if v, err := tb.Probe(mustFEN(t, fen)); err == nil {
			t.Errorf("Probe(%s) = %v, want an error", fen, v)
		}
	}
	// The colour-flipped material is answered.
	p := mustFEN(t, "q7/8/8/8/8/8/8/k1K5 b - - 0 1")
	if _, err := tb.Probe(p); err != nil {
		t.Errorf("Probe(mirrored KQK): %v", err)
	}
}
