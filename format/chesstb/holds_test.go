package chesstb

import (
	"context"
	"testing"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// TestHolds checks Holds against the fixture folder's listing (testdata/
// chesstb: wdl and dtm for KBK KBNK KNK KPK KQK KQKR KRK KRKR, dtz for
// fewer): a mate or stalemate of a held material is held though Probe
// reads no table for it, in either colour's orientation, and a material
// without a file is not.
func TestHolds(t *testing.T) {
	tb := openDirs(t, Options{}, testenv.Testdata(t, "chesstb"))
	ctx := context.Background()
	for _, tc := range []struct {
		fen  string
		kind Kind
		want bool
	}{
		{"k7/1Q6/1K6/8/8/8/8/8 b - - 0 1", KindWDL, true},     // KQK, mated
		{"k7/1Q6/1K6/8/8/8/8/8 b - - 0 1", KindDTM, true},     // KQK, mated
		{"K7/1q6/1k6/8/8/8/8/8 w - - 0 1", KindWDL, true},     // KQK with colours swapped
		{"k7/2Q5/1K6/8/8/8/8/8 b - - 0 1", KindWDL, true},     // KQK, stalemate
		{"k7/1Q6/1K6/8/8/8/8/7r b - - 0 1", KindWDL, true},    // KQKR
		{"k7/1Q6/1K6/8/8/8/8/5q1r b - - 0 1", KindWDL, false}, // KQKQR: no file
	} {
		pos, err := chess.ParseFEN(tc.fen)
		if err != nil {
			t.Fatal(err)
		}
		got, err := tb.Holds(ctx, &pos, tc.kind)
		if err != nil || got != tc.want {
			t.Errorf("%s %v: %v, %v; want %v", tc.fen, tc.kind, got, err, tc.want)
		}
	}
}
