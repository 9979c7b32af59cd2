package syzygy

import (
	"context"
	"testing"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/internal/testkit/chesstboracle"
	"github.com/tbfs/tbfs/internal/testkit/syzygyoracle"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// oracleRow is one line of probe.tsv, written by Fathom (the arbiter of
// every value test here; see ../shared/syzygy/README.md), as
// internal/testkit/syzygyoracle reads it for every package that sweeps it.
type oracleRow = syzygyoracle.Row

// readOracle reads an oracle file of probe.tsv's form.
func readOracle(t testing.TB, path string) []oracleRow { return syzygyoracle.Read(t, path) }

// tableWDL is the table WDL (clock 0) that an oracle wdl at some clock and
// its DTZ imply: the table is cursed exactly when |DTZ| > 100.
func tableWDL(wdl, dtz int) int {
	switch {
	case wdl > 0 && dtz > 100:
		return 1
	case wdl > 0:
		return 2
	case wdl < 0 && dtz > 100:
		return -1
	case wdl < 0:
		return -2
	}
	return 0
}

func openDir(t testing.TB, dir string) *Tablebase {
	t.Helper()
	return openWith(t, Options{}, mmapSource(t, dir))
}

func sharedRows(t *testing.T) (*Tablebase, []oracleRow) {
	tables := testenv.Shared(t, "syzygy", "tables")
	rows := readOracle(t, testenv.Shared(t, "syzygy", "oracle", "probe.tsv"))
	if raceEnabled {
		rows = chesstboracle.Sample(rows, 600, true)
	}
	return openDir(t, tables), rows
}

func mustFEN(t testing.TB, fen string) chess.Position {
	t.Helper()
	p, err := chess.ParseFEN(fen)
	if err != nil {
		t.Fatalf("%s: %v", fen, err)
	}
	return p
}

// checkWDLRows compares WDL at the root and after every move with what the
// oracle's values imply for the table (clock 0): the root's wdl and dtz
// columns, and each move's wdl and dtz, which describe the child from the
// mover's side (a quiet move's 101 is a child at DTZ 100, still a loss;
// a zeroing move's 101 is a cursed one: syzygyoracle.Move.Child).
func checkWDLRows(t *testing.T, tb *Tablebase, rows []oracleRow) {
	ctx := context.Background()
	bad := 0
	for _, r := range rows {
		pos := mustFEN(t, r.FEN)
		want := tableWDL(r.WDL, r.DTZ)
		got, err := tb.WDL(ctx, &pos)
		if err != nil || got != want {
			bad++
			if bad < 20 {
				t.Errorf("line %d %s: WDL = %d, %v; oracle implies %d", r.Line, r.FEN, got, err, want)
			}
			continue
		}
		for _, m := range r.Moves {
			mv, err := pos.ParseMove(m.UCI)
			if err != nil {
				t.Fatalf("line %d: %v", r.Line, err)
			}
			child := pos.Play(mv)
			want, _, _ := m.Child(pos.IsZeroing(mv), child.IsCheckmate())
			got, err := tb.WDL(ctx, &child)
			if err != nil || got != want {
				bad++
				if bad < 20 {
					t.Errorf("line %d %s after %s: WDL = %d, %v; oracle implies %d", r.Line, r.FEN, m.UCI, got, err, want)
				}
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d WDL mismatches", bad)
	}
}

// TestSharedOracleWDL sweeps the whole of probe.tsv (arbiter: Fathom).
func TestSharedOracleWDL(t *testing.T) {
	tb, rows := sharedRows(t)
	checkWDLRows(t, tb, rows)
}

func sign(v int) int {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}

// checkDTZRows compares DTZ at the root with the oracle's dtz column (its
// sign from the wdl column), and after every move that does not zero the
// clock with the move's dtz less the ply of the move itself (README: such a
// move gets |DTZ of the child| + 1). A checkmated side gets -1 (python-chess's
// convention, which the README quotes); the oracle's rows say dtz 0 there and
// its mating moves say 1.
func checkDTZRows(t *testing.T, tb *Tablebase, rows []oracleRow) {
	ctx := context.Background()
	bad, compared := 0, 0
	report := func(format string, args ...any) {
		bad++
		if bad < 20 {
			t.Errorf(format, args...)
		}
	}
	for _, r := range rows {
		pos := mustFEN(t, r.FEN)
		want := sign(r.WDL) * r.DTZ
		if pos.IsCheckmate() {
			want = -1
		}
		compared++
		got, err := tb.DTZ(ctx, &pos)
		if err != nil || got != want {
			report("line %d %s: DTZ = %d, %v; oracle %d", r.Line, r.FEN, got, err, want)
			continue
		}
		for _, m := range r.Moves {
			mv, err := pos.ParseMove(m.UCI)
			if err != nil {
				t.Fatalf("line %d: %v", r.Line, err)
			}
			if pos.IsZeroing(mv) {
				continue
			}
			child := pos.Play(mv)
			want := 0
			switch {
			case child.IsCheckmate():
				want = -1
			case m.DTZ != 0:
				want = -sign(m.WDL) * (m.DTZ - 1)
			}
			compared++
			got, err := tb.DTZ(ctx, &child)
			if err != nil || got != want {
				report("line %d %s after %s: DTZ = %d, %v; oracle implies %d", r.Line, r.FEN, m.UCI, got, err, want)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d DTZ mismatches", bad)
	}
	t.Logf("%d rows, %d DTZ values compared", len(rows), compared)
}

// TestSharedOracleDTZ sweeps the whole of probe.tsv (arbiter: Fathom).
func TestSharedOracleDTZ(t *testing.T) {
	tb, rows := sharedRows(t)
	checkDTZRows(t, tb, rows)
}

// checkRootRows compares Root with Fathom's tb_probe_root on each row: the
// root wdl and dtz, terminal flags, every move in Fathom's order with its
// wdl and dtz, and the best move (the same move for wins and losses; for
// draws, a move the oracle lists as drawing, since any is as good).
func checkRootRows(t *testing.T, tb *Tablebase, rows []oracleRow) {
	ctx := context.Background()
	bad, sameDraw, draws := 0, 0, 0
	report := func(format string, args ...any) {
		bad++
		if bad < 20 {
			t.Errorf(format, args...)
		}
	}
	for _, r := range rows {
		pos := mustFEN(t, r.FEN)
		got, err := tb.Root(ctx, &pos)
		if err != nil {
			report("line %d %s: %v", r.Line, r.FEN, err)
			continue
		}
		if r.Terminal() {
			mate := r.WDL == -2
			if got.Checkmate != mate || got.Stalemate == mate || len(got.Moves) != 0 || got.WDL != r.WDL || got.DTZ != 0 || got.Best != chess.NoMove {
				report("line %d %s: terminal %+v; oracle wdl %d", r.Line, r.FEN, got, r.WDL)
			}
			continue
		}
		if got.WDL != r.WDL || got.DTZ != r.DTZ || got.Checkmate || got.Stalemate {
			report("line %d %s: root %d/%d; oracle %d/%d", r.Line, r.FEN, got.WDL, got.DTZ, r.WDL, r.DTZ)
		}
		if len(got.Moves) != len(r.Moves) {
			report("line %d %s: %d moves; oracle %d", r.Line, r.FEN, len(got.Moves), len(r.Moves))
			continue
		}
		drawing := map[string]bool{}
		for i, m := range r.Moves {
			g := got.Moves[i]
			if g.Move.UCI() != m.UCI || g.WDL != m.WDL || g.DTZ != m.DTZ {
				report("line %d %s: move %d %s:%d:%d; oracle %s:%d:%d", r.Line, r.FEN, i, g.Move.UCI(), g.WDL, g.DTZ, m.UCI, m.WDL, m.DTZ)
			}
			if m.DTZ == 0 {
				drawing[m.UCI] = true
			}
		}
		if r.WDL == 0 {
			draws++
			if !drawing[got.Best.UCI()] {
				report("line %d %s: best %s is not a drawing move", r.Line, r.FEN, got.Best.UCI())
			}
			if got.Best.UCI() == r.Best {
				sameDraw++
			}
		} else if got.Best.UCI() != r.Best {
			report("line %d %s: best %s; oracle %s", r.Line, r.FEN, got.Best.UCI(), r.Best)
		}
	}
	if bad > 0 {
		t.Errorf("%d root mismatches", bad)
	}
	t.Logf("%d rows; Fathom's own drawing move chosen in %d of %d draws", len(rows), sameDraw, draws)
}

// TestSharedOracleRoot sweeps the whole of probe.tsv (arbiter: Fathom).
func TestSharedOracleRoot(t *testing.T) {
	tb, rows := sharedRows(t)
	checkRootRows(t, tb, rows)
}

// TestFixtureOracle runs the three sweeps over the committed fixture tables
// and their rows of the oracle (testdata/syzygy/README.md), so a fresh
// clone without ../shared checks values too (arbiter: Fathom).
func TestFixtureOracle(t *testing.T) {
	tb := openDir(t, testenv.Testdata(t, "syzygy"))
	rows := readOracle(t, testenv.Testdata(t, "syzygy", "probe.tsv"))
	if len(rows) < 1000 {
		t.Fatalf("only %d fixture rows", len(rows))
	}
	t.Run("WDL", func(t *testing.T) { checkWDLRows(t, tb, rows) })
	t.Run("DTZ", func(t *testing.T) { checkDTZRows(t, tb, rows) })
	t.Run("Root", func(t *testing.T) { checkRootRows(t, tb, rows) })
}
