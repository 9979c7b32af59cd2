package chess

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

type perftRow struct {
	name, fen string
	depth     int
	nodes     uint64
}

// readPerft reads the published perft table (chessprogramming wiki, the
// Stockfish perft script and the TalkChess special cases): the arbiter.
func readPerft(t *testing.T, path string) []perftRow {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []perftRow
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cols := strings.Split(line, "\t")
		if len(cols) != 4 {
			t.Fatalf("perft.tsv: bad row %q", line)
		}
		d, err1 := strconv.Atoi(cols[2])
		n, err2 := strconv.ParseUint(cols[3], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("perft.tsv: bad numbers in %q", line)
		}
		rows = append(rows, perftRow{cols[0], cols[1], d, n})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatal("perft.tsv: no rows")
	}
	return rows
}

// perftBudget is the largest published node count a row may have to run:
// every row runs in a normal test, the cheap ones under -race or -short.
func perftBudget() uint64 {
	switch {
	case testing.Short():
		return 2_000_000
	case raceEnabled:
		return 12_000_000
	}
	return 1 << 62
}

func TestPerftPublished(t *testing.T) {
	rows := readPerft(t, testenv.Testdata(t, "chess", "perft.tsv"))
	budget := perftBudget()
	for _, r := range rows {
		t.Run(r.name+"/"+strconv.Itoa(r.depth), func(t *testing.T) {
			if r.nodes > budget {
				t.Skipf("%d nodes exceeds this mode's budget of %d (runs without -race and -short)", r.nodes, budget)
			}
			t.Parallel()
			p, err := ParseFEN(r.fen)
			if err != nil {
				t.Fatalf("ParseFEN(%q): %v", r.fen, err)
			}
			if got := Perft(p, r.depth); got != r.nodes {
				t.Errorf("Perft(%q, %d) = %d, published %d", r.fen, r.depth, got, r.nodes)
			}
		})
	}
}

// TestPerftFixtureMatchesShared keeps the committed copy of the table equal
// to the shared reference data.
func TestPerftFixtureMatchesShared(t *testing.T) {
	a, err := os.ReadFile(testenv.Testdata(t, "chess", "perft.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(testenv.Shared(t, "chess", "perft.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) {
		t.Error("testdata/chess/perft.tsv differs from ../shared/chess/perft.tsv; copy it again")
	}
}
