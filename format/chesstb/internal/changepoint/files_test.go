package changepoint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/internal/testenv"
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
				total[0] += cn
				total[1] += s
				total[2] += d
				total[3] += m
			}
		}
	}
	t.Logf("states over all packs: const %d single %d double %d multi %d", total[0], total[1], total[2], total[3])
}
