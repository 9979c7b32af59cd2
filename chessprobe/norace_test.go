//go:build !race

package chessprobe_test

const raceEnabled = false
