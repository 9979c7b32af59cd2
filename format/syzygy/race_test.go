//go:build race

package syzygy

// raceEnabled lets the whole-oracle sweeps sample their rows under the race
// detector, which slows them about tenfold.
const raceEnabled = true
