package chesstb

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// TestPairOracle answers every row of oracle/pair.tsv (the reference
// prober's output with pair/ searched first and every KPKP file removed)
// from pair/ and shipped/ with every KPKP file hidden, so each answer, and
// every child a rebuild visits that keeps the pair, can only come from the
// KpKp table.
func TestPairOracle(t *testing.T) {
	base := testenv.Shared(t, "chesstb")
	noKPKP := func(name string) bool { return strings.Contains(name, "KPKP.") }
	tb := openView(t, noKPKP, filepath.Join(base, "pair"), filepath.Join(base, "shipped"))
	rows := readOracle(t, filepath.Join(base, "oracle", "pair.tsv"), false)
	if len(rows) == 0 {
		t.Fatal("no rows")
	}
	ctx := context.Background()
	for _, r := range rows {
		pos := r.position(t)
		res, err := tb.Probe(ctx, &pos)
		if err != nil {
			t.Errorf("line %d %s: %v", r.line, r.fen, err)
			continue
		}
		if res.Material != "KpKp" {
			t.Errorf("line %d %s: answered from %s", r.line, r.fen, res.Material)
		}
		if d := compareAll(r.expectAll(t), &res); len(d) > 0 {
			t.Errorf("line %d %s: %s", r.line, r.fen, strings.Join(d, "; "))
		}
	}
}

// TestPairSlices checks the pair placement numbering against its
// definition: 120 placements, file-major, then white rank, then black rank,
// and every placement's squares round-trip.
func TestPairSlices(t *testing.T) {
	n := 0
	for p := range pairPlacements {
		w, b := pairSquares(p)
		if got := int(pairIndex[w*64+b]); got != p {
			t.Fatalf("placement %d: squares %d,%d index back to %d", p, w, b, got)
		}
		if w&7 != b&7 || w>>3 >= b>>3 || w>>3 < 1 || b>>3 > 6 {
			t.Fatalf("placement %d: %d,%d is not an opposing pair", p, w, b)
		}
		n++
	}
	ps, err := pairSlicesFor(0, 0)
	if err != nil || ps.survived != pairPlacements {
		t.Fatalf("KpKp keeps %d cells (%v), want all %d", ps.survived, err, pairPlacements)
	}
}
