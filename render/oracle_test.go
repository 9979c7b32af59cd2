package render_test

import (
	"testing"

	"github.com/tbfs/tbfs/internal/testkit/chesstboracle"
)

// oracleSets lists the table folders and oracle files the tests check.
func oracleSets(t *testing.T) []chesstboracle.Set { return chesstboracle.Sets(t) }

// sampled keeps every row normally and an even spread of at most n rows
// under the race detector or -short.
func sampled[T any](rows []T, n int) []T {
	return chesstboracle.Sample(rows, n, raceEnabled || testing.Short())
}
