//go:build !race

package ftp_test

const raceEnabled = false
