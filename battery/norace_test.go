//go:build !race

package battery_test

const raceEnabled = false
