//go:build race

package lichess_test

// raceEnabled is true under the race detector, which slows probing about
// tenfold; the oracle sweeps then check a sample.
const raceEnabled = true
