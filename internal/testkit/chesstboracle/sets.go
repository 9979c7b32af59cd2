package chesstboracle

import (
	"path/filepath"
	"testing"

	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// Set is one table folder with the oracle files whose rows it answers.
type Set struct {
	Name   string   // "fixtures" or "shared", for subtest names
	Tables string   // the folder to open as a source
	Files  []string // probe.tsv-shaped files; children.tsv sits beside the first
	// LimitedRows is how many rows a sweep keeps under the race detector
	// or -short: the shared set's rows need derivations that the detector
	// slows a hundredfold, and races are about concurrency, not coverage.
	LimitedRows int
}

// Sets lists the table folders and oracle files a front end's tests check:
// the committed fixtures always, and the shared shipped set when it is
// present (always under CI, where its absence fails the test).
func Sets(t testing.TB) []Set {
	t.Helper()
	sets := []Set{{
		Name:        "fixtures",
		Tables:      testenv.Testdata(t, "chesstb"),
		Files:       []string{testenv.Testdata(t, "chesstb", "oracle", "probe.tsv")},
		LimitedRows: 150,
	}}
	if testenv.HasShared(t, "chesstb") {
		base := testenv.Shared(t, "chesstb")
		sets = append(sets, Set{
			Name:   "shared",
			Tables: filepath.Join(base, "shipped"),
			Files: []string{
				filepath.Join(base, "oracle", "probe.tsv"),
				filepath.Join(base, "oracle", "seed_cases.tsv"),
			},
			LimitedRows: 30,
		})
	}
	return sets
}

// Sample keeps every row unless limited (race detector or -short), and
// then an even spread of at most n rows, so every material is still
// touched.
func Sample[T any](rows []T, n int, limited bool) []T {
	if !limited || len(rows) <= n {
		return rows
	}
	k := (len(rows) + n - 1) / n
	var out []T
	for i := 0; i < len(rows); i += k {
		out = append(out, rows[i])
	}
	return out
}
