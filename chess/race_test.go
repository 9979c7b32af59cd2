//go:build race

package chess

// raceEnabled is true when the tests run under the race detector, which
// slows move generation several times; the heaviest sweeps then sample.
const raceEnabled = true
