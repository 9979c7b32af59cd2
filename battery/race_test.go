//go:build race

package battery_test

// raceEnabled: the detector slows the arbiters tenfold, so sweeps sample.
const raceEnabled = true
