package fusefs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/chessprobe"
	"github.com/tbfs/tbfs/format/chesstb"
	"github.com/tbfs/tbfs/fusefs"
	"github.com/tbfs/tbfs/internal/testkit/chesstboracle"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/mmap"
)

// mountTables mounts a tree whose prober is the real chesstb reader over
// srcs; tables/ serves the same sources.
func mountTables(t *testing.T, srcs ...source.Source) (string, *fusefs.FS) {
	t.Helper()
	tb, err := chesstb.Open(chesstb.Options{}, srcs...)
	if err != nil {
		t.Fatal(err)
	}
	// Registered before the mount's own cleanup, so it runs after the
	// unmount.
	t.Cleanup(func() { tb.Close() })
	return mount(t, fusefs.Config{Prober: fusefs.Collector{Prober: chessprobe.New(tb, nil)}, Tables: srcs})
}

func openDir(t testing.TB, dir string) source.Source {
	t.Helper()
	src, err := mmap.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src
}

// pathForms are the ways the FUSE view lets a FEN be written as a path. Each
// returns the path below the view directory.
var pathForms = []struct {
	name string
	path func(fen string) string
}{
	{"spaces", func(fen string) string { return fen }},
	{"underscores", func(fen string) string { return strings.ReplaceAll(fen, " ", "_") }},
	{"short", shortFEN},
}

// shortFEN drops the trailing FEN fields that equal their defaults (clock 0,
// move 1, no en passant, no castling), as a person typing the path would.
func shortFEN(fen string) string {
	f := strings.Fields(fen)
	defaults := []string{"", "w", "-", "-", "0", "1"}
	for len(f) > 1 && f[len(f)-1] == defaults[len(f)-1] {
		f = f[:len(f)-1]
	}
	return strings.Join(f, "_")
}

// readValue reads a metric file: its number, or absent when the file does
// not exist.
func readValue(t *testing.T, p string) (int, bool) {
	t.Helper()
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return 0, false
	}
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	s := string(b)
	if !strings.HasSuffix(s, "\n") || strings.Count(s, "\n") != 1 {
		t.Fatalf("%s: %q is not one line", p, s)
	}
	n, err := strconv.Atoi(strings.TrimSuffix(s, "\n"))
	if err != nil {
		t.Fatalf("%s: %q is not a number", p, s)
	}
	return n, true
}

