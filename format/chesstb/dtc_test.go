package chesstb

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/format/chesstb/internal/changepoint"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// TestDTCMultiRecords reaches the DTC pack's MULTI records, which no oracle
// row happens to read. The arbiter is the reference generator's own data in
// two encodings: full/ stores these cells, while shipped/ dropped White's
// DTC frame of KPK, KNPK and KBPK and lossonly/ keeps only the losses of KPK
// and KRKP, so there the same answers are rebuilt by one-ply minimax from
// other cells. For every position whose full/ read hits a MULTI record, the
// pair (pushes, plies) must agree at every clock, each clock selecting a
// different budget of the record.
func TestDTCMultiRecords(t *testing.T) {
	base := testenv.Shared(t, "chesstb")
	// A budget that holds every block these materials have, so each is
	// decoded once.
	opts := Options{BlockCacheBytes: 1 << 30}
	full := openDirs(t, opts, filepath.Join(base, "full"))
	shipped := openDirs(t, opts, filepath.Join(base, "shipped"))
	lossonly := openDirs(t, opts, filepath.Join(base, "lossonly"), filepath.Join(base, "shipped"))

	var multi atomic.Bool
	hook := func(k Kind, s changepoint.State) {
		if k == KindDTC && s == changepoint.Multi {
			multi.Store(true)
		}
	}
	packVisitHook.Store(&hook)
	t.Cleanup(func() { packVisitHook.Store(nil) })

	// Three positions earlier sweeps found to read a MULTI record in a
	// frame another view rebuilds; the random sweep adds more where time
	// allows (not under the race detector).
	candidates := []chess.Position{
		mustFEN(t, "b7/2p5/8/8/1K6/6k1/8/8 b - - 0 1"),
		mustFEN(t, "7N/8/8/4k2K/1P6/8/8/8 w - - 0 1"),
		mustFEN(t, "8/3K4/8/8/7k/8/6P1/6B1 w - - 0 1"),
	}
	n := 12000
	switch {
	case packRace:
		n = 0
	case testing.Short():
		n = 1000
	}
	candidates = append(candidates, randomPositions(t, []string{"KPK", "KNPK", "KBPK", "KRKP", "KPKP"}, n, 5)...)
	ctx := context.Background()
	clocks := []int{0, 10, 30, 50, 70, 80, 90, 95, 99}
	hits, compared, rebuilt := 0, 0, 0
	for _, pos := range candidates {
		pos.SetHalfmoveClock(0)
		multi.Store(false)
		want, err := full.Probe(ctx, &pos)
		if err != nil || !multi.Load() {
			continue
		}
		hits++
		cn := canonicalNode(&pos)
		switch {
		case cn.pos.SideToMove() == 0 && (want.Material == "KPK" || want.Material == "KNPK" || want.Material == "KBPK"):
			rebuilt++ // shipped/ dropped this frame
		case want.WDL > 0 && (want.Material == "KPK" || want.Material == "KRKP" || want.Material == "KPKP"):
			rebuilt++ // lossonly/ rebuilds this win
		}
		others := []*Tablebase{shipped}
		if want.Material == "KPK" || want.Material == "KRKP" || want.Material == "KPKP" {
			others = append(others, lossonly)
		}
		for _, clock := range clocks {
			pos.SetHalfmoveClock(clock)
			want, err := full.Probe(ctx, &pos)
			if err != nil {
				t.Fatalf("%s: %v", pos.FEN(), err)
			}
			for i, tb := range others {
				got, err := tb.Probe(ctx, &pos)
				if err != nil {
					t.Fatalf("%s (view %d): %v", pos.FEN(), i, err)
				}
				compared++
				if got.HasDTC != want.HasDTC || got.DTC != want.DTC || got.DTZ != want.DTZ {
					t.Errorf("%s (view %d): DTC %+v DTZ %d, full/ stores %+v DTZ %d", pos.FEN(), i, got.DTC, got.DTZ, want.DTC, want.DTZ)
				}
			}
		}
	}
	t.Logf("%d positions read a DTC MULTI record (%d of them rebuilt in another view); %d answers compared", hits, rebuilt, compared)
	if rebuilt == 0 {
		t.Fatal("no DTC MULTI record was checked against a rebuild")
	}
}
