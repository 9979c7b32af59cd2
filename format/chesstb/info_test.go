package chesstb

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// dumpRecord is one file's block of the generator's --info text dump.
type dumpRecord struct {
	counts [2]ColorCounts
	win    [2]uint16
	idx    [2]uint64
	fen    [2]string
}

// readInfoDump parses info_dump.txt, the generator's own printout of every
// .info file, keyed by the path it prints ("info/dtz/KQK.info").
func readInfoDump(t *testing.T, path string) map[string]*dumpRecord {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]*dumpRecord{}
	var cur *dumpRecord
	c := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch fields := strings.Fields(line); {
		case strings.HasPrefix(line, "info/"):
			cur = &dumpRecord{}
			out[fields[0]] = cur
		case len(fields) > 0 && (fields[0] == "WHITE" || fields[0] == "BLACK"):
			c = map[string]int{"WHITE": 0, "BLACK": 1}[fields[0]]
			var legal uint64
			n := &cur.counts[c]
			if _, err := fmt.Sscanf(strings.Join(fields[1:], " "), "win=%d draw=%d lose=%d illegal=%d legal=%d", &n.Win, &n.Draw, &n.Lose, &n.Illegal, &legal); err != nil {
				t.Fatalf("dump line %q: %v", line, err)
			}
			if legal != n.Legal() {
				t.Fatalf("dump line %q: legal is not win+draw+lose", line)
			}
		case len(fields) > 0 && strings.HasPrefix(fields[0], "longest_win="):
			i := strings.Index(line, "fen=\"")
			if _, err := fmt.Sscanf(strings.TrimSpace(line[:i]), "longest_win=%d idx=%d", &cur.win[c], &cur.idx[c]); err != nil {
				t.Fatalf("dump line %q: %v", line, err)
			}
			cur.fen[c] = strings.TrimSuffix(line[i+len("fen=\""):], "\"")
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestParseInfoMatchesDump parses every shipped .info file and compares it
// field by field with the generator's own dump of the same file.
func TestParseInfoMatchesDump(t *testing.T) {
	root := testenv.Shared(t, "chesstb", "full")
	dump := readInfoDump(t, filepath.Join(root, "info", "info_dump.txt"))
	files, err := filepath.Glob(filepath.Join(root, "info", "*", "*.info"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(dump) || len(files) == 0 {
		t.Fatalf("%d .info files but %d dump records", len(files), len(dump))
	}
	for _, path := range files {
		rel, _ := filepath.Rel(root, path)
		want, ok := dump[filepath.ToSlash(rel)]
		if !ok {
			t.Errorf("%s: not in the dump", rel)
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseInfo(data)
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		if got.Counts != want.counts || got.LongestWin != want.win || got.LongestIndex != want.idx || got.LongestFEN != want.fen {
			t.Errorf("%s: parsed %+v, dump says %+v", rel, *got, *want)
		}
	}
}

// TestParseInfoRejects covers damaged records; each row's arbiter is the
// record layout (fixed size, NUL-terminated printable FEN fields).
func TestParseInfoRejects(t *testing.T) {
	good := make([]byte, InfoSize)
	big := make([]byte, InfoSize)
	for i := range 8 {
		big[i] = 0xff
	}
	noNUL := make([]byte, InfoSize)
	for i := infoFENAt; i < infoFENAt+infoFENBytes; i++ {
		noNUL[i] = 'a'
	}
	ctrl := make([]byte, InfoSize)
	ctrl[infoFENAt+infoFENBytes] = '\n'
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"short", good[:InfoSize-1]},
		{"long", append(append([]byte{}, good...), 0)},
		{"count past any table", big},
		{"unterminated FEN", noNUL},
		{"control byte in FEN", ctrl},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ParseInfo(tc.data); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("ParseInfo = %v, want ErrCorrupt", err)
			}
		})
	}
	if _, err := ParseInfo(good); err != nil {
		t.Fatalf("all-zero record: %v", err)
	}
}

// FuzzParseInfo checks that no input panics and that accepted records keep
// their counts within bounds.
func FuzzParseInfo(f *testing.F) {
	f.Add(make([]byte, InfoSize))
	f.Add([]byte("short"))
	rec := make([]byte, InfoSize)
	rec[0], rec[40], rec[64] = 9, 7, 3
	copy(rec[infoFENAt:], "8/8/8/8/8/8/3k4/K2B4 w")
	f.Add(rec)
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := ParseInfo(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not match ErrCorrupt", err)
			}
			return
		}
		for c := range 2 {
			if in.Counts[c].Legal() < in.Counts[c].Win || strings.IndexByte(in.LongestFEN[c], 0) >= 0 {
				t.Fatalf("accepted record with bad fields: %+v", in)
			}
		}
	})
}
