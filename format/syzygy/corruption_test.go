package syzygy

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/tbfs/tbfs/internal/testkit/chesstboracle"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/source/mmap"
)

// copyFixtures copies the fixture tables into a temporary folder, with
// file's byte at flips toggled.
func copyFixtures(t *testing.T, file string, flips ...int) string {
	t.Helper()
	src := testenv.Testdata(t, "syzygy")
	dir := t.TempDir()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == file {
			for _, at := range flips {
				b[at] ^= 0x5a
			}
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestCorruptTables flips bytes across a few fixture files and probes every
// fixture row: each answer must be ErrCorrupt or the oracle's value, never
// another value (arbiter: Fathom's rows). With SkipChecksums only the
// structure guards the reader, so there the test asks only for no panic and
// no hang.
func TestCorruptTables(t *testing.T) {
	rows := readOracle(t, testenv.Testdata(t, "syzygy", "probe.tsv"))
	if raceEnabled {
		rows = chesstboracle.Sample(rows, 150, true)
	}
	ctx := context.Background()
	for _, file := range []string{"KPvK.rtbw", "KPvK.rtbz", "KRvKR.rtbw", "KQvK.rtbz"} {
		info, err := os.Stat(testenv.Testdata(t, "syzygy", file))
		if err != nil {
			t.Fatal(err)
		}
		size := int(info.Size())
		for _, at := range []int{0, 4, 5, 6, 7, 9, 12, 20, 30, 64, size / 3, size / 2, 2 * size / 3, size - 20, size - 1} {
			if at < 0 || at >= size {
				continue
			}
			dir := copyFixtures(t, file, at)
			for _, skip := range []bool{false, true} {
				src, err := mmap.New(dir)
				if err != nil {
					t.Fatal(err)
				}
				tb, err := Open(Options{SkipChecksums: skip}, src)
				if err != nil {
					t.Fatal(err)
				}
				wrong := 0
				for _, r := range rows {
					pos := mustFEN(t, r.FEN)
					w, werr := tb.WDL(ctx, &pos)
					d, derr := tb.DTZ(ctx, &pos)
					root, rerr := tb.Root(ctx, &pos)
					if skip {
						continue
					}
					wantD := sign(r.WDL) * r.DTZ
					if pos.IsCheckmate() {
						wantD = -1
					}
					if !okOrCorrupt(werr, w == tableWDL(r.WDL, r.DTZ)) ||
						!okOrCorrupt(derr, d == wantD) ||
						!okOrCorrupt(rerr, r.Terminal() || (root.WDL == r.WDL && root.DTZ == r.DTZ && (r.WDL == 0 || root.Best.UCI() == r.Best))) {
						wrong++
						if wrong < 5 {
							t.Errorf("%s byte %d: line %d %s: WDL %d %v, DTZ %d %v, root %d/%d %v %v", file, at, r.Line, r.FEN, w, werr, d, derr, root.WDL, root.DTZ, root.Best, rerr)
						}
					}
				}
				tb.Close()
				src.Close()
			}
		}
	}
}

// okOrCorrupt accepts a correct value or an ErrCorrupt failure.
func okOrCorrupt(err error, correct bool) bool {
	if err != nil {
		return errors.Is(err, ErrCorrupt)
	}
	return correct
}

// TestSharedCorruptTables flips bytes in larger shared tables (pawnful,
// with DTZ maps, two-sided WDL) and probes the oracle rows of their
// material through a source that serves the damaged copy ahead of the
// shared folder: ErrCorrupt or the oracle's value, never another.
func TestSharedCorruptTables(t *testing.T) {
	shared := testenv.Shared(t, "syzygy", "tables")
	all := readOracle(t, testenv.Shared(t, "syzygy", "oracle", "probe.tsv"))
	sharedSrc, err := mmap.New(shared)
	if err != nil {
		t.Fatal(err)
	}
	defer sharedSrc.Close()
	ctx := context.Background()
	for _, file := range []string{"KPvKP.rtbw", "KPvKP.rtbz", "KBNvK.rtbz", "KNNvKQ.rtbw"} {
		mat := file[:len(file)-5]
		var rows []oracleRow
		for _, r := range all {
			pos := mustFEN(t, r.FEN)
			if m, _ := materialOf(&pos).canonical(); m.name() == mat {
				rows = append(rows, r)
			}
		}
		if raceEnabled {
			rows = chesstboracle.Sample(rows, 20, true)
		}
		orig, err := os.ReadFile(filepath.Join(shared, file))
		if err != nil {
			t.Fatal(err)
		}
		for _, at := range []int{6, 40, 200, len(orig) / 4, len(orig) / 2, len(orig) - 40} {
			dir := t.TempDir()
			b := append([]byte(nil), orig...)
			b[at] ^= 0x21
			if err := os.WriteFile(filepath.Join(dir, file), b, 0o644); err != nil {
				t.Fatal(err)
			}
			damaged, err := mmap.New(dir)
			if err != nil {
				t.Fatal(err)
			}
			tb, err := Open(Options{}, damaged, sharedSrc)
			if err != nil {
				t.Fatal(err)
			}
			wrong, corrupt := 0, 0
			for _, r := range rows {
				pos := mustFEN(t, r.FEN)
				w, werr := tb.WDL(ctx, &pos)
				d, derr := tb.DTZ(ctx, &pos)
				wantD := sign(r.WDL) * r.DTZ
				if pos.IsCheckmate() {
					wantD = -1
				}
				if werr != nil || derr != nil {
					corrupt++
				}
				if !okOrCorrupt(werr, w == tableWDL(r.WDL, r.DTZ)) || !okOrCorrupt(derr, d == wantD) {
					wrong++
					if wrong < 5 {
						t.Errorf("%s byte %d: line %d %s: WDL %d %v, DTZ %d %v", file, at, r.Line, r.FEN, w, werr, d, derr)
					}
				}
			}
			if corrupt == 0 && len(rows) > 0 {
				t.Errorf("%s byte %d: no probe of %d rows noticed the damage", file, at, len(rows))
			}
			tb.Close()
			damaged.Close()
		}
	}
}
