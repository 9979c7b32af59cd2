package geister

import (
	"context"
	"testing"

	geistertb "github.com/tbfs/tbfs/format/geister"
	"github.com/tbfs/tbfs/geister"
)

// TestPartIndex checks the partitioned index of every partitionable
// material up to 6 pieces against the obsblk index: NumParts parts of its
// size make exactly the material's entries (the reference's entry count),
// and every part's walk gives distinct canonical positions that map back
// to the same part and entry and that at finds by entry (every part at
// total 4, a sample of the parts above).
func TestPartIndex(t *testing.T) {
	for _, m := range geistertb.Materials() {
		if m.Total() > 6 || !Partitionable(m) {
			continue
		}
		lay := newPartLayout(m)
		if got := NumParts * lay.size; got != m.Entries() {
			t.Errorf("%v: %d parts of %d entries = %d, obsblk has %d", m, NumParts, lay.size, got, m.Entries())
		}
		step := []int{4: 1, 5: 11, 6: 97}[m.Total()]
		if raceEnabled {
			step = []int{4: 7, 5: 101, 6: 997}[m.Total()]
		}
		var rk geistertb.Ranker
		for p := 0; p < NumParts; p += step {
			n := uint64(0)
			lay.walk(p, func(j uint64, pos geister.Position) bool {
				if j != n {
					t.Fatalf("%v part %d: entry %d after %d", m, p, j, n)
				}
				if q := lay.at(p, j); q != pos {
					t.Fatalf("%v part %d entry %d: walk gives %v, at %v", m, p, j, pos, q)
				}
				n++
				if _, idx, _, err := rk.Rank(pos); err != nil {
					t.Fatalf("%v part %d entry %d: %v not in the obsblk index: %v", m, p, j, pos, err)
				} else if q, err := geistertb.Unrank(m, idx); err != nil || (q != pos && q != pos.Mirror()) {
					t.Fatalf("%v part %d entry %d: %v ranks to %d, which is %v", m, p, j, pos, idx, q)
				}
				for _, x := range []geister.Position{pos, pos.Mirror()} {
					if c, cp, cj := lay.canonical(x); c != pos || cp != p || cj != j {
						t.Fatalf("%v part %d entry %d: %v is canonical %v part %d entry %d", m, p, j, x, c, cp, cj)
					}
				}
				return true
			})
			if n != lay.size {
				t.Fatalf("%v part %d: %d entries, want %d", m, p, n, lay.size)
			}
		}
	}
}

// TestBuildPartsTotal4 builds id000 in parts with room for a tenth of them
// in memory, so most are spilled and read back every layer, and compares
// the repacked table with the reference's sha256 (SHA256SUMS).
func TestBuildPartsTotal4(t *testing.T) {
	dir := t.TempDir()
	m := geistertb.Material{PB: 1, PR: 1, OB: 1, OR: 1}
	var st PartStats
	opts := BuildOptions{Out: dir, Workers: 2, MemLimit: baseMemory + 64*PartMemory(m),
		OnParts: func(_ []geistertb.Material, s PartStats) { st = s }}
	if err := buildPairParts(context.Background(), opts, []geistertb.Material{m}, t.Logf); err != nil {
		t.Fatal(err)
	}
	checkOutput(t, dir, m, referenceSums(t))
	if st.Resident > 64 || st.SpillWritten == 0 || st.SpillRead == 0 {
		t.Errorf("stats %+v: want at most 64 parts resident and traffic both ways", st)
	}
}

// TestBuildPartsTotal5 builds the total-5 pair with one red a side
// (id002, id004) in parts, with room for a fifth of them in memory, and
// compares both repacked tables with the reference's sha256 (SHA256SUMS).
// It is left out of -short and -race runs.
func TestBuildPartsTotal5(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("builds 22.6 M entries in parts")
	}
	dir := t.TempDir()
	ctx := context.Background()
	if err := Build(ctx, BuildOptions{Out: dir, UptoTotal: 4}); err != nil {
		t.Fatal(err)
	}
	pr := []geistertb.Material{{PB: 1, PR: 1, OB: 2, OR: 1}, {PB: 2, PR: 1, OB: 1, OR: 1}}
	var st PartStats
	opts := BuildOptions{Out: dir, MemLimit: baseMemory + int64(pr[0].Entries())*2/5 + int64(pr[0].Entries())/8,
		OnParts: func(_ []geistertb.Material, s PartStats) { st = s }}
	if err := buildPairParts(ctx, opts, pr, t.Logf); err != nil {
		t.Fatal(err)
	}
	sums := referenceSums(t)
	for _, m := range pr {
		checkOutput(t, dir, m, sums)
	}
	if st.Resident >= st.Parts || st.SpillRead == 0 {
		t.Errorf("stats %+v: want parts spilled and read back", st)
	}
}
