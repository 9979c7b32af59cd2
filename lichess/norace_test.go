//go:build !race

package lichess_test

const raceEnabled = false
