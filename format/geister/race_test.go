//go:build race

package geister

// raceEnabled lets the slowest sweeps sample under the race detector, which
// runs them about ten times slower; without it they cover every entry.
const raceEnabled = true
