//go:build race

package retro

// raceEnabled shrinks the sweeps under the race detector, which slows the
// search tenfold; every row still runs without it.
const raceEnabled = true