// checkPosition reads row's position through the mount in one path form
// (rotating through views and forms by k) and compares with the row.
// A value the reference printed may be missing only when tables (the
// folder the mount serves) has no file for that metric and material.
func checkPosition(t *testing.T, mnt string, r chesstboracle.Row, k int, tables string) {
	t.Helper()
	wdl, dtz, dtm := r.Want(t)
	form := pathForms[k%len(pathForms)]
	rel := form.path(r.FEN)
	where := fmt.Sprintf("%s (%s)", r.Where, form.name)
	wantDTC, wantDTM50 := r.WantDTC(t)
	switch (k / len(pathForms)) % numViews {
	case 0: // the human text
		b, err := os.ReadFile(filepath.Join(mnt, "chess", rel))
		if err != nil {
			t.Errorf("%s: chess/%s: %v", where, rel, err)
			return
		}
		lines := map[string]string{}
		for _, l := range strings.Split(string(b), "\n")[1:] {
			if f := strings.Fields(l); len(f) == 2 {
				lines[f[0]] = f[1]
			}
		}
		if lines["WDL"] != strconv.Itoa(wdl) {
			t.Errorf("%s: human WDL %q, want %d:\n%s", where, lines["WDL"], wdl, b)
		}
		if want := r.WantCategory(t); lines["category"] != want {
			t.Errorf("%s: human category %q, want %s (lichess's, at the clock):\n%s", where, lines["category"], want, b)
		}
		if dtm != nil && lines["DTM"] != strconv.Itoa(*dtm) {
			t.Errorf("%s: human DTM %q, want %d:\n%s", where, lines["DTM"], *dtm, b)
		}
	case 1: // JSON
		p := filepath.Join(mnt, "chess", rel+".json")
		b, err := os.ReadFile(p)
		if err != nil {
			t.Errorf("%s: %s: %v", where, p, err)
			return
		}
		var d map[string]any
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatalf("%s: %v: %s", where, err, b)
		}
		if d["wdl"] != float64(wdl) {
			t.Errorf("%s: json wdl %v, want %d", where, d["wdl"], wdl)
		}
		if want := r.WantCategory(t); d["category"] != want {
			t.Errorf("%s: json category %v, want %s (lichess's, at the clock)", where, d["category"], want)
		}
		if dtz != nil && d["dtz"] != nil && d["dtz"] != float64(*dtz) {
			t.Errorf("%s: json dtz %v, want %d", where, d["dtz"], *dtz)
		}
		if dtm != nil && d["dtm"] != float64(*dtm) {
			t.Errorf("%s: json dtm %v, want %d", where, d["dtm"], *dtm)
		}
	case 2:
		if got, ok := readValue(t, filepath.Join(mnt, "wdl", rel)); !ok || got != wdl {
			t.Errorf("%s: wdl/ = %d (present %v), want %d", where, got, ok, wdl)
		}
	case 3:
		got, ok := readValue(t, filepath.Join(mnt, "dtz", rel))
		switch {
		case dtz == nil && ok:
			t.Errorf("%s: dtz/ = %d where the reference has none", where, got)
		case dtz != nil && ok && got != *dtz:
			t.Errorf("%s: dtz/ = %d, want %d", where, got, *dtz)
		case dtz != nil && !ok && !noFile(tables, "dtz", r.FEN):
			t.Errorf("%s: dtz/ missing, reference %d", where, *dtz)
		}
	case 4:
		got, ok := readValue(t, filepath.Join(mnt, "dtm", rel))
		switch {
		case dtm == nil && ok && !(got == 0 && checkmated(r.FEN)):
			t.Errorf("%s: dtm/ = %d where the reference has none", where, got)
		case dtm != nil && ok && got != *dtm:
			t.Errorf("%s: dtm/ = %d, want %d", where, got, *dtm)
		case dtm != nil && !ok && !noFile(tables, "dtm", r.FEN):
			t.Errorf("%s: dtm/ missing, reference %d", where, *dtm)
		}
	case 5:
		got, ok := readValue(t, filepath.Join(mnt, "dtm50", rel))
		switch {
		case wantDTM50 == nil && ok && !(got == 0 && checkmated(r.FEN)):
			// By the rules a side already checkmated is mated in 0 plies,
			// which needs no table; any other value does.
			t.Errorf("%s: dtm50/ = %d where the reference has none", where, got)
		case wantDTM50 != nil && ok && got != *wantDTM50:
			t.Errorf("%s: dtm50/ = %d, want %d", where, got, *wantDTM50)
		case wantDTM50 != nil && !ok && !noFile(tables, "dtm50", r.FEN):
			t.Errorf("%s: dtm50/ missing, reference %d", where, *wantDTM50)
		}
	case 6:
		b, err := os.ReadFile(filepath.Join(mnt, "dtc", rel))
		switch {
		case errors.Is(err, os.ErrNotExist):
			if wantDTC != nil && !noFile(tables, "dtc", r.FEN) && !noFile(tables, "dtz", r.FEN) {
				t.Errorf("%s: dtc/ missing, reference %v", where, *wantDTC)
			}
		case err != nil:
			t.Errorf("%s: dtc/: %v", where, err)
		case wantDTC == nil:
			t.Errorf("%s: dtc/ = %q where the reference has none", where, b)
		case string(b) != fmt.Sprintf("%d %d\n", wantDTC[0], wantDTC[1]):
			t.Errorf("%s: dtc/ = %q, want pushes %d plies %d", where, b, wantDTC[0], wantDTC[1])
		}
	}
}

func checkmated(fen string) bool {
	pos, err := chess.ParseFEN(fen)
	return err == nil && pos.IsCheckmate()
}

// numViews is how many views checkPosition rotates through.
const numViews = 7

// noFile reports whether dir lacks the table file of kind (its folder
// name, which is also the extension after "lz") for the FEN's material.
// An empty dir means every table is expected.
func noFile(dir, kind, fen string) bool {
	if dir == "" {
		return false
	}
	pos, err := chess.ParseFEN(fen)
	if err != nil {
		return false
	}
	// The reference names tables by canonical material, stronger side
	// first; either orientation's file counts.
	w, b, _ := strings.Cut(pos.MaterialKey(), "v")
	ext := map[string]string{"dtz": ".lzdtz", "dtm": ".lzdtm", "dtm50": ".lzdtm50", "dtc": ".lzdtc"}[kind]
	for _, name := range []string{w + b, b + w} {
		if _, err := os.Stat(filepath.Join(dir, kind, name+ext)); err == nil {
			return false
		}
	}
	return true
}

