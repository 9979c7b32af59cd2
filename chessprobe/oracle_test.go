package chessprobe_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/chessprobe"
	"github.com/tbfs/tbfs/format/chesstb"
	"github.com/tbfs/tbfs/format/syzygy"
	"github.com/tbfs/tbfs/internal/testkit/chesstboracle"
	"github.com/tbfs/tbfs/internal/testkit/syzygyoracle"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/render"
	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/mmap"
)

// moveRanking is the ranking every front end uses (render.MoveRanking).
var moveRanking = render.MoveRanking

func dirSource(t testing.TB, dir string) source.Source {
	t.Helper()
	src, err := mmap.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src
}

// openTables opens both readers over dirs, as the front ends do.
func openTables(t testing.TB, dirs ...string) *chessprobe.Tables {
	t.Helper()
	var srcs []source.Source
	for _, d := range dirs {
		srcs = append(srcs, dirSource(t, d))
	}
	// Under the race detector the whole-file checksums every table is
	// gated on take most of the run; the sweeps check the values anyway.
	tb, err := chessprobe.Open(chesstb.Options{BlockCacheBytes: 64 << 20, SkipChecksums: raceEnabled}, srcs...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	return tb
}

func mustFEN(t testing.TB, fen string) chess.Position {
	t.Helper()
	p, err := chess.ParseFEN(fen)
	if err != nil {
		t.Fatalf("%s: %v", fen, err)
	}
	return p
}

func sign(v int) int {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// clockClass is the root class at clock c of a table DTZ50” d as the
// README of the oracle states Fathom's rule: decisive when |d| + c <= 100,
// cursed or blessed otherwise.
func clockClass(d, c int) int {
	switch {
	case d == 0:
		return 0
	case abs(d)+c <= 100:
		return 2 * sign(d)
	}
	return sign(d)
}

// oracleRows reads the Fathom oracle, sampled under the race detector.
func oracleRows(t *testing.T) []syzygyoracle.Row {
	rows := syzygyoracle.Read(t, syzygyoracle.Path(t))
	return chesstboracle.Sample(rows, 120, raceEnabled || testing.Short())
}

// checkRow compares one probe and ranking with the oracle row (arbiter:
// Fathom): the root's Syzygy DTZ50” and its class at the clock, every
// move's class at the clock and Fathom's per-move DTZ, and Fathom's
// tb_probe_root move among those ranked best, with its values.
func checkRow(ctx context.Context, p *chessprobe.Prober, r *syzygyoracle.Row) error {
	pos, err := chess.ParseFEN(r.FEN)
	if err != nil {
		return err
	}
	res, err := p.Probe(ctx, &pos)
	if err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	switch {
	case r.Checkmate():
		if !res.Checkmate || res.WDL != -2 {
			return fmt.Errorf("checkmate: got checkmate %v, WDL %d", res.Checkmate, res.WDL)
		}
	case r.Terminal():
		if !res.Stalemate || res.WDL != 0 {
			return fmt.Errorf("stalemate: got stalemate %v, WDL %d", res.Stalemate, res.WDL)
		}
	case pos.Occupied().Count() == 2:
	case res.Syzygy == nil || !res.Syzygy.HasDTZ:
		return fmt.Errorf("no Syzygy DTZ (formats %s)", res.Formats)
	default:
		s := res.Syzygy
		if abs(s.DTZ) != r.DTZ || clockClass(s.DTZ, pos.HalfmoveClock()) != r.WDL {
			return fmt.Errorf("Syzygy DTZ %d (WDL %d), oracle WDL %d DTZ %d", s.DTZ, s.WDL, r.WDL, r.DTZ)
		}
	}
	// The class alone, read from the WDL tables only: the table's class,
	// blind to the clock.
	wres, err := p.ProbeWDL(ctx, &pos)
	want := 0
	switch {
	case r.Checkmate():
		want = -2
	case r.Terminal(), pos.Occupied().Count() == 2:
	default:
		want = syzygyoracle.TableClass(r.SignedDTZ())
	}
	if err != nil || !wres.HasWDL || wres.WDL != want || wres.Checkmate != r.Checkmate() {
		return fmt.Errorf("ProbeWDL = WDL %d (has %v, checkmate %v), %v; want %d", wres.WDL, wres.HasWDL, wres.Checkmate, err, want)
	}
	moves, err := p.RankMoves(ctx, &pos, moveRanking)
	if err != nil {
		return fmt.Errorf("rank: %w", err)
	}
	if len(moves) != len(r.Moves) {
		return fmt.Errorf("%d moves, oracle %d", len(moves), len(r.Moves))
	}
	byUCI := map[string]syzygyoracle.Move{}
	for _, m := range r.Moves {
		byUCI[m.UCI] = m
	}
	bestFound := r.Terminal()
	for _, m := range moves {
		want, ok := byUCI[m.Move.UCI()]
		if !ok {
			return fmt.Errorf("move %s not in the oracle", m.Move.UCI())
		}
		if m.RankedBy == chessprobe.Syzygy && (int(m.Category) != want.WDL || abs(m.Distance) != want.DTZ) {
			return fmt.Errorf("move %s: class %d distance %d, oracle %d %d", m.Move.UCI(), m.Category, m.Distance, want.WDL, want.DTZ)
		}
		if m.Best && m.Move.UCI() == r.Best {
			bestFound = true
		}
		if m.Best && r.WDL != 0 {
			// Any move ranked best must price as Fathom's move does.
			ob := byUCI[r.Best]
			if m.RankedBy == chessprobe.Syzygy && (int(m.Category) != ob.WDL || abs(m.Distance) != ob.DTZ) {
				return fmt.Errorf("best %s (%d, %d) but Fathom's %s is (%d, %d)", m.Move.UCI(), m.Category, m.Distance, r.Best, ob.WDL, ob.DTZ)
			}
		}
		if want.WDL != 0 && m.RankedBy == chessprobe.Chesstb && sign(int(m.Category)) != sign(want.WDL) {
			return fmt.Errorf("move %s: chesstb's class %d, Fathom's %d", m.Move.UCI(), m.Category, want.WDL)
		}
	}
	if !bestFound && moves[0].RankedBy == chessprobe.Syzygy {
		return fmt.Errorf("Fathom's move %s is not among those ranked best", r.Best)
	}
	return nil
}

// TestOracleSyzygyOnly sweeps the Fathom oracle through the combined
// prober over the Syzygy tables alone (arbiter: Fathom's values).
func TestOracleSyzygyOnly(t *testing.T) {
	rows := oracleRows(t)
	tb := openTables(t, syzygyoracle.Tables(t))
	ctx := context.Background()
	bad := 0
	for i := range rows {
		if err := checkRow(ctx, tb.Prober, &rows[i]); err != nil {
			bad++
			if bad <= 20 {
				t.Errorf("line %d %s: %v", rows[i].Line, rows[i].FEN, err)
			}
		}
	}
	t.Logf("%d rows, %d mismatches", len(rows), bad)
	if bad > 0 {
		t.Errorf("%d of %d rows mismatch", bad, len(rows))
	}
}

// TestOracleBothFormats sweeps the same positions with chesstb's shipped
// tables of the same 40 materials beside the Syzygy tables: every root and
// every move's child is read from both formats, which must agree
// everywhere (no ErrDisagree), and the Syzygy values are still Fathom's.
func TestOracleBothFormats(t *testing.T) {
	rows := oracleRows(t)
	tb := openTables(t, testenv.Shared(t, "chesstb", "shipped"), syzygyoracle.Tables(t))
	ctx := context.Background()
	bad, both := 0, 0
	for i := range rows {
		err := checkRow(ctx, tb.Prober, &rows[i])
		if err == nil {
			pos := mustFEN(t, rows[i].FEN)
			res, _ := tb.Probe(ctx, &pos)
			if res.Formats == chessprobe.Chesstb|chessprobe.Syzygy {
				both++
			} else if !rows[i].Terminal() && pos.Occupied().Count() > 2 {
				err = fmt.Errorf("answered by %q, want both formats", res.Formats)
			}
		}
		if err != nil {
			bad++
			if bad <= 20 {
				t.Errorf("line %d %s: %v", rows[i].Line, rows[i].FEN, err)
			}
		}
	}
	t.Logf("%d rows, %d answered by both formats, %d disagreements or mismatches", len(rows), both, bad)
	if bad > 0 {
		t.Errorf("%d of %d rows fail", bad, len(rows))
	}
}

// TestAgreeOnTheOracles checks the agreement rule itself on the two
// references' own outputs, without our readers: for every position in
// both oracle files, chesstb's probe_fen class and DTZ (chesstb oracle)
// against Fathom's DTZ50” (Syzygy oracle, the table class from its DTZ).
func TestAgreeOnTheOracles(t *testing.T) {
	ctbRows := chesstboracle.Read(t, testenv.Shared(t, "chesstb", "oracle", "probe.tsv"))
	byFEN := map[string]chesstboracle.Row{}
	for _, r := range ctbRows {
		byFEN[r.FEN] = r
	}
	compared := 0
	for _, r := range syzygyoracle.Read(t, syzygyoracle.Path(t)) {
		cr, ok := byFEN[r.FEN]
		if !ok || r.Terminal() {
			continue
		}
		wdl, dtz, _ := cr.Want(t)
		ctb := chesstb.Result{Material: "?", WDL: wdl, HasWDL: true, DTZ: *dtz, HasDTZ: true}
		d := r.SignedDTZ()
		syz := &chessprobe.SyzygyAnswer{WDL: syzygyoracle.TableClass(d), DTZ: d, HasDTZ: true}
		if err := chessprobe.Agree(&ctb, syz); err != nil {
			t.Errorf("%s: %v", r.FEN, err)
		}
		compared++
	}
	if compared < 6900 {
		t.Errorf("only %d positions in both oracles", compared)
	}
	t.Logf("%d positions of both oracles agree", compared)
}

// TestAgreeRule pins the rule's edges, each row from the conventions: the
// DTZ50” cursed band (README of the Syzygy oracle and python-chess's
// probe_dtz: a zeroing move is dtz or dtz-100 plies away, so a line's
// DTZ50” is its plies or 100 more), rounding (python-chess: n may mean
// n+1; chesstb's generator: a cursed distance in the 1-byte tier may read
// one ply short), and WDL classes that must match exactly.
func TestAgreeRule(t *testing.T) {
	for _, tc := range []struct {
		name        string
		class, dtz  int // chesstb
		swdl, sdtz  int // Syzygy
		precise, ok bool
	}{
		{"win equal", 2, 17, 2, 17, true, true},
		{"win rounded one short", 2, 18, 2, 17, false, true},
		{"win precise one short", 2, 18, 2, 17, true, false},
		{"win rounded one long", 2, 16, 2, 17, false, false},
		{"loss equal", -2, -6, -2, -6, true, true},
		{"loss rounded", -2, -7, -2, -6, false, true},
		{"cursed within the band", 1, 25, 1, 125, false, true},
		{"cursed past 100 plies", 1, 125, 1, 125, false, true},
		{"cursed without the band", 1, 25, 1, 25, false, false},
		{"blessed", -1, -30, -1, -130, false, true},
		// 2N5/6NK/8/8/k7/8/6p1/8 w (see Agree): chesstb's loser takes
		// the longest line over every move.
		{"blessed, chesstb's line longer", -1, -4, -1, -102, false, true},
		{"blessed, chesstb's line shorter", -1, -4, -1, -106, false, false},
		{"blessed out of the band", -1, -4, -1, -99, false, false},
		// k7/2p5/2Q5/2K5/8/8/8/8 b: the table's -2 comes from Black's two
		// children at 1, one of them stored in moves (1 standing for 2).
		{"loss rounded through a tied child", -2, -3, -2, -2, false, true},
		{"loss called precise, one short", -2, -3, -2, -2, true, false},
		// KNNKP (8/8/8/4K3/p7/N1N3k1/8/8 w): chesstb's 28 plies zero
		// into a cursed phase, the table's line into a clean win 104
		// plies away.
		{"cursed, the table's line cleaner and longer", 1, 28, 1, 104, false, true},
		{"cursed, past chesstb's plies plus 100", 1, 28, 1, 130, false, false},
		{"cursed, chesstb one short past 100", 1, 128, 1, 229, false, true},
		{"cursed, shorter than chesstb's plies", 1, 104, 1, 102, false, false},
		// 8/8/4K3/8/p4k2/N1N5/8/8 b (KNNKP): chesstb -105, the table -107.
		{"blessed past 100 plies, the table longer", -1, -105, -1, -107, false, true},
		{"blessed past 100 plies, the table shorter", -1, -105, -1, -103, false, false},
		{"blessed past 100 plies, rounded one short", -1, -105, -1, -104, false, true},
		{"class differs", 2, 20, 1, 120, false, false},
		{"sign differs", 2, 5, -2, -5, false, false},
		{"draw", 0, 0, 0, 0, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctb := chesstb.Result{Material: "KQvK", WDL: tc.class, HasWDL: true, DTZ: tc.dtz, HasDTZ: true}
			err := chessprobe.Agree(&ctb, &chessprobe.SyzygyAnswer{WDL: tc.swdl, DTZ: tc.sdtz, HasDTZ: true, Precise: tc.precise})
			if (err == nil) != tc.ok {
				t.Fatalf("Agree = %v, want ok %v", err, tc.ok)
			}
			if err != nil && !errors.Is(err, chessprobe.ErrDisagree) {
				t.Fatalf("error %v is not ErrDisagree", err)
			}
		})
	}
}

// TestDisagreeingTables puts a Syzygy table of another material under a
// material's name beside the real chesstb tables: the combined probe must
// fail, naming both values, never answer from either.
func TestDisagreeingTables(t *testing.T) {
	syzDir := syzygyoracle.Tables(t)
	dir := t.TempDir()
	// KQvKR's files answer as KQvKQ: the same layout of pieces (a queen
	// for the lone rook), other values.
	copyFile(t, filepath.Join(syzDir, "KQvKR.rtbw"), filepath.Join(dir, "KQvKQ.rtbw"))
	copyFile(t, filepath.Join(syzDir, "KQvKR.rtbz"), filepath.Join(dir, "KQvKQ.rtbz"))
	tb := openTables(t, testenv.Shared(t, "chesstb", "shipped"), dir)
	ctx := context.Background()
	failed, disagreed := 0, 0
	for _, r := range syzygyoracle.Read(t, syzygyoracle.Path(t)) {
		pos := mustFEN(t, r.FEN)
		if pos.MaterialKey() != "KQvKQ" || r.Terminal() {
			continue
		}
		res, err := tb.Probe(ctx, &pos)
		switch {
		case err == nil:
			// The two tables may hold the same value by chance; it must
			// then be chesstb's (and the real Syzygy table's) value.
			if res.WDL != syzygyoracle.TableClass(r.SignedDTZ()) {
				t.Errorf("%s: answered WDL %d, the tables hold %d", r.FEN, res.WDL, syzygyoracle.TableClass(r.SignedDTZ()))
			}
			continue
		case errors.Is(err, chessprobe.ErrDisagree):
			disagreed++
		case render.Answerable(err):
			t.Errorf("%s: %v is a position fact, want a failure", r.FEN, err)
		}
		failed++
	}
	t.Logf("KQvKQ rows: %d failed (%d of them ErrDisagree)", failed, disagreed)
	if failed == 0 {
		t.Error("no probe of the misnamed tables failed")
	}
}

func copyFile(t testing.TB, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// wrongSide is a Syzygy reader that answers for the wrong side to move
// (its values negated), the fault a misread frame would make.
type wrongSide struct{ chessprobe.SyzygyReader }

func (w wrongSide) WDL(ctx context.Context, pos *chess.Position) (int, error) {
	v, err := w.SyzygyReader.WDL(ctx, pos)
	return -v, err
}

func (w wrongSide) DTZ(ctx context.Context, pos *chess.Position) (int, bool, error) {
	v, p, err := w.SyzygyReader.DTZ(ctx, pos)
	return -v, p, err
}

// TestDisagreementNamesBothValues: where the two formats differ, the probe
// and the ranking fail with ErrDisagree naming both values, and the front
// ends treat it as a failure, not as a fact about the position.
func TestDisagreementNamesBothValues(t *testing.T) {
	both := openTables(t, testenv.Shared(t, "chesstb", "shipped"), syzygyoracle.Tables(t))
	p := chessprobe.New(both.Chesstb, wrongSide{chessprobe.SyzygyReader{TB: both.Syzygy}})
	ctx := context.Background()
	// KQvK, White to move wins (Fathom's row: wdl 2).
	pos := mustFEN(t, "8/8/8/3k4/8/8/8/K5Q1 w - - 0 1")
	_, err := p.Probe(ctx, &pos)
	if !errors.Is(err, chessprobe.ErrDisagree) || render.Answerable(err) {
		t.Fatalf("Probe = %v, want ErrDisagree, not answerable", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "WDL 2") || !strings.Contains(msg, "-2 in Syzygy's") {
		t.Errorf("error %q does not name both values", msg)
	}
	if _, err := p.ProbeWDL(ctx, &pos); !errors.Is(err, chessprobe.ErrDisagree) || render.Answerable(err) {
		t.Errorf("ProbeWDL = %v, want ErrDisagree, not answerable", err)
	}
	if _, err := render.CollectWDL(ctx, p, &pos); !errors.Is(err, chessprobe.ErrDisagree) {
		t.Errorf("render.CollectWDL = %v, want ErrDisagree", err)
	}
	if _, err := p.RankMoves(ctx, &pos, moveRanking); !errors.Is(err, chessprobe.ErrDisagree) {
		t.Errorf("RankMoves = %v, want ErrDisagree", err)
	}
	if _, err := render.Collect(ctx, p, &pos, true); !errors.Is(err, chessprobe.ErrDisagree) {
		t.Errorf("render.Collect = %v, want ErrDisagree", err)
	}
}

// failingSyzygy is a Syzygy reader whose every read fails with err.
type failingSyzygy struct{ err error }

func (f failingSyzygy) WDL(context.Context, *chess.Position) (int, error) { return 0, f.err }
func (f failingSyzygy) DTZ(context.Context, *chess.Position) (int, bool, error) {
	return 0, false, f.err
}
func (f failingSyzygy) Root(context.Context, *chess.Position) ([]chessprobe.SyzygyMove, error) {
	return nil, f.err
}

// TestSyzygyFailures: a Syzygy table that is missing or refuses the
// position leaves chesstb's answer alone; one that is corrupt fails the
// probe even where chesstb answers (either could be the wrong one), and
// the front ends see a failure, not a fact about the position. Probe and
// ProbeWDL alike.
func TestSyzygyFailures(t *testing.T) {
	both := openTables(t, testenv.Shared(t, "chesstb", "shipped"))
	ctx := context.Background()
	pos := mustFEN(t, "8/8/8/3k4/8/8/8/K5Q1 w - - 0 1")
	for _, tc := range []struct {
		name string
		err  error
		fail bool
	}{
		{"missing", fmt.Errorf("KQvK.rtbw: %w", syzygy.ErrNoTable), false},
		{"outside", fmt.Errorf("%w: 8 men", syzygy.ErrBadPosition), false},
		{"corrupt", &syzygy.FileError{File: "KQvK.rtbw", Err: fmt.Errorf("%w: bad block", syzygy.ErrCorrupt)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := chessprobe.New(both.Chesstb, failingSyzygy{tc.err})
			for name, probe := range map[string]func(context.Context, *chess.Position) (chessprobe.Result, error){"Probe": p.Probe, "ProbeWDL": p.ProbeWDL} {
				res, err := probe(ctx, &pos)
				switch {
				case tc.fail && (err == nil || render.Answerable(err) || !errors.Is(err, chesstb.ErrCorrupt) || !errors.Is(err, syzygy.ErrCorrupt)):
					t.Errorf("%s = %v, want a failure matching both ErrCorrupts", name, err)
				case !tc.fail && (err != nil || res.Formats != chessprobe.Chesstb || res.WDL != 2):
					t.Errorf("%s = %+v, %v; want chesstb's win alone", name, res, err)
				}
			}
		})
	}
}

// copyTree copies the regular files under from into to, keeping folders.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		copyFile(t, p, filepath.Join(to, rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestOneLocationBothFormats puts the committed chesstb and Syzygy
// fixtures in one folder, as a location holding both formats does: every
// Fathom row of the Syzygy fixtures is answered with Fathom's values, by
// both formats where chesstb holds the material too, and they agree.
func TestOneLocationBothFormats(t *testing.T) {
	dir := t.TempDir()
	copyTree(t, testenv.Testdata(t, "chesstb"), dir)
	copyTree(t, testenv.Testdata(t, "syzygy"), dir)
	tb := openTables(t, dir)
	ctx := context.Background()
	both := 0
	for _, r := range syzygyoracle.Read(t, testenv.Testdata(t, "syzygy", "probe.tsv")) {
		if err := checkRow(ctx, tb.Prober, &r); err != nil {
			t.Errorf("line %d %s: %v", r.Line, r.FEN, err)
			continue
		}
		pos := mustFEN(t, r.FEN)
		if res, _ := tb.Probe(ctx, &pos); res.Formats == chessprobe.Chesstb|chessprobe.Syzygy {
			both++
		}
	}
	if both < 500 {
		t.Errorf("only %d positions answered by both formats", both)
	}
	t.Logf("%d positions answered by both formats from one folder", both)
}
