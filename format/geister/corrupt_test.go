package geister

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/tbfs/tbfs/source/mmap"
)

// TestCorruptionSweep flips one byte (seeded) in copies of the shared
// tables, raw and zstd, and probes the material's oracle positions, the
// entries the flip can touch and random positions. The arbiter is the
// intact tables, which the oracle sweeps show equal to the reference's
// answers: every answer from a damaged copy must be the intact one or an
// error. The flips fall a third in the first 256 bytes (frame headers), a
// third in the last 256 (the seek table of a .zst), a third anywhere. Each
// copy keeps the reference's SHA256SUMS beside it, as a mirror of the
// tables would; the same probes without the check (NoVerify) are counted
// too, to show what the manifest catches. One more kind has no manifest:
// id000 recompressed by another seekable-zstd writer, whose seek table
// carries a checksum per frame, so those checksums are all that guards it.
func TestCorruptionSweep(t *testing.T) {
	shared := sharedTables(t)
	sumsFile, err := os.ReadFile(filepath.Join(shared, SumsFile))
	if err != nil {
		t.Fatal(err)
	}
	intact := openDir(t, shared, Options{NoVerify: true})
	byID := map[int][]Position{}
	for _, r := range oracle(t, "values.tsv") {
		p, err := ParseBoard(r["board"])
		if err != nil {
			t.Fatal(err)
		}
		id := r.int(t, "id")
		byID[id] = append(byID[id], p)
	}
	trials := 30
	if raceEnabled || testing.Short() {
		trials = 6
	}
	regions := []string{"head", "tail", "anywhere"}
	ctx := context.Background()
	total := map[bool]int{}
	for k, kind := range []struct {
		id   int
		file string
		// checksummed: recompressed with per-frame checksums and no
		// manifest, instead of the shipped file with the manifest.
		checksummed bool
	}{
		{0, "id000_pb1pr1ob1or1_obsblk.bin", false},
		{0, "id000_pb1pr1ob1or1_obsblk.bin.zst", false},
		{1, "id001_pb1pr1ob1or2_obsblk.bin.zst", false},
		{2, "id002_pb1pr1ob2or1_obsblk.bin.zst", false},
		{3, "id003_pb1pr2ob1or1_obsblk.bin.zst", false},
		{4, "id004_pb2pr1ob1or1_obsblk.bin.zst", false},
		{0, "id000_pb1pr1ob1or1_obsblk.bin.zst", true},
	} {
		orig, err := os.ReadFile(filepath.Join(shared, kind.file))
		if err != nil {
			t.Fatal(err)
		}
		label := kind.file
		if kind.checksummed {
			raw, err := os.ReadFile(filepath.Join(shared, "id000_pb1pr1ob1or1_obsblk.bin"))
			if err != nil {
				t.Fatal(err)
			}
			orig = seekableZstd(t, raw, 8192)
			label += " (frame checksums, no manifest)"
		}
		m, err := MaterialByID(kind.id)
		if err != nil {
			t.Fatal(err)
		}
		var st *seekTable
		if filepath.Ext(kind.file) == ".zst" {
			st, err = parseSeekTable(orig[len(orig)-seekTail(t, orig):], int64(len(orig)))
			if err != nil {
				t.Fatal(err)
			}
		}
		rng := rand.New(rand.NewPCG(26, uint64(k)))
		// Per region: wrong values without and with the check, errors
		// with it, answers compared.
		type tally struct{ wrongBefore, wrongAfter, errorsAfter, answers int }
		tallies := map[string]*tally{}
		for trial := range trials {
			region := regions[trial%len(regions)]
			off := rng.IntN(len(orig))
			switch region {
			case "head":
				off = rng.IntN(min(256, len(orig)))
			case "tail":
				off = len(orig) - 1 - rng.IntN(min(256, len(orig)))
			}
			data := append([]byte(nil), orig...)
			data[off] ^= byte(1 + rng.IntN(255))
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, kind.file), data, 0o644); err != nil {
				t.Fatal(err)
			}
			if !kind.checksummed {
				if err := os.WriteFile(filepath.Join(dir, SumsFile), sumsFile, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			// The entries the flip can reach: the byte itself in a raw
			// file, the frame holding it in a .zst (none for the seek
			// table, where every frame may move).
			var touched []uint64
			if st != nil && st.sums == nil && kind.checksummed {
				t.Fatal("the recompressed table has no frame checksums")
			}
			if st == nil {
				touched = []uint64{uint64(off)}
			} else if f := frameAt(st, uint64(off)); f >= 0 {
				for range 64 {
					touched = append(touched, st.dOff[f]+rng.Uint64N(st.dOff[f+1]-st.dOff[f]))
				}
			}
			for range 200 {
				touched = append(touched, rng.Uint64N(m.Entries()))
			}
			probes := append([]Position(nil), byID[kind.id]...)
			for _, idx := range touched {
				if p, err := Unrank(m, idx); err == nil {
					probes = append(probes, p)
				}
			}
			ta := tallies[region]
			if ta == nil {
				ta = &tally{}
				tallies[region] = ta
			}
			for _, verify := range []bool{false, true} {
				tb, closeTB := openTemp(t, dir, Options{NoVerify: !verify, CacheBytes: 4 << 20})
				for _, p := range probes {
					want, err := intact.DTW(ctx, p)
					if err != nil {
						t.Fatalf("intact %s: %v", p, err)
					}
					got, err := tb.DTW(ctx, p)
					switch {
					case err != nil && !errors.Is(err, ErrCorrupt):
						t.Errorf("%s byte %d: DTW(%s): %v is not ErrCorrupt", label, off, p, err)
					case err != nil && verify:
						ta.errorsAfter++
					case err == nil && got != want && verify:
						ta.wrongAfter++
						if ta.wrongAfter <= 5 {
							t.Errorf("%s byte %d (%s): DTW(%s) = %d, intact %d, no error", label, off, region, p, got, want)
						}
					case err == nil && got != want:
						ta.wrongBefore++
					}
					if verify {
						ta.answers++
					}
				}
				closeTB()
			}
		}
		for _, region := range regions {
			ta := tallies[region]
			t.Logf("%s, flips in %s: %d answers; %d wrong values without the manifest check, %d with it (%d errors)",
				label, region, ta.answers, ta.wrongBefore, ta.wrongAfter, ta.errorsAfter)
			total[false] += ta.wrongBefore
			total[true] += ta.wrongAfter
		}
	}
	t.Logf("%d flips per table file: %d wrong values without the manifest check, %d with it", trials, total[false], total[true])
}

// seekTail returns the length of a seekable-zstd file's seek-table frame.
func seekTail(t *testing.T, data []byte) int {
	t.Helper()
	n, err := seekTailSize(data[len(data)-seekFooterSize:])
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}

// frameAt returns the frame whose compressed bytes hold file offset off,
// or -1 when off lies in the seek table.
func frameAt(st *seekTable, off uint64) int {
	for f := range st.frames() {
		if off < st.cOff[f+1] {
			return f
		}
	}
	return -1
}

// openTemp opens a Tablebase over dir and returns it with its closer, for
// tests that open many and should not hold them all to the end.
func openTemp(t testing.TB, dir string, opts Options) (*Tablebase, func()) {
	t.Helper()
	src, err := mmap.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := Open(opts, src)
	if err != nil {
		t.Fatal(err)
	}
	return tb, func() {
		tb.Close()
		src.Close()
	}
}