// TestPositionsOracle reads every oracle row through the kernel mount, each
// in one of the path forms and views, and compares with the row.
func TestPositionsOracle(t *testing.T) {
	for _, set := range oracleSets(t) {
		t.Run(set.Name, func(t *testing.T) {
			mnt, f := mountTables(t, openDir(t, set.Tables))
			k := 0
			for _, file := range set.Files {
				for _, r := range sampled(chesstboracle.Read(t, file), set.LimitedRows) {
					if !r.HasForm("shipped") {
						continue
					}
					if !timeLeft(t) {
						t.Fatalf("stopped after %d rows: the test deadline is near", k)
					}
					checkPosition(t, mnt, r, k, set.Tables)
					k++
				}
			}
			if s := f.Stats(); s.ProbeErrors != 0 || s.BadPaths != 0 {
				t.Errorf("stats after the oracle rows: %+v", s)
			}
			t.Logf("%d rows read through the mount", k)
		})
	}
}

// TestMovesOracle reads moves/<FEN>.json for the oracle's children rows,
// and checks each move's values and lichess category against the
// reference's child values, that the first move listed reaches the best
// rule-true result for the mover, and that it is starred in the human
// form.
func TestMovesOracle(t *testing.T) {
	sets := oracleSets(t)
	set := sets[len(sets)-1]
	mnt, _ := mountTables(t, openDir(t, set.Tables))
	rows := chesstboracle.Read(t, strings.Replace(set.Files[0], "probe.tsv", "children.tsv", 1))
	byParent := map[string]map[string]chesstboracle.Row{}
	for _, r := range rows {
		if byParent[r.FEN] == nil {
			byParent[r.FEN] = map[string]chesstboracle.Row{}
		}
		byParent[r.FEN][r.Move] = r
	}
	n := 0
	for fen, want := range byParent {
		if (raceEnabled || testing.Short()) && n >= 5 {
			break
		}
		if !timeLeft(t) {
			t.Fatalf("stopped after %d positions: the test deadline is near", n)
		}
		n++
		b, err := os.ReadFile(filepath.Join(mnt, "moves", strings.ReplaceAll(fen, " ", "_")+".json"))
		if err != nil {
			t.Errorf("%s: %v", fen, err)
			continue
		}
		var d struct {
			Moves []struct {
				UCI      string `json:"uci"`
				WDL      *int   `json:"wdl"`
				DTM      *int   `json:"dtm"`
				Category string `json:"category"`
			} `json:"moves"`
		}
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatalf("%s: %v", fen, err)
		}
		if len(d.Moves) != len(want) {
			t.Errorf("%s: %d moves, the reference lists %d", fen, len(d.Moves), len(want))
		}
		for _, m := range d.Moves {
			r, ok := want[m.UCI]
			if !ok {
				t.Errorf("%s: move %s not in the reference", fen, m.UCI)
				continue
			}
			wdl, _, dtm := r.Want(t)
			if m.WDL == nil || *m.WDL != wdl {
				t.Errorf("%s %s: wdl %v, want %d", fen, m.UCI, m.WDL, wdl)
			}
			if dtm != nil && (m.DTM == nil || *m.DTM != *dtm) {
				t.Errorf("%s %s: dtm %v, want %d", fen, m.UCI, m.DTM, *dtm)
			}
			if c := r.WantCategory(t); m.Category != c {
				t.Errorf("%s %s: category %q, want %s", fen, m.UCI, m.Category, c)
			}
		}
		// The first move must reach the best rule-true result: the child's
		// class at the clock the move leaves, by the reference's values.
		value := map[string]int{"win": 2, "cursed-win": 1, "draw": 0, "blessed-loss": -1, "loss": -2}
		best := -3
		for _, r := range want {
			best = max(best, -value[r.WantRuleCategory(t)])
		}
		if len(d.Moves) > 0 {
			if r, ok := want[d.Moves[0].UCI]; ok {
				if w := -value[r.WantRuleCategory(t)]; w != best {
					t.Errorf("%s: first move %s reaches %d, the best rule-true result is %d", fen, d.Moves[0].UCI, w, best)
				}
			}
		}
		// The human form lists the same moves, the first starred as best.
		text, err := os.ReadFile(filepath.Join(mnt, "moves", fen))
		if err != nil {
			t.Errorf("%s: %v", fen, err)
		} else if len(d.Moves) > 0 && !strings.Contains(string(text), "* "+d.Moves[0].UCI) {
			t.Errorf("%s: human moves do not star %s:\n%s", fen, d.Moves[0].UCI, text)
		}
	}
}

