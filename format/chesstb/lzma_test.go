package chesstb

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	tblzma "github.com/tbfs/tbfs/format/chesstb/internal/lzma"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/ulikunitz/xz/lzma"
)

// decodeWithLibrary is the reference decode: github.com/ulikunitz/xz/lzma
// over the block with a classic .lzma header built from its tail properties.
func decodeWithLibrary(comp []byte, size uint64) ([]byte, error) {
	if len(comp) < lzmaPropsSize {
		return nil, errors.New("no LZMA properties")
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

// distanceBlocks yields the compressed LZMA blocks of every DTZ and DTM
// table and every DTM50 and DTC pack in dir (in its kind folders or its
// root), with the size each decodes to.
func distanceBlocks(t testing.TB, dir string, limit int, fn func(name string, comp []byte, size uint64)) {
	t.Helper()
	ctx := context.Background()
	tb := openDirs(t, Options{}, dir)
	n := 0
	for _, k := range []Kind{KindDTZ, KindDTM, KindDTM50, KindDTC} {
		var names []string
		for _, sub := range []string{kindInfo[k].dir, "."} {
			ents, _ := os.ReadDir(filepath.Join(dir, sub))
			for _, e := range ents {
				if name, ok := strings.CutSuffix(e.Name(), kindInfo[k].ext); ok && !slices.Contains(names, name) {
					names = append(names, name)
				}
			}
		}
		for _, name := range names {
			m, err := parseMaterial(name)
			if err != nil {
				continue // a pair table or another material form
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
					size := f.blockBytes(b)
					if k == KindDTM50 || k == KindDTC {
						size = f.usizes.get(b)
					}
					fn(tf.name, comp, size)
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
	dirs := []string{testenv.Testdata(t, "chesstb"), testenv.Testdata(t, "chesstb", "packs")}
	if testenv.HasShared(t, "chesstb") && !raceEnabled && !testing.Short() {
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
			z, err := tblzma.NewDecoder(comp[:len(comp)-lzmaPropsSize], comp[len(comp)-lzmaPropsSize:], int(size))
			if err != nil {
				t.Fatal(err)
			}
			out := make([]byte, size)
			for step := 1; z.Pos() < len(out); step = step*3 + 7 {
				if _, err := z.Decode(out, z.Pos()+step); err != nil {
					t.Fatalf("%s: resumed decode at %d: %v", name, z.Pos(), err)
				}
			}
			if !bytes.Equal(out, want) {
				t.Fatalf("%s: resumed decode differs", name)
			}
			// Through a block whose buffer grows with what is decoded.
			z, err = tblzma.NewDecoder(comp[:len(comp)-lzmaPropsSize], comp[len(comp)-lzmaPropsSize:], int(size))
			if err != nil {
				t.Fatal(err)
			}
			lb := newLZMABlock(z, int(size))
			grown := 0
			lb.onGrow = func(delta int64) { grown += int(delta) }
			var data []byte
			for n := 1; ; n = n*5/2 + 3 {
				if data, err = lb.upTo(n); err != nil {
					t.Fatalf("%s: block decode to %d: %v", name, n, err)
				}
				if n >= int(size) {
					break
				}
				if done := int(lb.done.Load()); done < n || !bytes.Equal(data[:done], want[:done]) || grown != len(data) {
					t.Fatalf("%s: block decoded to %d of %d differs (buffer %d, grown %d)", name, done, n, len(data), grown)
				}
			}
			if !bytes.Equal(data, want) {
				t.Fatalf("%s: block decode differs", name)
			}
			blocks++
		})
		t.Logf("%s: %d blocks agree", dir, blocks)
	}
}

// BenchmarkLZMABlock decodes the largest distance block and the largest
// pack block of the fixtures, with our decoder and with the library.
func BenchmarkLZMABlock(b *testing.B) {
	for _, set := range []struct{ name, dir string }{
		{"distance", testenv.Testdata(b, "chesstb")},
		{"pack", testenv.Testdata(b, "chesstb", "packs")},
	} {
		var comp []byte
		var size uint64
		distanceBlocks(b, set.dir, 1<<30, func(name string, c []byte, s uint64) {
			if pack := strings.HasSuffix(name, "50") || strings.HasSuffix(name, "dtc"); pack == (set.name == "pack") && s > size {
				comp, size = c, s
			}
		})
		b.Run(set.name+"/ours", func(b *testing.B) {
			b.SetBytes(int64(size))
			cpu0 := cpuTime()
			for b.Loop() {
				if _, err := decodeLZMA(comp, size); err != nil {
					b.Fatal(err)
				}
			}
			reportMBPerCPU(b, size, cpu0)
		})
		b.Run(set.name+"/library", func(b *testing.B) {
			b.SetBytes(int64(size))
			cpu0 := cpuTime()
			for b.Loop() {
				if _, err := decodeWithLibrary(comp, size); err != nil {
					b.Fatal(err)
				}
			}
			reportMBPerCPU(b, size, cpu0)
		})
	}
}

// reportMBPerCPU adds the decoded megabytes per CPU second, the figure that
// stays comparable on a machine shared with other work.
func reportMBPerCPU(b *testing.B, size uint64, cpu0 time.Duration) {
	if cpu := cpuTime() - cpu0; cpu > 0 {
		b.ReportMetric(float64(b.N)*float64(size)/1e6/cpu.Seconds(), "MB/cpu-s")
	}
}

// BenchmarkLZMAShipped decodes every distance block and every pack block of
// the shared shipped tables whole, the work a cold pass with a large cache
// does, and reports decoded megabytes per CPU second.
func BenchmarkLZMAShipped(b *testing.B) {
	dir := testenv.Shared(b, "chesstb", "shipped")
	type block struct {
		comp []byte
		size uint64
	}
	sets := map[string][]block{}
	distanceBlocks(b, dir, 1<<30, func(name string, comp []byte, size uint64) {
		set := "distance"
		if strings.HasSuffix(name, "50") || strings.HasSuffix(name, "dtc") {
			set = "pack"
		}
		sets[set] = append(sets[set], block{slices.Clone(comp), size})
	})
	for _, set := range []string{"distance", "pack"} {
		var total, comp uint64
		for _, bl := range sets[set] {
			total += bl.size
			comp += uint64(len(bl.comp))
		}
		b.Run(set, func(b *testing.B) {
			b.Logf("%d blocks, %d bytes from %d", len(sets[set]), total, comp)
			b.SetBytes(int64(total))
			cpu0 := cpuTime()
			for b.Loop() {
				for _, bl := range sets[set] {
					if _, err := decodeLZMA(bl.comp, bl.size); err != nil {
						b.Fatal(err)
					}
				}
			}
			reportMBPerCPU(b, total, cpu0)
		})
	}
}
