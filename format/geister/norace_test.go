//go:build !race

package geister

const raceEnabled = false