// TestBadPositions: paths that are not positions, or positions the tables
// cannot answer, are refused with ENOENT and the reason in .stats, and the
// human view explains a missing table.
func TestBadPositions(t *testing.T) {
	mnt, f := mountTables(t, openDir(t, testenv.Testdata(t, "chesstb")))
	refused := []struct {
		path  string
		errno syscall.Errno
		why   string // the arbiter: the FEN rules, or the fixture folder's listing
	}{
		{"chess/8/8/8/5k2/8/8/1Q6/K7_x", syscall.ENOENT, "side to move"},
		{"chess/8/8/8/5k2/8/8/1Q6/KK6", syscall.ENOENT, "king"},                 // two white kings
		{"chess/8/8/8/5k2/8/8/1Q6/K7_w_-_-_0_1_9", syscall.ENOENT, "at most 6"}, // seven fields
		{"chess/8/8/8/5k2/8/8/1Q6/K8", syscall.ENOENT, "more than 8"},
		{"chess/8/8/8/5k2/8/8/1Q6/K7_b.json.json", syscall.ENOENT, "bad"},
		{"wdl/8/8/8/3k4/8/8/1QR3n1/K7_w", syscall.ENOENT, "no table for KQRKN"},
		{"dtm/8/8/8/3k4/8/8/1QR3n1/K7_w", syscall.ENOENT, "no table for KQRKN"},
		{"chess/8/8/8/5k2/8/8/1Q6", syscall.EISDIR, ""}, // a rank directory read as a file
	}
	for _, c := range refused {
		if _, err := os.ReadFile(filepath.Join(mnt, c.path)); !errors.Is(err, c.errno) {
			t.Errorf("%s: %v, want %v", c.path, err, c.errno)
		}
	}
	// The human view of the same position says why.
	b, err := os.ReadFile(filepath.Join(mnt, "chess/8/8/8/3k4/8/8/1QR3n1/K7 w - - 0 1"))
	if err != nil || !strings.Contains(string(b), "no table for KQRKN") {
		t.Errorf("human view of KQRKN: %q, %v", b, err)
	}
	// Castling rights put a legal position outside every table.
	b, err = os.ReadFile(filepath.Join(mnt, "chess/r3k3/8/8/8/8/8/8/4K2R_w_Kq.json"))
	if err != nil || !strings.Contains(string(b), `"error"`) || strings.Contains(string(b), `"wdl"`) {
		t.Errorf("castling position: %s, %v", b, err)
	}
	s := f.Stats()
	if s.BadPaths < 5 || s.Missing < 2 || s.ProbeErrors != 0 {
		t.Errorf("stats: %+v", s)
	}
	var reasons []string
	for _, r := range readStats(t, mnt).Recent {
		reasons = append(reasons, r.Why)
	}
	all := strings.Join(reasons, "\n")
	for _, c := range refused {
		if c.errno == syscall.ENOENT && !strings.Contains(all, c.why) {
			t.Errorf(".stats lacks the reason %q for %s:\n%s", c.why, c.path, all)
		}
	}
}

// switchSource fails every open, read and list while fail is set.
type switchSource struct {
	source.Source
	fail atomic.Bool
}

func (s *switchSource) err(op string) error {
	return &source.Error{Op: op, Err: source.Transient(errInjected)}
}

func (s *switchSource) Open(ctx context.Context, name string) (source.Object, error) {
	if s.fail.Load() {
		return nil, s.err("open")
	}
	obj, err := s.Source.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	return &switchObject{Object: obj, src: s}, nil
}

func (s *switchSource) List(ctx context.Context, prefix string) ([]source.Entry, error) {
	if s.fail.Load() {
		return nil, s.err("list")
	}
	return source.List(ctx, s.Source, prefix)
}

type switchObject struct {
	source.Object
	src *switchSource
}

func (o *switchObject) ReadAt(ctx context.Context, p []byte, off int64, h source.Hint) (int, error) {
	if o.src.fail.Load() {
		return 0, o.src.err("read")
	}
	return o.Object.ReadAt(ctx, p, off, h)
}

