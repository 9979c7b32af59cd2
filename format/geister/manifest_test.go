package geister

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// writeManifests writes, into a copy of the shared tables' folder (every
// .zst and the reference's SHA256SUMS), the frame manifest of every table,
// each written by Manifest only after the table verified against the
// reference's sums; it returns the folder and the manifests by material.
func writeManifests(t testing.TB) (string, map[int][]byte) {
	t.Helper()
	shared := sharedTables(t)
	tb := openDir(t, shared, Options{})
	out := map[int][]byte{}
	for id := range 5 {
		m, err := MaterialByID(id)
		if err != nil {
			t.Fatal(err)
		}
		b, err := tb.Manifest(context.Background(), m)
		if err != nil {
			t.Fatalf("%v: %v", m, err)
		}
		out[id] = b
	}
	return shared, out
}

// TestFrameManifest: with a frame manifest beside it a table answers as
// the reference does, and a damaged or misplaced one fails with
// ErrCorrupt: the chunk a flipped byte falls in, every read of a table
// swapped with another of the same size, a manifest whose sha256 the sums
// contradict. Arbiters: the oracle's values.tsv rows (every row of the
// material), and the damage itself for the errors.
func TestFrameManifest(t *testing.T) {
	shared, mfs := writeManifests(t)
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(shared, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	m0, _ := MaterialByID(0)
	m1, _ := MaterialByID(1)
	m2, _ := MaterialByID(2)
	raw0 := read(m0.FileName())
	flipped := append([]byte(nil), raw0...)
	const flipAt = 300_000
	flipped[flipAt] ^= 0x10
	mf0, err := decodeFrameManifest(mfs[0], m0)
	if err != nil {
		t.Fatal(err)
	}
	mf0.rawSum[0] ^= 1
	stale := mf0.encode()
	rows := map[int][]oracleRow{}
	for _, r := range oracle(t, "values.tsv") {
		rows[r.int(t, "id")] = append(rows[r.int(t, "id")], r)
	}
	man := func(m Material) string { return m.FileName() + ManifestSuffix }
	for _, c := range []struct {
		name  string
		files map[string][]byte
		ids   []int
		// bad says which rows must fail: all, none, or those whose
		// entry lies in the flipped chunk.
		bad string
	}{
		{"raw with manifest and sums", map[string][]byte{m0.FileName(): raw0, man(m0): mfs[0], SumsFile: read(SumsFile)}, []int{0}, "none"},
		{"zst with manifest, no sums", map[string][]byte{m1.FileName() + ".zst": read(m1.FileName() + ".zst"), man(m1): mfs[1]}, []int{1}, "none"},
		{"flipped raw with manifest", map[string][]byte{m0.FileName(): flipped, man(m0): mfs[0]}, []int{0}, "chunk"},
		{"id001 and id002 swapped", map[string][]byte{
			m1.FileName() + ".zst": read(m2.FileName() + ".zst"), man(m1): mfs[1],
			m2.FileName() + ".zst": read(m1.FileName() + ".zst"), man(m2): mfs[2]}, []int{1, 2}, "all"},
		{"manifest the sums contradict", map[string][]byte{m0.FileName(): raw0, man(m0): stale, SumsFile: read(SumsFile)}, []int{0}, "all"},
		{"another material's manifest", map[string][]byte{m1.FileName() + ".zst": read(m1.FileName() + ".zst"), man(m1): mfs[2]}, []int{1}, "all"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, b := range c.files {
				if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			tb, closeTB := openTemp(t, dir, Options{})
			defer closeTB()
			for _, id := range c.ids {
				checkRowsAgainst(t, tb, rows[id], c.bad, flipAt)
			}
		})
	}
	// A table its sums do not list gets no manifest: there is nothing to
	// check it against.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, m0.FileName()), raw0, 0o644); err != nil {
		t.Fatal(err)
	}
	tb, closeTB := openTemp(t, dir, Options{})
	defer closeTB()
	if _, err := tb.Manifest(context.Background(), m0); err == nil {
		t.Error("Manifest wrote a manifest for a table no sums list")
	}
}

