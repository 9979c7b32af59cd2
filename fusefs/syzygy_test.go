package fusefs_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tbfs/tbfs/chessprobe"
	"github.com/tbfs/tbfs/format/chesstb"
	"github.com/tbfs/tbfs/fusefs"
	"github.com/tbfs/tbfs/internal/testkit/chesstboracle"
	"github.com/tbfs/tbfs/internal/testkit/syzygyoracle"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/source"
)

// mountBoth mounts a tree whose prober reads chesstb and Syzygy tables
// from srcs (chessprobe.Open, as tbfs mounts them); tables/ serves srcs.
func mountBoth(t *testing.T, srcs ...source.Source) string {
	t.Helper()
	tb, err := chessprobe.Open(chesstb.Options{}, srcs...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	mnt, _ := mount(t, fusefs.Config{Prober: fusefs.Collector{Prober: tb.Prober}, Tables: srcs})
	return mnt
}

// TestMountSyzygy mounts the committed Syzygy fixtures alone and reads
// every row of their Fathom oracle (testdata/syzygy/probe.tsv), and does
// the same with the shared Syzygy tables and oracle when they are present
// (always in CI), through
// wdl/, dtz/ and chess/…json: the table's WDL, Syzygy's DTZ50” as it
// stands, and "syzygy" as the format that answered. tables/ lists the
// .rtbw and .rtbz files and passes their bytes through unchanged.
func TestMountSyzygy(t *testing.T) {
	type set struct{ name, tables, oracle string }
	sets := []set{{"fixtures", testenv.Testdata(t, "syzygy"), testenv.Testdata(t, "syzygy", "probe.tsv")}}
	if testenv.HasShared(t, "syzygy") {
		sets = append(sets, set{"shared", syzygyoracle.Tables(t), syzygyoracle.Path(t)})
	}
	for _, s := range sets {
		t.Run(s.name, func(t *testing.T) { checkMountSyzygy(t, s.tables, s.oracle) })
	}
}

// checkMountSyzygy is TestMountSyzygy for one table folder and its rows.
func checkMountSyzygy(t *testing.T, dir, oracle string) {
	mnt := mountBoth(t, openDir(t, dir))
	rows := syzygyoracle.Read(t, oracle)
	if raceEnabled || testing.Short() {
		rows = chesstboracle.Sample(rows, len(rows)/10, true)
	}
	for k, r := range rows {
		rel := pathForms[k%len(pathForms)].path(r.FEN)
		d := r.SignedDTZ()
		if got, ok := readValue(t, filepath.Join(mnt, "wdl", rel)); !ok || (!r.Terminal() && got != syzygyoracle.TableClass(d)) || (r.Checkmate() && got != -2) {
			t.Errorf("line %d %s: wdl/ = %d (present %v), Fathom's table class %d", r.Line, r.FEN, got, ok, syzygyoracle.TableClass(d))
		}
		if !r.Terminal() {
			if got, ok := readValue(t, filepath.Join(mnt, "dtz", rel)); !ok || got != d {
				t.Errorf("line %d %s: dtz/ = %d (present %v), Fathom's %d", r.Line, r.FEN, got, ok, d)
			}
		}
		if k%7 != 0 {
			continue
		}
		b, err := os.ReadFile(filepath.Join(mnt, "chess", rel+".json"))
		if err != nil {
			t.Errorf("line %d: %v", r.Line, err)
			continue
		}
		var v struct {
			Formats   []string
			SyzygyDTZ *int `json:"syzygy_dtz"`
			Checkmate bool
			Stalemate bool
		}
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("line %d: %v: %s", r.Line, err, b)
		}
		switch {
		case r.Checkmate() && !v.Checkmate, r.Terminal() && !r.Checkmate() && !v.Stalemate:
			t.Errorf("line %d %s: terminal row, got %s", r.Line, r.FEN, b)
		case r.Terminal():
		case !slices.Equal(v.Formats, []string{"syzygy"}) || v.SyzygyDTZ == nil || *v.SyzygyDTZ != d:
			t.Errorf("line %d %s: want formats [syzygy], syzygy_dtz %d; got %s", r.Line, r.FEN, d, b)
		}
	}
	t.Logf("%d rows read through the mount", len(rows))

	entries, err := os.ReadDir(filepath.Join(mnt, "tables"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	for _, name := range []string{"KQvK.rtbw", "KQvK.rtbz", "KRvKR.rtbw", "KPvK.rtbz"} {
		if !slices.Contains(names, name) {
			t.Errorf("tables/ lacks %s: %v", name, names)
			continue
		}
		got, err := os.ReadFile(filepath.Join(mnt, "tables", name))
		want, err2 := os.ReadFile(filepath.Join(dir, name))
		if err != nil || err2 != nil || !bytes.Equal(got, want) {
			t.Errorf("tables/%s: %d bytes (%v), the file has %d (%v)", name, len(got), err, len(want), err2)
		}
	}
	for _, name := range []string{"README.md", "probe.tsv"} {
		if slices.Contains(names, name) {
			t.Errorf("tables/ shows %s, which is no table", name)
		}
	}
}

// TestMountBothFormats mounts the committed chesstb and Syzygy fixtures
// together: positions both hold are answered by both (formats
// [chesstb syzygy]), with chesstb's DTM and Syzygy's DTZ50” side by side,
// and the values of the chesstb oracle rows unchanged.
func TestMountBothFormats(t *testing.T) {
	syzDir := testenv.Testdata(t, "syzygy")
	mnt := mountBoth(t, openDir(t, testenv.Testdata(t, "chesstb")), openDir(t, syzDir))
	checked := 0
	for k, r := range syzygyoracle.Read(t, filepath.Join(syzDir, "probe.tsv")) {
		if r.Terminal() || k%5 != 0 {
			continue
		}
		b, err := os.ReadFile(filepath.Join(mnt, "chess", shortFEN(r.FEN)+".json"))
		if err != nil {
			t.Errorf("line %d %s: %v", r.Line, r.FEN, err)
			continue
		}
		var v struct {
			WDL       *int
			Formats   []string
			SyzygyDTZ *int `json:"syzygy_dtz"`
		}
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%v: %s", err, b)
		}
		d := r.SignedDTZ()
		if v.WDL == nil || *v.WDL != syzygyoracle.TableClass(d) || v.SyzygyDTZ == nil || *v.SyzygyDTZ != d {
			t.Errorf("line %d %s: want wdl %d, syzygy_dtz %d (Fathom); got %s", r.Line, r.FEN, syzygyoracle.TableClass(d), d, b)
		}
		if !slices.Equal(v.Formats, []string{"chesstb", "syzygy"}) {
			t.Errorf("line %d %s: formats %v, want both", r.Line, r.FEN, v.Formats)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no row checked")
	}
	t.Logf("%d positions answered by both formats through the mount", checked)
	// The chesstb rows read as on a chesstb-only mount, Syzygy beside them.
	rows := chesstbFixtureRows(t)
	for k, r := range rows {
		checkPosition(t, mnt, r, k, testenv.Testdata(t, "chesstb"))
	}
}

// chesstbFixtureRows are the committed chesstb oracle rows the shipped
// fixtures answer, sampled as the other mount sweeps are.
func chesstbFixtureRows(t *testing.T) []chesstboracle.Row {
	var rows []chesstboracle.Row
	for _, r := range sampled(chesstboracle.Read(t, testenv.Testdata(t, "chesstb", "oracle", "probe.tsv")), 150) {
		if r.HasForm("shipped") {
			rows = append(rows, r)
		}
	}
	return rows
}