// TestProbeFault: the transport starts failing mid-run. Positions that need
// it fail with EIO (never a value), README and .stats still answer, and the
// same paths give the oracle's values once the transport is back.
func TestProbeFault(t *testing.T) {
	dir := testenv.Testdata(t, "chesstb")
	src := &switchSource{Source: openDir(t, dir)}
	mnt, f := mountTables(t, src)
	rows := chesstboracle.Read(t, filepath.Join(dir, "oracle", "probe.tsv"))
	byMaterial := map[string]chesstboracle.Row{}
	for _, r := range rows {
		pos, _ := chess.ParseFEN(r.FEN)
		if _, ok := byMaterial[pos.MaterialKey()]; !ok && r.WDL != "DRAW" {
			byMaterial[pos.MaterialKey()] = r
		}
	}
	healthy, ok1 := byMaterial["KQvK"]
	later, ok2 := byMaterial["KRvKR"]
	if !ok1 || !ok2 {
		t.Fatalf("fixture oracle lacks decisive KQK or KRKR rows")
	}
	checkPosition(t, mnt, healthy, 2*len(pathForms), dir) // wdl/ view
	src.fail.Store(true)
	// KRKR's tables were never opened, so its answer needs the transport.
	p := filepath.Join(mnt, "dtm", strings.ReplaceAll(later.FEN, " ", "_"))
	if _, err := os.ReadFile(p); !errors.Is(err, syscall.EIO) {
		t.Fatalf("%s while the transport fails: %v, want EIO", p, err)
	}
	if _, err := os.ReadFile(filepath.Join(mnt, "chess", later.FEN+".json")); !errors.Is(err, syscall.EIO) {
		t.Fatalf("JSON while the transport fails: %v, want EIO", err)
	}
	if _, err := os.ReadFile(filepath.Join(mnt, "README")); err != nil {
		t.Fatalf("README while the transport fails: %v", err)
	}
	if s := readStats(t, mnt); s.ProbeErrors < 2 {
		t.Errorf(".stats while failing: %+v", s)
	}
	src.fail.Store(false)
	for k := range numViews * len(pathForms) {
		checkPosition(t, mnt, later, k, dir)
	}
	if s := f.Stats(); s.ProbeErrors < 2 || s.Probes == 0 {
		t.Errorf("stats: %+v", s)
	}
}

// wdlOnlySource serves only the WDL tables; opening any other file fails
// as a transport does.
type wdlOnlySource struct{ source.Source }

func (s wdlOnlySource) Open(ctx context.Context, name string) (source.Object, error) {
	if !strings.HasPrefix(name, "wdl/") {
		return nil, &source.Error{Op: "open", Name: name, Err: source.Transient(errInjected)}
	}
	return s.Source.Open(ctx, name)
}

// TestWDLReadsOnlyWDLTables: a wdl/ file needs only the WDL tables, so
// with every other table failing to open it still gives the oracle's
// class, while chess/ of the same decisive position, which needs the
// distances, fails with EIO.
func TestWDLReadsOnlyWDLTables(t *testing.T) {
	dir := testenv.Testdata(t, "chesstb")
	mnt, f := mountTables(t, wdlOnlySource{openDir(t, dir)})
	n := 0
	for _, r := range chesstboracle.Read(t, filepath.Join(dir, "oracle", "probe.tsv")) {
		if !r.HasForm("shipped") || r.WDL == "DRAW" || checkmated(r.FEN) {
			continue // a draw or a mate needs no distance table
		}
		checkPosition(t, mnt, r, 2*len(pathForms)+n%len(pathForms), dir) // wdl/ view
		if n < 5 {
			p := filepath.Join(mnt, "chess", r.FEN)
			if _, err := os.ReadFile(p); !errors.Is(err, syscall.EIO) {
				t.Errorf("%s without its distance tables: %v, want EIO", p, err)
			}
		}
		n++
	}
	if n == 0 {
		t.Fatal("no decisive oracle row")
	}
	if s := f.Stats(); s.ProbeErrors < 1 {
		t.Errorf("stats: %+v", s)
	}
	t.Logf("%d rows read from wdl/", n)
}