// TestManifestOf: a builder's manifest of the raw bytes is the one Manifest
// writes from the reference's table after checking it against the
// reference's SHA256SUMS (the arbiter).
func TestManifestOf(t *testing.T) {
	shared, mfs := writeManifests(t)
	m, _ := MaterialByID(0)
	raw, err := os.ReadFile(filepath.Join(shared, m.FileName()))
	if err != nil {
		t.Fatal(err)
	}
	got, err := ManifestOf(m, raw)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, mfs[0]) {
		t.Error("ManifestOf differs from Manifest of the verified table")
	}
	if _, err := ManifestOf(m, raw[1:]); err == nil {
		t.Error("ManifestOf accepted bytes of the wrong size")
	}
}

// TestVerify: Verify's verdict on the committed id000 fixture in each way
// its folder may hold it, the manifest it returns the one Manifest writes
// from the fixture verified against the reference's SHA256SUMS (the
// arbiter, with the damage).
func TestVerify(t *testing.T) {
	ctx := context.Background()
	fixture := testenv.Testdata(t, "geister")
	m, _ := MaterialByID(0)
	want, err := openDir(t, fixture, Options{}).Manifest(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(fixture, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	raw, zst, sumsFile := m.FileName(), m.FileName()+".zst", read(SumsFile)
	var zstLine []byte
	for _, line := range bytes.SplitAfter(sumsFile, []byte("\n")) {
		if bytes.HasSuffix(bytes.TrimSpace(line), []byte("  "+zst)) {
			zstLine = line
		}
	}
	flippedZst := append([]byte(nil), read(zst)...)
	flippedZst[len(flippedZst)/2] ^= 0x10
	stale := append([]byte(nil), want...)
	stale[len(stale)-20] ^= 1
	man := raw + ManifestSuffix
	for _, c := range []struct {
		name    string
		files   map[string][]byte
		opts    Options
		listed  bool
		corrupt bool
	}{
		{"raw and sums", map[string][]byte{raw: read(raw), SumsFile: sumsFile}, Options{}, true, false},
		{"zst and sums", map[string][]byte{zst: read(zst), SumsFile: sumsFile}, Options{}, true, false},
		// The manifest stands in for the whole check on open, so only
		// Verify hashes the file for its own sum.
		{"zst, its own sum only, and manifest", map[string][]byte{zst: read(zst), SumsFile: zstLine, man: want}, Options{}, true, false},
		{"flipped zst, its own sum only, and manifest", map[string][]byte{zst: flippedZst, SumsFile: zstLine, man: want}, Options{}, false, true},
		{"no sums", map[string][]byte{raw: read(raw)}, Options{}, false, false},
		{"damaged manifest", map[string][]byte{raw: read(raw), SumsFile: sumsFile, man: stale}, Options{}, false, true},
		{"damaged manifest ignored", map[string][]byte{raw: read(raw), SumsFile: sumsFile, man: stale}, Options{NoManifests: true}, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, b := range c.files {
				if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var last, total int64
			got, err := openDir(t, dir, c.opts).Verify(ctx, m, func(done, n int64) { last, total = done, n })
			switch {
			case c.corrupt:
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("Verify = %+v, %v; want ErrCorrupt", got, err)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if got.Listed != c.listed || got.Legacy || got.Source != 0 || (c.listed && !bytes.Equal(got.Manifest, want)) || (!c.listed && got.Manifest != nil) {
				t.Errorf("Verify = %+v (manifest %d bytes), want listed %v", got, len(got.Manifest), c.listed)
			}
			if total != int64(m.Entries()) || last != total {
				t.Errorf("progress ended at %d of %d, want %d", last, total, m.Entries())
			}
		})
	}
}

// TestCandidates: the materials whose table files a listable folder holds,
// by any name Open looks for, and no others.
func TestCandidates(t *testing.T) {
	m0, _ := MaterialByID(0)
	m5, _ := MaterialByID(5)
	m7, _ := MaterialByID(7)
	dir := t.TempDir()
	for _, name := range []string{m0.FileName() + ".zst", strings.TrimSuffix(m5.FileName(), "_obsblk.bin") + ".bin", m7.FileName() + ".sha256", SumsFile} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := openDir(t, dir, Options{}).Candidates(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != m0 || got[1] != m5 {
		t.Errorf("Candidates = %v, want [%v %v]", got, m0, m5)
	}
}
