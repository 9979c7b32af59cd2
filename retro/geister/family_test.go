package geister

import (
	"math/bits"
	"math/rand/v2"
	"sort"
	"testing"

	geistertb "github.com/tbfs/tbfs/format/geister"
	"github.com/tbfs/tbfs/geister"
)

// TestFamilyMatchesRank is an exhaustive comparison over sampled positions
// of every material up to 7 pieces (the mirror-fixed id013 and id019
// included) with the oracle-checked Rank: family.child gives the index of
// p.Play(mv) for every move without a capture, and family.parent gives
// exactly the parents Unmoves lists with as many pieces as p, each with
// RankOriented's index and orientation.
func TestFamilyMatchesRank(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 6))
	var rk geistertb.Ranker
	samples := 300
	if raceEnabled {
		samples = 40
	}
	for _, m := range geistertb.Materials() {
		if m.Total() > 7 {
			continue
		}
		for n := 0; n < samples; n++ {
			p, err := geistertb.Unrank(m, rng.Uint64N(m.Entries()))
			if err != nil {
				t.Fatal(err)
			}
			f := turn(p)
			for _, mv := range p.Moves(nil) {
				if mv.Capture != geister.Empty {
					continue
				}
				_, want, err := geistertb.Rank(p.Play(mv))
				if err != nil {
					t.Fatal(err)
				}
				if got := f.child(&rk, mv, p.OwnRed&mv.From.Bit() != 0); got != want {
					t.Fatalf("%v %s move %v: child index %d, Rank %d", m, p, mv, got, want)
				}
			}
			type ranked struct {
				q   geister.Position
				idx uint64
				mir bool
			}
			var want, got []ranked
			for _, q := range p.Unmoves(nil) {
				if bits.OnesCount64(q.Opp()) != bits.OnesCount64(p.Own()) {
					continue
				}
				_, idx, mir, err := geistertb.RankOriented(q)
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, ranked{q, idx, mir})
			}
			for _, st := range f.parentSteps(nil) {
				q, idx, mir := f.parent(&rk, st.to, st.from)
				got = append(got, ranked{q, idx, mir})
			}
			for _, l := range [][]ranked{want, got} {
				sort.Slice(l, func(i, j int) bool {
					a, b := l[i].q, l[j].q
					if a.OwnBlue != b.OwnBlue {
						return a.OwnBlue < b.OwnBlue
					}
					return a.OwnRed < b.OwnRed
				})
			}
			if len(got) != len(want) {
				t.Fatalf("%v %s: %d parents, Unmoves %d", m, p, len(got), len(want))
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("%v %s: parent %+v, Unmoves and RankOriented %+v", m, p, got[i], want[i])
				}
			}
		}
	}
}
