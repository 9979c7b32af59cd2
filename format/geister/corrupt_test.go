package geister

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/tbfs/tbfs/geister"
	"github.com/tbfs/tbfs/internal/testkit/geisteroracle"
	"github.com/tbfs/tbfs/source/mmap"
)

// TestCorruptionSweep flips one byte (seeded) in copies of the shared
// tables, raw and zstd, and probes the material's oracle positions, the
// entries the flip can touch and random positions. The arbiter is the
// intact tables, which the oracle sweeps show equal to the reference's
// answers: every answer from a damaged copy must be the intact one or an
// error. The flips fall a third in the first 256 bytes (frame headers), a
// third in the last 256 (the seek table of a .zst), a third anywhere; one
// more trial swaps the same-size id001 and id002. Each damaged copy is
// probed three ways (sweepConfigs): with the structural checks and answer
// invariants alone, counted to show what they leave; with the reference's
// SHA256SUMS beside it, as a mirror of the tables would have; with frame
// manifests (written by Manifest from the intact tables) beside it. The
// last two must give no wrong value. One more kind has neither: id000
// recompressed by another seekable-zstd writer, whose seek table carries a
// checksum per frame, so those checksums are all that guards it.
func TestCorruptionSweep(t *testing.T) {
	shared, manifests := writeManifests(t)
	intact := openDir(t, shared, Options{NoVerify: true})
	byID := map[int][]geister.Position{}
	for _, r := range geisteroracle.Shared(t, "values.tsv") {
		p, err := geister.ParseBoard(r["board"])
		if err != nil {
			t.Fatal(err)
		}
		id := r.Int(t, "id")
		byID[id] = append(byID[id], p)
	}
	trials := 30
	if raceEnabled || testing.Short() {
		trials = 6
	}
	regions := []string{"head", "tail", "anywhere"}
	ctx := context.Background()
	total := map[string]int{}
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
		tallies := map[string]*sweepTally{}
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
			probes := append([]geister.Position(nil), byID[kind.id]...)
			for _, idx := range touched {
				if p, err := Unrank(m, idx); err == nil {
					probes = append(probes, p)
				}
			}
			files := map[string][]byte{kind.file: data}
			sweepTrial(t, ctx, intact, fmt.Sprintf("%s byte %d (%s)", label, off, region), files, kind.checksummed, manifests, probes, tallies, region)
		}
		for _, region := range regions {
			tallies[region].log(t, label+", flips in "+region, total)
		}
	}
	// Same-size tables swapped: id001's file under id002's name and the
	// other way round (2,752 of 12,511 oracle boards were wrong before).
	{
		m1, _ := MaterialByID(1)
		m2, _ := MaterialByID(2)
		a, err := os.ReadFile(filepath.Join(shared, m1.FileName()+".zst"))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(shared, m2.FileName()+".zst"))
		if err != nil {
			t.Fatal(err)
		}
		var probes []geister.Position
		for _, id := range []int{1, 2} {
			probes = append(probes, byID[id]...)
		}
		tallies := map[string]*sweepTally{}
		files := map[string][]byte{m1.FileName() + ".zst": b, m2.FileName() + ".zst": a}
		sweepTrial(t, ctx, intact, "id001 and id002 swapped", files, false, manifests, probes, tallies, "swap")
		tallies["swap"].log(t, "id001 and id002 swapped", total)
	}
	for _, cfg := range sweepConfigs {
		t.Logf("%s: %d wrong values in all (%d flips per table file, and the swap)", cfg.name, total[cfg.name], trials)
	}
}

// sweepConfig is one way the sweep opens a damaged copy: with the
// structural checks and answer invariants alone (NoVerify), with the
// reference's SHA256SUMS beside it, with frame manifests beside it (no
// sums). The last two must give no wrong value.
type sweepConfig struct {
	name        string
	sums        bool
	manifests   bool
	mustBeExact bool
}

var sweepConfigs = []sweepConfig{
	{name: "structural and invariants only"},
	{name: "SHA256SUMS", sums: true, mustBeExact: true},
	{name: "frame manifest", manifests: true, mustBeExact: true},
}

// sweepTally counts, for one kind of damage, per configuration, the
// answers compared, the wrong values and the errors.
type sweepTally struct {
	answers     int
	wrong, errs map[string]int
}

func (ta *sweepTally) log(t *testing.T, what string, total map[string]int) {
	t.Helper()
	for _, cfg := range sweepConfigs {
		t.Logf("%s, %s: %d answers, %d wrong values, %d errors", what, cfg.name, ta.answers, ta.wrong[cfg.name], ta.errs[cfg.name])
		total[cfg.name] += ta.wrong[cfg.name]
	}
}

// sweepTrial writes files (damaged copies) into a fresh folder, probes
// every position in each configuration and counts the answers that
// differ from the intact tables'. In the asserted configurations a wrong
// value fails the test. checksummed files have neither sums nor manifests
// in any configuration: their seek table's frame checksums are their only
// guard.
func sweepTrial(t *testing.T, ctx context.Context, intact *Tablebase, label string, files map[string][]byte, checksummed bool, manifests map[int][]byte, probes []geister.Position, tallies map[string]*sweepTally, key string) {
	t.Helper()
	ta := tallies[key]
	if ta == nil {
		ta = &sweepTally{wrong: map[string]int{}, errs: map[string]int{}}
		tallies[key] = ta
	}
	sumsFile, err := os.ReadFile(filepath.Join(sharedTables(t), SumsFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, cfg := range sweepConfigs {
		dir := t.TempDir()
		write := func(name string, b []byte) {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for name, b := range files {
			write(name, b)
		}
		if cfg.sums && !checksummed {
			write(SumsFile, sumsFile)
		}
		if cfg.manifests && !checksummed {
			for id, b := range manifests {
				m, _ := MaterialByID(id)
				write(m.FileName()+ManifestSuffix, b)
			}
		}
		tb, closeTB := openTemp(t, dir, Options{NoVerify: !cfg.sums && !cfg.manifests, CacheBytes: 4 << 20})
		wrong := 0
		for _, p := range probes {
			want, err := intact.DTW(ctx, p)
			if err != nil {
				t.Fatalf("intact %s: %v", p, err)
			}
			got, err := tb.DTW(ctx, p)
			switch {
			case err != nil && !errors.Is(err, ErrCorrupt):
				t.Errorf("%s: DTW(%s): %v is not ErrCorrupt", label, p, err)
			case err != nil:
				ta.errs[cfg.name]++
			case got != want:
				ta.wrong[cfg.name]++
				wrong++
				if cfg.mustBeExact && wrong <= 3 {
					t.Errorf("%s, %s: DTW(%s) = %d, intact %d, no error", label, cfg.name, p, got, want)
				}
			}
		}
		closeTB()
	}
	ta.answers += len(probes)
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
