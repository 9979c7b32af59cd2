//go:build race

package chessprobe_test

// raceEnabled lets the oracle sweeps sample their rows under the race
// detector, which slows them about tenfold.
const raceEnabled = true
