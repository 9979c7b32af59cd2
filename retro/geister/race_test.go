//go:build race

package geister

// raceEnabled reports a -race build, where the tests sample more thinly.
const raceEnabled = true
