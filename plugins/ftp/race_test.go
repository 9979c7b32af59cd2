//go:build race

package ftp_test

// raceEnabled shrinks the shared oracle sample under the race detector,
// where each probe costs ten times as much; every row kind is still
// reached through the sample's stride.
const raceEnabled = true
