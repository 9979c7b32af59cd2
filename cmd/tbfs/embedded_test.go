package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/internal/testkit/chesstboracle"
	"github.com/tbfs/tbfs/internal/testkit/syzygyoracle"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// checkFathomRows reads every Fathom row of the Syzygy fixtures through the
// mount at mnt, which serves the embedded defaults: wdl/ is the tables'
// class of Fathom's DTZ50″, chess/<FEN>.json names both formats and has
// Fathom's DTZ50″ as syzygy_dtz (and as precise_dtz where it is given), and
// dtz/, chesstb's exact distance where chesstb answers, is the chesstb
// oracle's for the same FEN (its probe.tsv holds every Fathom fixture
// row's FEN). A terminal row is settled by the board: no formats,
// checkmate as Fathom says.
func checkFathomRows(t *testing.T, mnt string) {
	t.Helper()
	rows := syzygyoracle.Read(t, testenv.Testdata(t, "syzygy", "probe.tsv"))
	chesstbDTZ := map[string]*int{}
	for _, r := range chesstboracle.Read(t, testenv.Testdata(t, "chesstb", "oracle", "probe.tsv")) {
		_, dtz, _ := r.Want(t)
		chesstbDTZ[r.FEN] = dtz
	}
	both := []string{"chesstb", "syzygy"}
	for _, r := range rows {
		where := "probe.tsv:" + strconv.Itoa(r.Line) + " " + r.FEN
		path := strings.ReplaceAll(r.FEN, " ", "_")
		b, err := os.ReadFile(filepath.Join(mnt, "chess", path+".json"))
		var a struct {
			Formats    []string
			Checkmate  bool
			SyzygyDTZ  *int `json:"syzygy_dtz"`
			PreciseDTZ *int `json:"precise_dtz"`
		}
		if err == nil {
			err = json.Unmarshal(b, &a)
		}
		if err != nil {
			t.Errorf("%s: chess/….json: %v", where, err)
			continue
		}
		if r.Terminal() {
			if a.Formats != nil || a.Checkmate != r.Checkmate() {
				t.Errorf("%s: terminal row (checkmate %v): %s", where, r.Checkmate(), b)
			}
			continue
		}
		d := r.SignedDTZ()
		if !reflect.DeepEqual(a.Formats, both) || a.SyzygyDTZ == nil || *a.SyzygyDTZ != d || a.PreciseDTZ != nil && *a.PreciseDTZ != d {
			t.Errorf("%s: want formats %v, syzygy_dtz %d (Fathom); got %s", where, both, d, b)
		}
		w, err := os.ReadFile(filepath.Join(mnt, "wdl", path))
		if want := strconv.Itoa(syzygyoracle.TableClass(d)) + "\n"; err != nil || string(w) != want {
			t.Errorf("%s: wdl/ %q, %v; want %q", where, w, err, want)
		}
		cd, ok := chesstbDTZ[r.FEN]
		if !ok || cd == nil {
			t.Errorf("%s: the chesstb oracle has no DTZ for this FEN", where)
		} else if z, err := os.ReadFile(filepath.Join(mnt, "dtz", path)); err != nil || string(z) != strconv.Itoa(*cd)+"\n" {
			t.Errorf("%s: dtz/ %q, %v; want chesstb's %d", where, z, err, *cd)
		}
		if t.Failed() {
			return // one broken mount fails every row alike
		}
	}
}

// checkTablesDir checks the mount's tables/ folder against the fixture
// directories themselves: chesstb's wdl/, dtz/ and dtm/ files at those
// paths, the packs' files and the Syzygy files at tables/'s root (each
// folder is a root of its own), every one listed once and nothing else,
// and each Syzygy file passed through byte for byte.
func checkTablesDir(t *testing.T, mnt string) {
	t.Helper()
	want := map[string]string{} // path in tables/ -> the fixture file
	for _, c := range []struct{ dir, at string }{
		{testenv.Testdata(t, "chesstb", "wdl"), "wdl/"},
		{testenv.Testdata(t, "chesstb", "dtz"), "dtz/"},
		{testenv.Testdata(t, "chesstb", "dtm"), "dtm/"},
		{testenv.Testdata(t, "chesstb", "packs"), ""},
		{testenv.Testdata(t, "syzygy"), ""},
	} {
		ents, err := os.ReadDir(c.dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			n := e.Name()
			if !strings.HasPrefix(n, "K") || strings.HasSuffix(n, ".tsv") {
				continue // README.md, probe.tsv: not tables
			}
			want[c.at+n] = filepath.Join(c.dir, n)
		}
	}
	got := map[string]bool{}
	err := filepath.WalkDir(filepath.Join(mnt, "tables"), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(filepath.Join(mnt, "tables"), p)
		if d.IsDir() {
			if rel != "." && rel != "wdl" && rel != "dtz" && rel != "dtm" {
				t.Errorf("tables/ shows a folder %s, which holds no fixture table", rel)
			}
			return nil
		}
		got[filepath.ToSlash(rel)] = true
		return nil
	})
	if err != nil {
		t.Fatalf("walking tables/: %v", err)
	}
	for at := range got {
		if _, ok := want[at]; !ok {
			t.Errorf("tables/ shows %s, not a fixture table file", at)
		}
	}
	for at, src := range want {
		if !got[at] {
			t.Errorf("tables/ lacks %s (%s)", at, src)
			continue
		}
		if !strings.HasSuffix(at, ".rtbw") && !strings.HasSuffix(at, ".rtbz") {
			continue
		}
		b, err1 := os.ReadFile(filepath.Join(mnt, "tables", at))
		f, err2 := os.ReadFile(src)
		if err1 != nil || err2 != nil || !bytes.Equal(b, f) {
			t.Errorf("tables/%s: %d bytes (%v), the fixture %d (%v), equal %v", at, len(b), err1, len(f), err2, bytes.Equal(b, f))
		}
	}
}
