package testdata

import (
	"io/fs"
	"path"
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
