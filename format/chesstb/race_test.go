//go:build race

package chesstb

// raceEnabled lets the heaviest sweeps sample their rows under the race
// detector, which slows them about tenfold.
const raceEnabled = true
