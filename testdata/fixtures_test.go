package testdata

import (
	"bytes"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"testing"
)

// TestChessTBRootsListEachTableOnce walks every root as its own file system
// and checks that, together, they list each embedded table file exactly
// once: the arbiter is the embedded file set itself.
func TestChessTBRootsListEachTableOnce(t *testing.T) {
	want := map[string]int{}
	err := fs.WalkDir(ChessTB, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			want[p] = 0
		}
		return err
	})
	if err != nil || len(want) == 0 {
		t.Fatalf("embedded files: %d, %v", len(want), err)
	}
	for _, root := range ChessTBRoots {
		fsys, err := ChessTBRoot(root)
		if err != nil {
			t.Fatal(err)
		}
		err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			full := path.Join(root, p)
			if _, ok := want[full]; !ok {
				t.Errorf("root %s lists %s, which is not embedded", root, p)
			}
			want[full]++
			// Every listed file opens and reads.
			if _, err := fs.ReadFile(fsys, p); err != nil {
				t.Errorf("root %s: %v", root, err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for p, n := range want {
		if n != 1 {
			t.Errorf("%s listed %d times over the roots, want once", p, n)
		}
	}
}

// TestGeisterRootHoldsTheFixtureTable: the embedded Geister root holds the
// committed seekable-zstd table byte for byte, and the SHA256SUMS beside it
// (the arbiter is the committed files themselves).
func TestGeisterRootHoldsTheFixtureTable(t *testing.T) {
	fsys, err := GeisterRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"id000_pb1pr1ob1or1_obsblk.bin.zst", "SHA256SUMS"} {
		got, err := fs.ReadFile(fsys, name)
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join("geister", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("embedded %s differs from testdata/geister/%s", name, name)
		}
	}
}

// TestSyzygyRootHoldsTheFixtureTables: the embedded Syzygy root holds
// every table file of testdata/syzygy byte for byte and nothing else (its
// README and Fathom rows stay out of binaries); the arbiter is the
// committed folder itself.
func TestSyzygyRootHoldsTheFixtureTables(t *testing.T) {
	fsys, err := SyzygyRoot()
	if err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir("syzygy")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, e := range ents {
		if ext := path.Ext(e.Name()); ext == ".rtbw" || ext == ".rtbz" {
			want[e.Name()] = true
		}
	}
	got, err := fs.ReadDir(fsys, ".")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) || len(want) == 0 {
		t.Errorf("embedded %d files, testdata/syzygy holds %d tables", len(got), len(want))
	}
	for _, e := range got {
		if !want[e.Name()] {
			t.Errorf("embedded %s, not a table of testdata/syzygy", e.Name())
			continue
		}
		b, err := fs.ReadFile(fsys, e.Name())
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.ReadFile(filepath.Join("syzygy", e.Name()))
		if err != nil || !bytes.Equal(b, f) {
			t.Errorf("embedded %s differs from testdata/syzygy/%s (%v)", e.Name(), e.Name(), err)
		}
	}
}
