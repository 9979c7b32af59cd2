//go:build race

package chesstb

// packRace trims the pack sweeps under the race detector, which slows
// them about tenfold and adds nothing to a single-goroutine comparison.
const packRace = true
