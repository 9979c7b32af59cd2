//go:build !race

package chesstb

const raceEnabled = false
