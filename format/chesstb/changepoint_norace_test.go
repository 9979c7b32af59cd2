//go:build !race

package chesstb

const packRace = false
