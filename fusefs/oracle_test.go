package fusefs_test

import (
	"testing"
	"time"

	"github.com/tbfs/tbfs/internal/testkit/chesstboracle"
)

// oracleSets lists the table folders and oracle files the tests check.
func oracleSets(t *testing.T) []chesstboracle.Set { return chesstboracle.Sets(t) }

// sampled keeps every row normally and an even spread of at most n rows
// under the race detector or -short.
func sampled[T any](rows []T, n int) []T {
	return chesstboracle.Sample(rows, n, raceEnabled || testing.Short())
}

// timeLeft reports whether the test has at least a minute before its
// deadline. Sweeps stop early otherwise: a test binary killed by its
// timeout while a goroutine waits on the binary's own mount leaves that
// mount hung, which no cleanup can undo.
func timeLeft(t *testing.T) bool {
	d, ok := t.Deadline()
	return !ok || time.Until(d) > time.Minute
}
