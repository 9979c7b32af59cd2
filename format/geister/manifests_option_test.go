package geister

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/source/fssource"
	"github.com/tbfs/tbfs/source/mmap"
)

// TestManifestsOption: frame manifests kept apart from the tables, in
// Options.Manifests, are used as if beside them. The tables (the committed
// id000 fixture with the shipped SHA256SUMS) sit in a read-only source;
// the manifest was written by Manifest only after the table verified
// against those sums. A flipped table byte then fails only the rows of the
// chunk it falls in, where the whole-file check (no manifest found) fails
// every row; a manifest there for another version or material is refused;
// without the option a manifest beside the table is used, as before.
// Arbiters: values_id000.tsv (the reference's values) and the damage.
func TestManifestsOption(t *testing.T) {
	ctx := context.Background()
	fixture := testenv.Testdata(t, "geister")
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(fixture, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	m0, _ := MaterialByID(0)
	m1, _ := MaterialByID(1)
	good, err := openDir(t, fixture, Options{}).Manifest(ctx, m0)
	if err != nil {
		t.Fatal(err)
	}
	mf, err := decodeFrameManifest(good, m0)
	if err != nil {
		t.Fatal(err)
	}
	mf.rawSum[0] ^= 1
	otherVersion := mf.encode()
	otherMaterial, err := ManifestOf(m1, make([]byte, m1.Entries()))
	if err != nil {
		t.Fatal(err)
	}
	raw, sumsFile := read(m0.FileName()), read(SumsFile)
	const flipAt = 300_000
	flipped := append([]byte(nil), raw...)
	flipped[flipAt] ^= 0x10
	man := m0.FileName() + ManifestSuffix
	rows := readTSV(t, filepath.Join(fixture, "values_id000.tsv"))

	for _, c := range []struct {
		name   string
		table  []byte
		beside []byte            // a manifest beside the table
		dir    map[string][]byte // the Manifests folder; nil: no option
		// bad says which rows must fail: all, none, or those whose
		// entry lies in the flipped chunk.
		bad string
	}{
		{"intact, manifest in folder", raw, nil, map[string][]byte{man: good}, "none"},
		{"flipped, manifest in folder", flipped, nil, map[string][]byte{man: good}, "chunk"},
		{"intact, folder without it", raw, nil, map[string][]byte{}, "none"},
		{"flipped, folder without it", flipped, nil, map[string][]byte{}, "all"},
		{"flipped, folder without it, one beside", flipped, good, map[string][]byte{}, "all"},
		{"intact, another version's manifest in folder", raw, nil, map[string][]byte{man: otherVersion}, "all"},
		{"intact, another material's manifest in folder", raw, nil, map[string][]byte{man: otherMaterial}, "all"},
		{"flipped, no option", flipped, nil, nil, "all"},
		{"flipped, no option, manifest beside", flipped, good, nil, "chunk"},
	} {
		t.Run(c.name, func(t *testing.T) {
			files := fstest.MapFS{
				m0.FileName(): {Data: c.table},
				SumsFile:      {Data: sumsFile},
			}
			if c.beside != nil {
				files[man] = &fstest.MapFile{Data: c.beside}
			}
			tables := fssource.New(files, "tables")
			defer tables.Close()
			var opts Options
			if c.dir != nil {
				dir := t.TempDir()
				for name, b := range c.dir {
					if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				src, err := mmap.New(dir)
				if err != nil {
					t.Fatal(err)
				}
				defer src.Close()
				opts.Manifests = src
			}
			tb, err := Open(opts, tables)
			if err != nil {
				t.Fatal(err)
			}
			defer tb.Close()
			checkRowsAgainst(t, tb, rows, c.bad, flipAt)
		})
	}
}

// checkRowsAgainst probes every oracle row: the rows bad names ("all",
// "none", or "chunk": those whose entry lies in the manifest chunk holding
// entry flipAt) must fail with ErrCorrupt, the others give the oracle's
// value. Terminal positions are answered without the table.
func checkRowsAgainst(t *testing.T, tb *Tablebase, rows []oracleRow, bad string, flipAt uint64) {
	t.Helper()
	n, failing := 0, 0
	for _, r := range rows {
		p, err := ParseBoard(r["board"])
		if err != nil {
			t.Fatal(err)
		}
		want := uint8(r.int(t, "value"))
		got, err := tb.DTW(context.Background(), p)
		_, idx, _ := Rank(p)
		_, term := p.Terminal()
		mustFail := !term && (bad == "all" || bad == "chunk" && idx/manifestChunk == flipAt/manifestChunk)
		switch {
		case mustFail && !errors.Is(err, ErrCorrupt):
			t.Fatalf("id %s pos %s: DTW = %d, %v; want ErrCorrupt", r["id"], r["pos_id"], got, err)
		case !mustFail && (err != nil || got != want):
			t.Fatalf("id %s pos %s: DTW = %d, %v; oracle %d", r["id"], r["pos_id"], got, err, want)
		}
		n++
		if mustFail {
			failing++
		}
	}
	if n == 0 || (bad != "none") != (failing > 0) || (bad == "chunk" && failing == n) {
		t.Fatalf("%d rows, %d of them in damage's reach", n, failing)
	}
}
