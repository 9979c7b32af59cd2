package fusefs_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tbfs/tbfs/internal/chesstboracle"
	"github.com/tbfs/tbfs/internal/testenv"
)

// oracleSets lists the table folders and oracle files the tests check: the
// committed fixtures always, and the full shared set when it is present
// (always under CI).
type oracleSet struct {
	name   string
	tables string
	files  []string
	// raceRows is how many rows a sweep keeps under the race detector or
	// -short: the shared set's rows need derivations that the detector
	// slows a hundredfold, and races are about concurrency, not coverage.
	raceRows int
}

func oracleSets(t *testing.T) []oracleSet {
	t.Helper()
	sets := []oracleSet{{
		name:     "fixtures",
		tables:   testenv.Testdata(t, "chesstb"),
		files:    []string{testenv.Testdata(t, "chesstb", "oracle", "probe.tsv")},
		raceRows: 150,
	}}
	shared := os.Getenv("TBFS_SHARED")
	if shared == "" {
		shared = filepath.Join(testenv.RepoRoot(t), "..", "shared")
	}
	if _, err := os.Stat(filepath.Join(shared, "chesstb")); err == nil || testenv.InCI() {
		base := testenv.Shared(t, "chesstb")
		sets = append(sets, oracleSet{
			name:   "shared",
			tables: filepath.Join(base, "shipped"),
			files: []string{
				filepath.Join(base, "oracle", "probe.tsv"),
				filepath.Join(base, "oracle", "seed_cases.tsv"),
			},
			raceRows: 30,
		})
	}
	return sets
}

// sampled keeps every row normally and an even spread of at most n rows
// under the race detector or -short, so every material is still touched.
func sampled(rows []chesstboracle.Row, n int) []chesstboracle.Row {
	if (!raceEnabled && !testing.Short()) || len(rows) <= n {
		return rows
	}
	k := (len(rows) + n - 1) / n
	var out []chesstboracle.Row
	for i := 0; i < len(rows); i += k {
		out = append(out, rows[i])
	}
	return out
}

// timeLeft reports whether the test has at least a minute before its
// deadline. Sweeps stop early otherwise: a test binary killed by its
// timeout while a goroutine waits on the binary's own mount leaves that
// mount hung, which no cleanup can undo.
func timeLeft(t *testing.T) bool {
	d, ok := t.Deadline()
	return !ok || time.Until(d) > time.Minute
}
