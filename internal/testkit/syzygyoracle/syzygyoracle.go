// Package syzygyoracle reads the Fathom oracle of the shared reference data
// (../shared/syzygy/oracle/probe.tsv, described in ../shared/syzygy/
// README.md) for tests: per position Fathom's root WDL at the FEN's clock,
// its unsigned root DTZ, its tb_probe_root move and every legal move's
// values.
package syzygyoracle

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// Move is one entry of a row's moves column, from the mover's side at the
// root clock.
type Move struct {
	UCI      string
	WDL, DTZ int
}

// Row is one line of probe.tsv.
type Row struct {
	// Line is the line number in the file, for messages.
	Line int
	FEN  string
	// WDL is the root's class at the FEN's clock, -2..2; DTZ is the
	// table's DTZ50'' unsigned (0 for draws and terminal positions).
	WDL, DTZ int
	// Best is tb_probe_root's move, "" for a terminal position.
	Best  string
	Moves []Move
}

// Terminal reports a checkmate or stalemate row (no moves).
func (r *Row) Terminal() bool { return r.Best == "" }

// Checkmate reports a terminal row of a mated side.
func (r *Row) Checkmate() bool { return r.Terminal() && r.WDL == -2 }

// Path is the oracle file, skipping the test (failing it under CI) when
// the shared data is missing.
func Path(t testing.TB) string {
	t.Helper()
	return testenv.Shared(t, "syzygy", "oracle", "probe.tsv")
}

// Tables is the folder of the oracle's Syzygy tables.
func Tables(t testing.TB) string {
	t.Helper()
	return testenv.Shared(t, "syzygy", "tables")
}

// Read parses an oracle file, failing the test on any malformed line.
func Read(t testing.TB, path string) []Row {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []Row
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		if line == 1 {
			continue // the header
		}
		c := strings.Split(sc.Text(), "\t")
		if len(c) != 5 {
			t.Fatalf("%s:%d: %d columns, want 5", path, line, len(c))
		}
		r := Row{Line: line, FEN: c[0]}
		if c[3] != "-" {
			r.Best = c[3]
		}
		r.WDL, err = strconv.Atoi(c[1])
		if err == nil {
			r.DTZ, err = strconv.Atoi(c[2])
		}
		if err != nil {
			t.Fatalf("%s:%d: %v", path, line, err)
		}
		if c[4] != "-" {
			for _, f := range strings.Fields(c[4]) {
				p := strings.Split(f, ":")
				if len(p) != 3 {
					t.Fatalf("%s:%d: bad move %q", path, line, f)
				}
				w, err1 := strconv.Atoi(p[1])
				d, err2 := strconv.Atoi(p[2])
				if err1 != nil || err2 != nil {
					t.Fatalf("%s:%d: bad move %q", path, line, f)
				}
				r.Moves = append(r.Moves, Move{p[0], w, d})
			}
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatalf("%s: no rows", path)
	}
	return rows
}

// SignedDTZ is the row's root DTZ50” signed for the side to move (the
// wdl column gives the side).
func (r *Row) SignedDTZ() int {
	if r.WDL < 0 {
		return -r.DTZ
	}
	return r.DTZ
}

// TableClass is the tables' class (the clock aside) of a signed DTZ50”:
// a cursed win or blessed loss past ±100, a win or loss within.
func TableClass(dtz int) int {
	switch {
	case dtz > 100:
		return 1
	case dtz > 0:
		return 2
	case dtz < -100:
		return -1
	case dtz < 0:
		return -2
	}
	return 0
}

// Child returns what the move's entry says of the position after it, from
// that position's side to move: its table class (the clock aside) and, for
// a move that neither zeroes the clock nor mates, its signed DTZ50”. A
// zeroing move's entry gives the class alone (1 a win or loss, 101 a cursed
// one, 0 a draw), as does a mate's; any other move's gives |DTZ| + 1
// (README of ../shared/syzygy).
func (m Move) Child(zeroing, mates bool) (class, dtz int, hasDTZ bool) {
	if m.WDL == 0 {
		return 0, 0, !zeroing && !mates
	}
	side := -1
	if m.WDL < 0 {
		side = 1
	}
	if zeroing || mates {
		if m.DTZ > 100 {
			return side, 0, false
		}
		return 2 * side, 0, false
	}
	d := side * (m.DTZ - 1)
	return TableClass(d), d, true
}