// TestConcurrentReaders: 64 readers of random oracle positions, a bounded
// number each, all through the mount at once, every answer checked.
func TestConcurrentReaders(t *testing.T) {
	sets := oracleSets(t)
	set := sets[len(sets)-1]
	if raceEnabled || testing.Short() {
		set = sets[0]
	}
	mnt, f := mountTables(t, openDir(t, set.Tables))
	var rows []chesstboracle.Row
	for _, r := range chesstboracle.Read(t, set.Files[0]) {
		if r.HasForm("shipped") {
			rows = append(rows, r)
		}
	}
	perReader := 40
	if raceEnabled || testing.Short() {
		perReader = 5
	}
	// Each reader is a subtest run from its own goroutine, so the checks'
	// t.Fatal stops that reader's test goroutine, never a plain goroutine.
	var wg sync.WaitGroup
	for g := range 64 {
		wg.Go(func() {
			t.Run(fmt.Sprintf("reader%02d", g), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(g), 7))
				for range perReader {
					if !timeLeft(t) {
						t.Fatal("stopped: the test deadline is near")
					}
					r := rows[rng.IntN(len(rows))]
					checkPosition(t, mnt, r, rng.IntN(numViews*len(pathForms)), set.Tables)
				}
			})
		})
	}
	wg.Wait()
	if s := f.Stats(); s.ProbeErrors != 0 {
		t.Errorf("stats: %+v", s)
	}
}

// TestRawTables lists tables/ and compares a raw table read through the
// mount with the file itself, byte for byte.
func TestRawTables(t *testing.T) {
	dir := testenv.Testdata(t, "chesstb")
	mnt, _ := mountTables(t, openDir(t, dir))
	for _, sub := range []string{"wdl", "dtz", "dtm"} {
		want, err := os.ReadDir(filepath.Join(dir, sub))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadDir(filepath.Join(mnt, "tables", sub))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Errorf("tables/%s lists %d entries, the folder %d", sub, len(got), len(want))
		}
		for i := range min(len(got), len(want)) {
			if got[i].Name() != want[i].Name() {
				t.Errorf("tables/%s entry %d: %s, want %s", sub, i, got[i].Name(), want[i].Name())
			}
		}
		for _, e := range want {
			a, err := os.ReadFile(filepath.Join(dir, sub, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(mnt, "tables", sub, e.Name()))
			if err != nil {
				t.Fatalf("tables/%s/%s: %v", sub, e.Name(), err)
			}
			if string(a) != string(b) {
				t.Errorf("tables/%s/%s: %d bytes through the mount differ from the file's %d", sub, e.Name(), len(b), len(a))
			}
		}
	}
}

// TestSizes: a position file's size is known at the first stat and equals
// what a read returns, so cat, head, wc -c and mmap readers agree.
func TestSizes(t *testing.T) {
	mnt, _ := mountTables(t, openDir(t, testenv.Testdata(t, "chesstb")))
	for _, p := range []string{
		"chess/8/8/8/5k2/8/8/1Q6/K7 w - - 0 1",
		"chess/8/8/8/5k2/8/8/1Q6/K7_w.json",
		"moves/8/8/8/5k2/8/8/1Q6/K7_b",
		"moves/8/8/8/5k2/8/8/1Q6/K7_b.json",
		"wdl/8/8/8/5k2/8/8/1Q6/K7",
		"chess/8/8/8/3k4/8/8/1QR3n1/K7", // no table: the explanation
	} {
		st, err := os.Stat(filepath.Join(mnt, p))
		if err != nil {
			t.Fatalf("stat %s: %v", p, err)
		}
		b, err := os.ReadFile(filepath.Join(mnt, p))
		if err != nil {
			t.Fatalf("read %s: %v", p, err)
		}
		if st.Size() != int64(len(b)) || len(b) == 0 {
			t.Errorf("%s: stat says %d bytes, read gave %d", p, st.Size(), len(b))
		}
		// A reader that maps the file sees the same bytes.
		f, err := os.Open(filepath.Join(mnt, p))
		if err != nil {
			t.Fatal(err)
		}
		m, err := unix.Mmap(int(f.Fd()), 0, len(b), unix.PROT_READ, unix.MAP_SHARED)
		f.Close()
		if err != nil {
			t.Fatalf("mmap %s: %v", p, err)
		}
		if string(m) != string(b) {
			t.Errorf("%s: mapped bytes differ from read bytes", p)
		}
		unix.Munmap(m)
	}
}
