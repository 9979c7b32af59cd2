package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/internal/testkit/syzygyoracle"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// copySyzygy copies the committed Syzygy fixtures' table files into a
// temporary directory, where a test may damage them.
func copySyzygy(t *testing.T) string {
	t.Helper()
	src := testenv.Testdata(t, "syzygy")
	dst := t.TempDir()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".rtbw") || strings.HasSuffix(e.Name(), ".rtbz") {
			copyFile(t, filepath.Join(src, e.Name()), filepath.Join(dst, e.Name()))
		}
	}
	return dst
}

// TestSyzygyLsInfoVerify: ls lists every Syzygy file of a location with
// its size, info names a material's files, and verify recomputes each
// file's embedded checksum: all pass on the generator's files (arbiter:
// their checksums match the published lists, README of ../shared/syzygy),
// and one flipped byte is CORRUPT, exit 1, the file named.
func TestSyzygyLsInfoVerify(t *testing.T) {
	dir := copySyzygy(t)
	ents, _ := os.ReadDir(dir)
	res := runBin(t, "", nil, "ls", "--tables", dir)
	if res.code != 0 {
		t.Fatalf("ls: exit %d: %s", res.code, res.stderr)
	}
	for _, e := range ents {
		fi, _ := e.Info()
		line := ""
		for l := range strings.SplitSeq(res.stdout, "\n") {
			if f := strings.Fields(l); len(f) > 0 && f[len(f)-1] == e.Name() {
				line = l
			}
		}
		if !strings.Contains(line, "syzygy") {
			t.Errorf("ls lacks %s (%d bytes):\n%s", e.Name(), fi.Size(), res.stdout)
		}
	}
	res = runBin(t, "", nil, "info", "--tables", dir, "KRvKR")
	if res.code != 0 || !strings.Contains(res.stdout, "KRvKR.rtbw") || !strings.Contains(res.stdout, "KRvKR.rtbz") {
		t.Errorf("info KRvKR: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	res = runBin(t, "", nil, "verify", "--tables", dir)
	if res.code != 0 || strings.Count(res.stdout, "(Syzygy checksum)") != len(ents) {
		t.Fatalf("verify: exit %d, want %d files ok:\n%s%s", res.code, len(ents), res.stdout, res.stderr)
	}
	damage(t, filepath.Join(dir, "KRvKR.rtbz"), 2000, 1)
	res = runBin(t, "", nil, "verify", "--tables", dir, "KRvKR")
	if res.code != 1 || !strings.Contains(res.stdout, "CORRUPT KRvKR.rtbz") || !strings.Contains(res.stdout, "ok      KRvKR.rtbw") {
		t.Errorf("verify of a damaged file: exit %d:\n%s%s", res.code, res.stdout, res.stderr)
	}
}

// TestProbeSyzygy probes every Fathom row of the committed Syzygy
// fixtures with tbprobe --json over those tables alone (one process, the
// FENs on stdin): wdl is the table class, dtz and syzygy_dtz are Syzygy's
// DTZ50” as it stands, formats ["syzygy"]. With --children, the moves are
// Fathom's and the first is one Fathom ranks first.
func TestProbeSyzygy(t *testing.T) {
	dir := testenv.Testdata(t, "syzygy")
	rows := syzygyoracle.Read(t, filepath.Join(dir, "probe.tsv"))
	var in strings.Builder
	for _, r := range rows {
		in.WriteString(r.FEN + "\n")
	}
	res := runBin(t, in.String(), nil, "--json", "--children", "--tables", dir)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
	if len(lines) != len(rows) {
		t.Fatalf("%d answers for %d positions", len(lines), len(rows))
	}
	for i, r := range rows {
		var a struct {
			FEN       string
			WDL       *int
			DTZ       *int
			SyzygyDTZ *int `json:"syzygy_dtz"`
			Formats   []string
			Checkmate bool
			Moves     []struct{ UCI string }
		}
		if err := json.Unmarshal([]byte(lines[i]), &a); err != nil {
			t.Fatalf("line %d: %v: %s", i, err, lines[i])
		}
		if r.Terminal() {
			if len(a.Moves) != 0 || a.Checkmate != r.Checkmate() {
				t.Errorf("%s: terminal row, got %s", r.FEN, lines[i])
			}
			continue
		}
		d := r.DTZ
		if r.WDL < 0 {
			d = -d
		}
		if a.SyzygyDTZ == nil || *a.SyzygyDTZ != d || a.DTZ == nil || *a.DTZ != d || !slices.Equal(a.Formats, []string{"syzygy"}) {
			t.Errorf("%s: want dtz and syzygy_dtz %d (Fathom), formats [syzygy]; got %s", r.FEN, d, lines[i])
		}
		if len(a.Moves) != len(r.Moves) {
			t.Errorf("%s: %d moves, Fathom %d", r.FEN, len(a.Moves), len(r.Moves))
			continue
		}
		// The first move prices as Fathom's own choice (same class at the
		// clock and, when decisive, the same move dtz).
		var first, fathom string
		for _, m := range r.Moves {
			if m.UCI == a.Moves[0].UCI {
				first = strconv.Itoa(m.WDL) + ":" + strconv.Itoa(m.DTZ)
			}
			if m.UCI == r.Best {
				fathom = strconv.Itoa(m.WDL) + ":" + strconv.Itoa(m.DTZ)
			}
		}
		if first != fathom && !(r.WDL == 0 && strings.HasPrefix(first, "0:")) {
			t.Errorf("%s: first move %s (%s), Fathom's %s (%s)", r.FEN, a.Moves[0].UCI, first, r.Best, fathom)
		}
	}
}
