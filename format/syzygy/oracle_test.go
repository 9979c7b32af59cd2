package syzygy

import (
	"bufio"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/internal/testenv"
	"github.com/tbfs/tbfs/source/mmap"
)

// oracleMove is one entry of an oracle row's moves column: Fathom's
// per-move values at the root clock.
type oracleMove struct {
	uci      string
	wdl, dtz int
}

// oracleRow is one line of probe.tsv, written by Fathom (the arbiter of
// every value test here; see ../shared/syzygy/README.md).
type oracleRow struct {
	line     int
	fen      string
	wdl, dtz int
	best     string
	moves    []oracleMove
}

func (r oracleRow) terminal() bool { return r.best == "-" }

func readOracle(t testing.TB, path string) []oracleRow {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []oracleRow
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	line := 0
	for sc.Scan() {
		line++
		if line == 1 {
			continue
		}
		c := strings.Split(sc.Text(), "\t")
		if len(c) != 5 {
			t.Fatalf("%s:%d: %d columns", path, line, len(c))
		}
		r := oracleRow{line: line, fen: c[0], best: c[3]}
		r.wdl, err = strconv.Atoi(c[1])
		if err == nil {
			r.dtz, err = strconv.Atoi(c[2])
		}
		if err != nil {
			t.Fatalf("%s:%d: %v", path, line, err)
		}
		if c[4] != "-" {
			for _, f := range strings.Fields(c[4]) {
				p := strings.Split(f, ":")
				w, err1 := strconv.Atoi(p[1])
				d, err2 := strconv.Atoi(p[2])
				if len(p) != 3 || err1 != nil || err2 != nil {
					t.Fatalf("%s:%d: bad move %q", path, line, f)
				}
				r.moves = append(r.moves, oracleMove{p[0], w, d})
			}
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

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
	src, err := mmap.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	tb, err := Open(Options{}, src)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	return tb
}

func sharedRows(t *testing.T) (*Tablebase, []oracleRow) {
	tables := testenv.Shared(t, "syzygy", "tables")
	rows := readOracle(t, testenv.Shared(t, "syzygy", "oracle", "probe.tsv"))
	if raceEnabled {
		rows = sampleRows(rows, 600)
	}
	return openDir(t, tables), rows
}

func sampleRows(rows []oracleRow, n int) []oracleRow {
	if len(rows) <= n {
		return rows
	}
	var out []oracleRow
	step := len(rows) / n
	for i := 0; i < len(rows); i += step {
		out = append(out, rows[i])
	}
	return out
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
// mover's side.
func checkWDLRows(t *testing.T, tb *Tablebase, rows []oracleRow) {
	ctx := context.Background()
	bad := 0
	for _, r := range rows {
		pos := mustFEN(t, r.fen)
		want := tableWDL(r.wdl, r.dtz)
		got, err := tb.WDL(ctx, &pos)
		if err != nil || got != want {
			bad++
			if bad < 20 {
				t.Errorf("line %d %s: WDL = %d, %v; oracle implies %d", r.line, r.fen, got, err, want)
			}
			continue
		}
		for _, m := range r.moves {
			mv, err := pos.ParseMove(m.uci)
			if err != nil {
				t.Fatalf("line %d: %v", r.line, err)
			}
			child := pos.Play(mv)
			want := -tableWDL(m.wdl, m.dtz)
			got, err := tb.WDL(ctx, &child)
			if err != nil || got != want {
				bad++
				if bad < 20 {
					t.Errorf("line %d %s after %s: WDL = %d, %v; oracle implies %d", r.line, r.fen, m.uci, got, err, want)
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
		pos := mustFEN(t, r.fen)
		want := sign(r.wdl) * r.dtz
		if pos.IsCheckmate() {
			want = -1
		}
		compared++
		got, err := tb.DTZ(ctx, &pos)
		if err != nil || got != want {
			report("line %d %s: DTZ = %d, %v; oracle %d", r.line, r.fen, got, err, want)
			continue
		}
		for _, m := range r.moves {
			mv, err := pos.ParseMove(m.uci)
			if err != nil {
				t.Fatalf("line %d: %v", r.line, err)
			}
			if pos.IsZeroing(mv) {
				continue
			}
			child := pos.Play(mv)
			want := 0
			switch {
			case child.IsCheckmate():
				want = -1
			case m.dtz != 0:
				want = -sign(m.wdl) * (m.dtz - 1)
			}
			compared++
			got, err := tb.DTZ(ctx, &child)
			if err != nil || got != want {
				report("line %d %s after %s: DTZ = %d, %v; oracle implies %d", r.line, r.fen, m.uci, got, err, want)
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
		pos := mustFEN(t, r.fen)
		got, err := tb.Root(ctx, &pos)
		if err != nil {
			report("line %d %s: %v", r.line, r.fen, err)
			continue
		}
		if r.terminal() {
			mate := r.wdl == -2
			if got.Checkmate != mate || got.Stalemate == mate || len(got.Moves) != 0 || got.WDL != r.wdl || got.DTZ != 0 || got.Best != chess.NoMove {
				report("line %d %s: terminal %+v; oracle wdl %d", r.line, r.fen, got, r.wdl)
			}
			continue
		}
		if got.WDL != r.wdl || got.DTZ != r.dtz || got.Checkmate || got.Stalemate {
			report("line %d %s: root %d/%d; oracle %d/%d", r.line, r.fen, got.WDL, got.DTZ, r.wdl, r.dtz)
		}
		if len(got.Moves) != len(r.moves) {
			report("line %d %s: %d moves; oracle %d", r.line, r.fen, len(got.Moves), len(r.moves))
			continue
		}
		drawing := map[string]bool{}
		for i, m := range r.moves {
			g := got.Moves[i]
			if g.Move.UCI() != m.uci || g.WDL != m.wdl || g.DTZ != m.dtz {
				report("line %d %s: move %d %s:%d:%d; oracle %s:%d:%d", r.line, r.fen, i, g.Move.UCI(), g.WDL, g.DTZ, m.uci, m.wdl, m.dtz)
			}
			if m.dtz == 0 {
				drawing[m.uci] = true
			}
		}
		if r.wdl == 0 {
			draws++
			if !drawing[got.Best.UCI()] {
				report("line %d %s: best %s is not a drawing move", r.line, r.fen, got.Best.UCI())
			}
			if got.Best.UCI() == r.best {
				sameDraw++
			}
		} else if got.Best.UCI() != r.best {
			report("line %d %s: best %s; oracle %s", r.line, r.fen, got.Best.UCI(), r.best)
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
