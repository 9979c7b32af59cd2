package syzygy

import (
	"context"
	"testing"

	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// TestDTZRounding checks DTZWithRounding against the values peers publish
// for positions of the shared materials.
func TestDTZRounding(t *testing.T) {
	tb := openDir(t, testenv.Shared(t, "syzygy", "tables"))
	for _, c := range []struct {
		fen     string
		dtz     int
		rounded bool
		arbiter string
	}{
		{"8/8/8/8/B7/N7/K2k4/8 b - - 0 1", -59, true, "shakmaty-syzygy's crate example: Rounded(Dtz(-59))"},
		{"4k3/6KP/8/8/8/8/7p/8 w - - 0 1", 1, false, "lila-tablebase README: dtz 1, precise_dtz 1"},
		{"4k2Q/6K1/8/8/8/8/7p/8 b - - 0 1", -2, false, "lila-tablebase README: after h7h8q dtz -2, precise_dtz -2"},
	} {
		pos := mustFEN(t, c.fen)
		d, r, err := tb.DTZWithRounding(context.Background(), &pos)
		if err != nil || d != c.dtz || r != c.rounded {
			t.Errorf("%s: DTZ %d rounded %v, %v; want %d %v (%s)", c.fen, d, r, err, c.dtz, c.rounded, c.arbiter)
		}
	}
}
