package chesstb

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// TestRecountWDLMatchesInfo recounts every WDL table of the full set and
// compares each side to move with the generator's own totals in
// info/dtz/MATERIAL.info (the arbiter: the generator counted them while
// writing the table).
func TestRecountWDLMatchesInfo(t *testing.T) {
	root := testenv.Shared(t, "chesstb", "full")
	tb := openDirs(t, Options{}, root)
	names, err := filepath.Glob(filepath.Join(root, "wdl", "*.lzw"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no WDL tables under %s: %v", root, err)
	}
	// Under the race detector the walk is several times slower; three-man
	// tables and two four-man ones (one with a pawn each side) keep it
	// short, and the plain run covers every table.
	raceSet := map[string]bool{"KBK": true, "KNK": true, "KPK": true, "KQK": true, "KRK": true, "KPKP": true, "KBKB": true}
	for _, name := range names {
		mat := strings.TrimSuffix(filepath.Base(name), ".lzw")
		if raceEnabled && !raceSet[mat] {
			continue
		}
		t.Run(mat, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(root, "info", "dtz", mat+".info"))
			if err != nil {
				t.Fatal(err)
			}
			want, err := ParseInfo(data)
			if err != nil {
				t.Fatal(err)
			}
			got, counted, err := tb.RecountWDL(context.Background(), mat)
			if err != nil {
				t.Fatal(err)
			}
			for c := range 2 {
				if counted[c] && got[c] != want.Counts[c] {
					t.Errorf("colour %d: recounted %v, info says %v", c, got[c], want.Counts[c])
				}
			}
			if !counted[0] {
				t.Errorf("White's frame not counted")
			}
		})
	}
}

// TestUnrankRoundTrip checks that unrank inverts the index (index.go) on
// every cell the generator credits with a placement: exhaustively for the
// small materials named, on a stride sample for the rest. The arbiter is the
// index function itself, which the oracle probe tests pin to the
// reference; a cell with weight 0 (colliding men, diagonal twin) is the only
// kind allowed not to come back.
func TestUnrankRoundTrip(t *testing.T) {
	exhaustive := map[string]bool{"KBK": true, "KPK": true, "KNKP": !raceEnabled && !testing.Short()}
	for _, mat := range []string{"KBK", "KPK", "KNKP", "KPKP", "KQKR", "KBNK", "KPPK", "KRPK", "KNNK", "KNNKP", "KPPKP", "KQRKB"} {
		t.Run(mat, func(t *testing.T) {
			m, err := parseMaterial(mat)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := newIndexConfig(m)
			if err != nil {
				t.Fatal(err)
			}
			step := uint64(1)
			if !exhaustive[mat] {
				step = cfg.positions/20000 | 1
			}
			for perm := range factorial[len(cfg.classes)] {
				l, err := cfg.layoutFor(perm)
				if err != nil {
					t.Fatal(err)
				}
				for idx := uint64(0); idx < cfg.positions; idx += step {
					ps, w, err := cfg.unrank(idx, &l)
					if err != nil {
						t.Fatalf("unrank(%d): %v", idx, err)
					}
					if w == 0 {
						continue
					}
					if got, err := cfg.index(&ps, &l); err != nil || got != idx {
						t.Fatalf("perm %d: index(unrank(%d)) = %d, %v", perm, idx, got, err)
					}
				}
			}
			if _, _, err := cfg.unrank(cfg.positions, ptr(l0(t, cfg))); err == nil {
				t.Errorf("cell past the index accepted")
			}
		})
	}
}

func l0(t *testing.T, cfg *indexConfig) layout {
	t.Helper()
	l, err := cfg.layoutFor(0)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestColexUnrank checks colexUnrank against colexRank for every set of one
// and two squares and every pawn set of three (the definition of the colex
// order is the arbiter: ranks are consecutive from 0).
func TestColexUnrank(t *testing.T) {
	for _, tc := range []struct{ k, base int }{{1, 0}, {2, 0}, {3, 8}, {1, 8}} {
		n := binomial[64-tc.base][tc.k]
		for r := range n {
			b := colexUnrank(r, tc.k, tc.base)
			if popcount(b) != tc.k || colexRank(b, tc.base) != r || b&(1<<uint(tc.base)-1) != 0 {
				t.Fatalf("k=%d base=%d: colexUnrank(%d) = %#x", tc.k, tc.base, r, b)
			}
		}
	}
}

func ptr[T any](v T) *T { return &v }

// BenchmarkRecountWDL measures the recount of one four-man pawn table with
// skipped blocks (KQPK, both colours); cells/s is the figure to compare.
func BenchmarkRecountWDL(b *testing.B) {
	root := testenv.Shared(b, "chesstb", "full")
	tb := openDirs(b, Options{}, root)
	ctx := context.Background()
	m, _ := parseMaterial("KQPK")
	cfg, err := newIndexConfig(m)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := tb.RecountWDL(ctx, "KQPK"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(2*cfg.positions)*float64(b.N)/b.Elapsed().Seconds(), "cells/s")
}
