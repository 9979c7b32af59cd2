package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/chess"
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
// fixtures, and of the shared Syzygy oracle when it is present (always in
// CI), with tbprobe --json --children over those tables alone (one
// process, the FENs on stdin): wdl is the table class, dtz and syzygy_dtz
// are Syzygy's DTZ50” as it stands, formats ["syzygy"]; the moves are
// Fathom's, each child's class and (where the move's entry gives it) DTZ50”
// are what Fathom's entry implies, and the first move is one Fathom ranks
// first.
func TestProbeSyzygy(t *testing.T) {
	type set struct{ name, tables, oracle string }
	sets := []set{{"fixtures", testenv.Testdata(t, "syzygy"), testenv.Testdata(t, "syzygy", "probe.tsv")}}
	if testenv.HasShared(t, "syzygy") {
		sets = append(sets, set{"shared", syzygyoracle.Tables(t), syzygyoracle.Path(t)})
	}
	for _, s := range sets {
		t.Run(s.name, func(t *testing.T) {
			rows := syzygyoracle.Read(t, s.oracle)
			var in strings.Builder
			for _, r := range rows {
				in.WriteString(r.FEN + "\n")
			}
			res := runBin(t, in.String(), nil, "--json", "--children", "--tables", s.tables)
			if res.code != 0 {
				t.Fatalf("exit %d: %s", res.code, res.stderr)
			}
			lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
			if len(lines) != len(rows) {
				t.Fatalf("%d answers for %d positions", len(lines), len(rows))
			}
			bad := 0
			for i, r := range rows {
				if err := checkSyzygyAnswer(t, r, lines[i]); err != nil {
					bad++
					if bad <= 20 {
						t.Errorf("line %d %s: %v", r.Line, r.FEN, err)
					}
				}
			}
			t.Logf("%d rows, %d mismatches", len(rows), bad)
			if bad > 0 {
				t.Errorf("%d of %d rows mismatch", bad, len(rows))
			}
		})
	}
}

// syzygyAnswer is the part of tbprobe --json --children's object that a
// Fathom row judges.
type syzygyAnswer struct {
	WDL       *int
	DTZ       *int
	SyzygyDTZ *int `json:"syzygy_dtz"`
	Formats   []string
	Checkmate bool
	Moves     []struct {
		UCI       string
		WDL       *int
		DTZ       *int
		Checkmate bool
	}
}

// checkSyzygyAnswer compares one answer line with its Fathom row.
func checkSyzygyAnswer(t *testing.T, r syzygyoracle.Row, line string) error {
	t.Helper()
	var a syzygyAnswer
	if err := json.Unmarshal([]byte(line), &a); err != nil {
		t.Fatalf("%v: %s", err, line)
	}
	if r.Terminal() {
		if len(a.Moves) != 0 || a.Checkmate != r.Checkmate() {
			return fmt.Errorf("terminal row, got %s", line)
		}
		return nil
	}
	d := r.SignedDTZ()
	if a.SyzygyDTZ == nil || *a.SyzygyDTZ != d || a.DTZ == nil || *a.DTZ != d || !slices.Equal(a.Formats, []string{"syzygy"}) {
		return fmt.Errorf("want dtz and syzygy_dtz %d (Fathom), formats [syzygy]; got %s", d, line)
	}
	if a.WDL == nil || *a.WDL != syzygyoracle.TableClass(d) {
		return fmt.Errorf("want wdl %d (Fathom's table class); got %s", syzygyoracle.TableClass(d), line)
	}
	if len(a.Moves) != len(r.Moves) {
		return fmt.Errorf("%d moves, Fathom %d", len(a.Moves), len(r.Moves))
	}
	pos, err := chess.ParseFEN(r.FEN)
	if err != nil {
		t.Fatal(err)
	}
	byUCI := map[string]syzygyoracle.Move{}
	for _, m := range r.Moves {
		byUCI[m.UCI] = m
	}
	for _, g := range a.Moves {
		m, ok := byUCI[g.UCI]
		if !ok {
			return fmt.Errorf("move %s is not among Fathom's", g.UCI)
		}
		mv, err := pos.ParseMove(m.UCI)
		if err != nil {
			t.Fatal(err)
		}
		child := pos.Play(mv)
		mates := child.IsCheckmate()
		class, dtz, hasDTZ := m.Child(pos.IsZeroing(mv), mates)
		switch {
		case g.Checkmate != mates:
			return fmt.Errorf("move %s: checkmate %v, by the rules %v", g.UCI, g.Checkmate, mates)
		case g.WDL == nil || *g.WDL != class:
			return fmt.Errorf("move %s: child wdl %s, Fathom's entry %s:%d:%d implies %d", g.UCI, intText(g.WDL), m.UCI, m.WDL, m.DTZ, class)
		case hasDTZ && (g.DTZ == nil || *g.DTZ != dtz):
			return fmt.Errorf("move %s: child dtz %s, Fathom's entry %s:%d:%d implies %d", g.UCI, intText(g.DTZ), m.UCI, m.WDL, m.DTZ, dtz)
		}
	}
	// The first move prices as Fathom's own choice (same class at the
	// clock and, when decisive, the same move dtz).
	first, fathom := byUCI[a.Moves[0].UCI], byUCI[r.Best]
	if first != fathom && (first.WDL != fathom.WDL || first.DTZ != fathom.DTZ) && !(r.WDL == 0 && first.WDL == 0) {
		return fmt.Errorf("first move %s (%d:%d), Fathom's %s (%d:%d)", first.UCI, first.WDL, first.DTZ, r.Best, fathom.WDL, fathom.DTZ)
	}
	return nil
}

// intText prints an optional number.
func intText(v *int) string {
	if v == nil {
		return "none"
	}
	return strconv.Itoa(*v)
}
