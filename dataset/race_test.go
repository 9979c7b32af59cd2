//go:build race

package dataset_test

// raceEnabled: the detector slows the tables tenfold, so sweeps sample.
const raceEnabled = true
