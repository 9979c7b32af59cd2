//go:build race

package changepoint

// raceEnabled trims the sweep over every reference block, which is mostly
// LZMA work and gains nothing from the race detector.
const raceEnabled = true
