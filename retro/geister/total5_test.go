//go:build !race

package geister

import (
	"context"
	"testing"

	geistertb "github.com/tbfs/tbfs/format/geister"
)

// TestTotal5 builds every material up to 5 pieces (id000..id004, 45 M
// entries) with the self-check on and compares each raw file byte for byte
// with the reference (SHA256SUMS), and each .zst with its raw file. It is
// left out of -race runs, where it would take too long; .ci/test.sh runs it
// without -race.
func TestTotal5(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 45 M entries")
	}
	dir := t.TempDir()
	if err := Build(context.Background(), BuildOptions{Out: dir, UptoTotal: 5, Check: true}); err != nil {
		t.Fatal(err)
	}
	sums := referenceSums(t)
	for id := 0; id <= 4; id++ {
		m, err := geistertb.MaterialByID(id)
		if err != nil {
			t.Fatal(err)
		}
		checkOutput(t, dir, m, sums)
	}
}
