package geister

import (
	"math/bits"
	"testing"

	"github.com/tbfs/tbfs/geister"
	"github.com/tbfs/tbfs/internal/testkit/geisteroracle"
)

// TestRankerOracle checks the builder's cached Ranker and UnrankBlock on
// every row of rank.tsv and values.tsv (all 256 materials): the index is
// the reference's obsblk_rank, the orientation flag says whether the
// reference's canonical board is the mirror image, and the block holds the
// reference's canonical board at the row's inner number. One Ranker serves
// all rows, so its cache is exercised across materials.
func TestRankerOracle(t *testing.T) {
	var r Ranker
	var block []geister.Position
	for _, file := range []string{"rank.tsv", "values.tsv"} {
		for _, row := range geisteroracle.Shared(t, file) {
			p, err := geister.ParseBoard(row["board"])
			if err != nil {
				t.Fatalf("%s: ParseBoard(%q): %v", file, row["board"], err)
			}
			// Twice, so that the second answer comes from the cache.
			for pass := 0; pass < 2; pass++ {
				m, idx, mirrored, err := r.Rank(p)
				if err != nil || m.String() != row["material"] || idx != row.Uint(t, "obsblk_rank") {
					t.Fatalf("%s: Ranker.Rank(%s) = %v %d, %v; oracle %s %s", file, p, m, idx, err, row["material"], row["obsblk_rank"])
				}
				canon := p
				if mirrored {
					canon = p.Mirror()
				}
				if canon.String() != row["canon_board"] {
					t.Fatalf("%s: Ranker.Rank(%s) mirrored=%v, oracle canonical %s", file, p, mirrored, row["canon_board"])
				}
				hidx, hmir := r.RankHalves(m, HalvesOf(p.OwnBlue), HalvesOf(p.OwnRed), HalvesOf(p.Opp()), p.Opp(), p.OppRed)
				if hidx != idx || hmir != mirrored {
					t.Fatalf("%s: RankHalves(%s) = %d %v, oracle %s (mirrored %v)", file, p, hidx, hmir, row["obsblk_rank"], mirrored)
				}
			}
			m, _, _, _ := r.Rank(p)
			for pass, unrank := range []func(Material, uint64, []geister.Position) ([]geister.Position, error){UnrankBlock, r.UnrankBlock, r.UnrankBlock} {
				block, err = unrank(m, row.Uint(t, "outer"), block[:0])
				if err != nil || uint64(len(block)) != m.BlockSize() {
					t.Fatalf("%s: UnrankBlock(%v, %s) pass %d = %d positions, %v", file, m, row["outer"], pass, len(block), err)
				}
				if got := block[row.Uint(t, "inner")]; got.String() != row["canon_board"] {
					t.Fatalf("%s: UnrankBlock(%v, %s)[%s] pass %d = %s, oracle %s", file, m, row["outer"], row["inner"], pass, got, row["canon_board"])
				}
			}
		}
	}
}

// TestUnrankBlockMatchesUnrank is an exhaustive proof over sampled
// observations of every material: block position i is Unrank of index
// outer*BlockSize+i.
func TestUnrankBlockMatchesUnrank(t *testing.T) {
	var block []geister.Position
	for _, m := range Materials() {
		n := m.OuterEntries()
		for _, outer := range []uint64{0, 1, n / 3, n / 2, n - 2, n - 1} {
			var err error
			block, err = UnrankBlock(m, outer, block[:0])
			if err != nil {
				t.Fatalf("UnrankBlock(%v, %d): %v", m, outer, err)
			}
			for i, p := range block {
				q, err := Unrank(m, outer*m.BlockSize()+uint64(i))
				if err != nil || q != p {
					t.Fatalf("UnrankBlock(%v, %d)[%d] = %s, Unrank %s, %v", m, outer, i, p, q, err)
				}
			}
		}
		if _, err := UnrankBlock(m, n, nil); err == nil {
			t.Fatalf("UnrankBlock(%v, %d) past the end: no error", m, n)
		}
	}
}

// TestHalvesToggle proves Toggle against its definition on every board
// square of a few boards: the halves of the board with one bit flipped.
func TestHalvesToggle(t *testing.T) {
	for _, b := range []uint64{0, geister.BoardMask, 0x0000240000180000, 0x0042000000002400} {
		for s := geister.Square(0); s < 64; s++ {
			if !s.Valid() {
				continue
			}
			if got, want := HalvesOf(b).Toggle(s), HalvesOf(b^s.Bit()); got != want {
				t.Fatalf("HalvesOf(%#x).Toggle(%v) = %+v, want %+v", b, s, got, want)
			}
		}
	}
}

// BenchmarkRankerChildren ranks the children of random positions the way
// the table builder does: through a Ranker, from the turned board's halves
// with the moving piece's two squares toggled. Set it against BenchmarkRank
// (a position ranked from scratch); the rate is children per second.
func BenchmarkRankerChildren(b *testing.B) {
	ps := benchPositions(b, 1<<12)
	var r Ranker
	var mv []geister.Move
	b.ResetTimer()
	start := cpuTime()
	var sink uint64
	n := 0
	for i := 0; n < b.N; i++ {
		p := ps[i&(1<<12-1)]
		cm := MaterialOf(p).Swap()
		own, opp := bits.Reverse64(p.OppBlue), bits.Reverse64(p.Own())
		ha, hb, hu := HalvesOf(own), HalvesOf(bits.Reverse64(p.OppRed)), HalvesOf(opp)
		oppRed := bits.Reverse64(p.OwnRed)
		mv = p.Moves(mv[:0])
		for _, m := range mv {
			if m.Capture != geister.Empty {
				continue
			}
			from, to := 63-m.From, 63-m.To
			flip := uint64(1)<<from | uint64(1)<<to
			red := oppRed
			if p.OwnRed&m.From.Bit() != 0 {
				red ^= flip
			}
			idx, _ := r.RankHalves(cm, ha, hb, hu.Toggle(from).Toggle(to), opp^flip, red)
			sink += idx
			n++
		}
	}
	_ = sink
	rate(b, n, start, "ranks")
}
