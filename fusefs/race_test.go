//go:build race

package fusefs_test

// raceEnabled is true under the race detector, which slows probing about
// tenfold; the full sweeps then check a sample of the oracle rows.
const raceEnabled = true
