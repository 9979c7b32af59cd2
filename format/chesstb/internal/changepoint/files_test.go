package changepoint

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// packFiles lists the pack files of the reference data set.
func packFiles(t *testing.T) []string {
	t.Helper()
	root := testenv.Shared(t, "chesstb")
	var files []string
	for _, pat := range []string{"*/dtm50/*.lzdtm50", "*/dtc/*.lzdtc"} {
		m, err := filepath.Glob(filepath.Join(root, pat))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Fatal("no pack files under the shared data set")
	}
	return files
}

func paramsFor(name string) (uint32, int) {
	if strings.HasSuffix(name, ".lzdtc") {
		return MagicDTC, DTCLayers
	}
	return MagicDTM50, DTM50Layers
}

// TestDecodeReferenceFiles decodes every block of every pack the reference
// generator wrote. The arbiter is the generator itself: each of its blocks
// is well formed, so the strict decoder must accept all of them, and the
// state counts it finds must add up to each block's positions.
func TestDecodeReferenceFiles(t *testing.T) {
	files := packFiles(t)
	if testing.Short() || raceEnabled {
		// Every pack still gets its header parsed; the block sweep keeps to
		// the small files.
		var small []string
		for _, f := range files {
			if st, err := os.Stat(f); err == nil && st.Size() < 40<<10 {
				small = append(small, f)
			}
		}
		files = small
	}
	var total [4]int
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		magic, layers := paramsFor(path)
		h, err := ParseHeader(data, int64(len(data)), magic)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		for c := range h.Frames {
			f := &h.Frames[c]
			if f.Singular || f.Dropped {
				continue
			}
			for i := uint64(0); i < f.BlockCount; i++ {
				bi, err := f.Block(i)
				if err != nil {
					t.Fatalf("%s frame %d: %v", path, c, err)
				}
				if bi.Size == 0 {
					continue
				}
				payload, err := Decompress(data[bi.Offset:bi.Offset+bi.Size], bi.USize)
				if err != nil {
					t.Fatalf("%s frame %d block %d: %v", path, c, i, err)
				}
				b, err := Decode(payload, Params{Layers: layers, EntryBytes: f.EntryBytes, Positions: bi.Positions, Ranks: len(f.RankToValue)})
				if err != nil {
					t.Fatalf("%s frame %d block %d: %v", path, c, i, err)
				}
				cn, s, d, m := b.Counts()
				if cn+s+d+m != bi.Positions {
					t.Fatalf("%s: counts %d+%d+%d+%d != %d", path, cn, s, d, m, bi.Positions)
				}
				checkPrefixLookups(t, payload, b)
				checkPartialLookups(t, payload, b, i)
				checkWalkIndex(t, payload, b)
				total[0] += cn
				total[1] += s
				total[2] += d
				total[3] += m
			}
		}
	}
	t.Logf("states over all packs: const %d single %d double %d multi %d", total[0], total[1], total[2], total[3])
}

// checkPrefixLookups is a property over a sample of a block's positions:
// LookupPrefix, fed only the bytes it asks for, finds the same record as
// Lookup on the whole, strictly checked block.
func checkPrefixLookups(t *testing.T, payload []byte, b *Block) {
	t.Helper()
	step := max(1, b.Positions()/64)
	for pos := 0; pos < b.Positions(); pos += step {
		want, err := b.Lookup(pos)
		if err != nil {
			t.Fatal(err)
		}
		have := 0
		for {
			got, need, err := LookupPrefix(payload[:have], len(payload), b.p, pos)
			if err != nil {
				t.Fatalf("position %d with %d bytes: %v", pos, have, err)
			}
			if need == 0 {
				if got.State != want.State || got.DrawEnd != want.DrawEnd || !bytes.Equal(got.entry, want.entry) {
					t.Fatalf("position %d: prefix lookup found %v %v %x, the whole block %v %v %x",
						pos, got.State, got.DrawEnd, got.entry, want.State, want.DrawEnd, want.entry)
				}
				break
			}
			if need <= have || need > len(payload) {
				t.Fatalf("position %d: asked for %d bytes holding %d of %d", pos, need, have, len(payload))
			}
			have = need
		}
	}
}

// checkPartialLookups is the same property for one Partial serving a
// sample of positions in a shuffled order, each lookup given the bytes the
// lookups so far have asked for, so later lookups reuse the counts and
// walked records of earlier ones.
func checkPartialLookups(t *testing.T, payload []byte, b *Block, seed uint64) {
	t.Helper()
	pa, err := NewPartial(b.p, len(payload))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	have := 0
	for range 96 {
		pos := rng.IntN(b.Positions())
		want, err := b.Lookup(pos)
		if err != nil {
			t.Fatal(err)
		}
		for {
			got, need, err := pa.Lookup(payload[:have], pos)
			if err != nil {
				t.Fatalf("position %d with %d bytes: %v", pos, have, err)
			}
			if need == 0 {
				if got.State != want.State || got.DrawEnd != want.DrawEnd || !bytes.Equal(got.entry, want.entry) {
					t.Fatalf("position %d: partial lookup found %v %v %x, the whole block %v %v %x",
						pos, got.State, got.DrawEnd, got.entry, want.State, want.DrawEnd, want.entry)
				}
				break
			}
			if need <= have || need > len(payload) {
				t.Fatalf("position %d: asked for %d bytes holding %d of %d", pos, need, have, len(payload))
			}
			have = need
		}
	}
}

// checkWalkIndex is the same property for a Partial given the walk index of
// the whole block, as the decoded tier keeps it: it finds the records
// Lookup finds on the whole, strictly checked block.
func checkWalkIndex(t *testing.T, payload []byte, b *Block) {
	t.Helper()
	walker, err := NewPartial(b.p, len(payload))
	if err != nil {
		t.Fatal(err)
	}
	if err := walker.WalkAll(payload); err != nil {
		t.Fatal(err)
	}
	pa, err := NewPartial(b.p, len(payload))
	if err != nil {
		t.Fatal(err)
	}
	if err := pa.SetIndex(payload, walker.Index()); err != nil {
		t.Fatal(err)
	}
	step := max(1, b.Positions()/97)
	for pos := 0; pos < b.Positions(); pos += step {
		want, err := b.Lookup(pos)
		if err != nil {
			t.Fatal(err)
		}
		got, need, err := pa.Lookup(payload, pos)
		if err != nil || need != 0 {
			t.Fatalf("position %d: need %d, %v", pos, need, err)
		}
		if got.State != want.State || got.DrawEnd != want.DrawEnd || !bytes.Equal(got.entry, want.entry) {
			t.Fatalf("position %d: indexed lookup found %v %v %x, the whole block %v %v %x",
				pos, got.State, got.DrawEnd, got.entry, want.State, want.DrawEnd, want.entry)
		}
	}
}
