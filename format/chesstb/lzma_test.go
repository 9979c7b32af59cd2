package chesstb

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/internal/testenv"
	"github.com/ulikunitz/xz/lzma"
)

// decodeWithLibrary is the reference decode: github.com/ulikunitz/xz/lzma
// over the block with a classic .lzma header built from its tail properties.
func decodeWithLibrary(comp []byte, size uint64) ([]byte, error) {
	if len(comp) < lzmaPropsSize {
		return nil, errLZMA
	}
	props := comp[len(comp)-lzmaPropsSize:]
	var hdr [13]byte
	copy(hdr[:5], props)
	binary.LittleEndian.PutUint64(hdr[5:], size)
	r, err := lzma.NewReader(io.MultiReader(bytes.NewReader(hdr[:]), bytes.NewReader(comp[:len(comp)-lzmaPropsSize])))
	if err != nil {
		return nil, err
	}
	out := make([]byte, size)
	if _, err := io.ReadFull(r, out); err != nil {
		return nil, err
	}
	return out, nil
}

// distanceBlocks yields the compressed blocks of every DTZ/DTM table in dir.
func distanceBlocks(t testing.TB, dir string, limit int, fn func(name string, comp []byte, size uint64)) {
	t.Helper()
	ctx := context.Background()
	tb := openDirs(t, Options{}, dir)
	n := 0
	for _, k := range []Kind{KindDTZ, KindDTM} {
		ents, _ := os.ReadDir(filepath.Join(dir, kindInfo[k].dir))
		for _, e := range ents {
			name, ok := strings.CutSuffix(e.Name(), kindInfo[k].ext)
			if !ok {
				continue
			}
			m, err := parseMaterial(name)
			if err != nil {
				t.Fatal(err)
			}
			tf, err := tb.table(ctx, k, m)
			if err != nil {
				t.Fatal(err)
			}
			for c := range 2 {
				f := &tf.hdr.frames[c]
				if !f.stored() {
					continue
				}
				for b := range f.blockCnt {
					if f.skipBlock(b) {
						continue
					}
					comp, err := tf.readCompressed(ctx, c, b)
					if err != nil {
						t.Fatal(err)
					}
					fn(tf.name, comp, f.blockBytes(b))
					if n++; n >= limit {
						return
					}
				}
			}
		}
	}
}

// TestLZMAAgainstLibrary decodes every distance block of the fixture tables
// (and of the shared set when present) with our decoder, whole and in
// resumed pieces, and compares with the library's output.
func TestLZMAAgainstLibrary(t *testing.T) {
	dirs := []string{testenv.Testdata(t, "chesstb")}
	if _, err := os.Stat(filepath.Join(testenv.RepoRoot(t), "..", "shared", "chesstb")); err == nil && !raceEnabled && !testing.Short() {
		dirs = append(dirs, testenv.Shared(t, "chesstb", "shipped"))
	}
	for _, dir := range dirs {
		blocks := 0
		distanceBlocks(t, dir, 1<<30, func(name string, comp []byte, size uint64) {
			want, err := decodeWithLibrary(comp, size)
			if err != nil {
				t.Fatalf("%s: library: %v", name, err)
			}
			got, err := decodeLZMA(comp, size)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%s: whole decode differs (err %v)", name, err)
			}
			// Resumed in uneven steps.
			z, err := newLZMADecoder(comp[:len(comp)-lzmaPropsSize], comp[len(comp)-lzmaPropsSize:])
			if err != nil {
				t.Fatal(err)
			}
			out := make([]byte, size)
			pos := 0
			for step := 1; pos < len(out); step = step*3 + 7 {
				if err := z.decode(out, &pos, pos+step); err != nil {
					t.Fatalf("%s: resumed decode at %d: %v", name, pos, err)
				}
			}
			if !bytes.Equal(out, want) {
				t.Fatalf("%s: resumed decode differs", name)
			}
			blocks++
		})
		t.Logf("%s: %d blocks agree", dir, blocks)
	}
}

func BenchmarkLZMABlock(b *testing.B) {
	var comp []byte
	var size uint64
	distanceBlocks(b, testenv.Testdata(b, "chesstb"), 1<<30, func(_ string, c []byte, s uint64) {
		if s > size {
			comp, size = c, s
		}
	})
	b.Run("ours", func(b *testing.B) {
		b.SetBytes(int64(size))
		for b.Loop() {
			if _, err := decodeLZMA(comp, size); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("library", func(b *testing.B) {
		b.SetBytes(int64(size))
		for b.Loop() {
			if _, err := decodeWithLibrary(comp, size); err != nil {
				b.Fatal(err)
			}
		}
	})
}
