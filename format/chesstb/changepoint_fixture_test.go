package chesstb

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// TestPackFixtures checks every metric of every committed oracle row
// (testdata/chesstb/oracle, the reference prober's output) against the
// committed tables with the committed packs searched first, so a fresh
// clone exercises the DTM50 and DTC readers, the pack-preferred DTZ and DTM,
// and the seed cases: 8/8/8/k7/8/8/K4P2/8 w with DTC (4, 23) at clock 0,
// (5, 19) at 80 and (0, 0) at 95, and 2k5/8/3R2K1/8/8/8/8/8 w at clock 88,
// where DTM50 is a draw while DTM still reports the mate.
func TestPackFixtures(t *testing.T) {
	tb := openDirs(t, Options{}, testenv.Testdata(t, "chesstb", "packs"), testenv.Testdata(t, "chesstb"))
	ctx := context.Background()
	n := 0
	for _, file := range []string{"seed_cases.tsv", "probe.tsv", "children.tsv"} {
		rows := readOracle(t, testenv.Testdata(t, "chesstb", "oracle", file), file == "children.tsv")
		if packRace && len(rows) > 150 {
			rows = sample(rows, 150)
		}
		for _, r := range rows {
			if !r.hasForm("shipped") {
				continue
			}
			pos := r.position(t)
			res, err := tb.Probe(ctx, &pos)
			if err != nil {
				t.Errorf("line %d %s %s: %v", r.line, r.fen, r.move, err)
				continue
			}
			n++
			if d := compareAll(r.expectAll(t), &res); len(d) > 0 {
				t.Errorf("%s line %d %s %s: %s", file, r.line, r.fen, r.move, strings.Join(d, "; "))
			}
		}
	}
	if n == 0 {
		t.Fatal("no fixture rows")
	}
	t.Logf("%d rows", n)
	for _, tc := range []struct {
		fen   string
		dtc   DTC
		dtm50 int
		dtm   int
	}{
		{"8/8/8/k7/8/8/K4P2/8 w - - 0 1", DTC{4, 23}, 51, 51},
		{"8/8/8/k7/8/8/K4P2/8 w - - 80 1", DTC{5, 19}, 51, 51},
		{"8/8/8/k7/8/8/K4P2/8 w - - 95 1", DTC{0, 0}, 0, 51},
		{"2k5/8/3R2K1/8/8/8/8/8 w - - 88 1", DTC{0, 0}, 0, 15},
	} {
		pos := mustFEN(t, tc.fen)
		dtc, err := tb.DTC(ctx, &pos)
		if err != nil || dtc != tc.dtc {
			t.Errorf("%s: DTC %+v, %v; want %+v", tc.fen, dtc, err, tc.dtc)
		}
		d50, err := tb.DTM50(ctx, &pos)
		if err != nil || d50 != tc.dtm50 {
			t.Errorf("%s: DTM50 %d, %v; want %d", tc.fen, d50, err, tc.dtm50)
		}
		dtm, err := tb.DTM(ctx, &pos)
		if err != nil || dtm != tc.dtm {
			t.Errorf("%s: DTM %d, %v; want %d", tc.fen, dtm, err, tc.dtm)
		}
	}
}

// TestConcurrentPackProbes probes the committed oracle rows with the packs
// from 16 goroutines at once (a sample of them) under budgets small enough that pack blocks
// grow, get evicted while other probes still read them, and are decoded
// again: every answer must still be the reference prober's, and the bytes
// held must stay within the budget.
func TestConcurrentPackProbes(t *testing.T) {
	var rows []oracleRow
	for _, r := range readOracle(t, testenv.Testdata(t, "chesstb", "oracle", "probe.tsv"), false) {
		if r.hasForm("shipped") {
			rows = append(rows, r)
		}
	}
	// Kept small: at these budgets every probe decodes its blocks again.
	rows = sample(rows, 16)
	if raceEnabled {
		rows = sample(rows, 6)
	}
	// Parsed here, in the test's goroutine: a bad row fails the test there.
	positions := make([]chess.Position, len(rows))
	expects := make([]packExpect, len(rows))
	for i, r := range rows {
		positions[i], expects[i] = r.position(t), r.expectAll(t)
	}
	for _, budget := range []int64{256 << 10, 2 << 20} {
		tb := openDirs(t, Options{BlockCacheBytes: budget}, testenv.Testdata(t, "chesstb", "packs"), testenv.Testdata(t, "chesstb"))
		ctx := context.Background()
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for g := range 16 {
			wg.Go(func() {
				for i := range rows {
					j := (i + g*37) % len(rows)
					r, pos := rows[j], positions[j]
					res, err := tb.Probe(ctx, &pos)
					if err == nil {
						if d := compareAll(expects[j], &res); len(d) > 0 {
							err = fmt.Errorf("line %d %s: %s", r.line, r.fen, strings.Join(d, "; "))
						}
					}
					if err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("budget %d: %v", budget, err)
		}
		if used, peak := tb.CacheStats(); used > budget || peak > budget {
			t.Fatalf("budget %d: held %d, peak %d", budget, used, peak)
		}
	}
}
