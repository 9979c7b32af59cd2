package uci

import (
	"strings"
	"testing"
)

// The rows follow the UCI protocol's description of info: a bound is not
// a score, a multipv line other than the first is another move's score,
// pv runs to the end of the line.
func TestAddInfo(t *testing.T) {
	for _, tc := range []struct {
		lines []string
		final string
		n     int
		err   bool
	}{
		{[]string{"info depth 3 score cp 25 nodes 100 pv e2e4 e7e5"}, "cp 25", 1, false},
		{[]string{"info depth 9 score mate -3 pv a7a6"}, "mate -3", 1, false},
		{[]string{"info depth 2 score cp 10", "info depth 3 score cp 90 lowerbound"}, "cp 10", 1, false},
		{[]string{"info depth 2 multipv 1 score cp 10", "info depth 2 multipv 2 score mate 4"}, "cp 10", 1, false},
		{[]string{"info string score mate 1 is just text"}, "", 0, false},
		{[]string{"info depth 2 score cp"}, "", 0, true},
		{[]string{"info depth 2 score mate x"}, "", 0, true},
		{[]string{"info nodes -"}, "", 0, true},
	} {
		var s Search
		var err error
		for _, l := range tc.lines {
			if err = s.addInfo(strings.Fields(l)); err != nil {
				break
			}
		}
		got := ""
		if s.HasScore {
			got = s.Final.String()
		}
		if (err != nil) != tc.err || got != tc.final || len(s.Scores) != tc.n {
			t.Errorf("%q: final %q, %d scores, err %v; want %q, %d, error %v", tc.lines, got, len(s.Scores), err, tc.final, tc.n, tc.err)
		}
	}
}
