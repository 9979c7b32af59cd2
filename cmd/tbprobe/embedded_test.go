package main

import (
	"fmt"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	cchess "github.com/corentings/chess/v2"
	"github.com/tbfs/tbfs/internal/testkit/chesstboracle"
	"github.com/tbfs/tbfs/internal/testkit/syzygyoracle"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/lichess"
)

// The embedded default tables are the chesstb fixtures and the Syzygy
// fixtures (testdata/syzygy). An answer from them carries, beside
// chesstb's values, what the Syzygy tables add: formats naming both,
// syzygy_dtz (the DTZ table's DTZ50″ as it stands) and precise_dtz. This
// file holds those keys' arbiters: which materials the Syzygy fixtures hold
// is the fixture directory's own listing, and the DTZ50″ is Fathom's
// (testdata/syzygy/probe.tsv and, when present, the whole shared oracle),
// bounded by chesstb's oracle where Fathom has no row.

// syzygyFixtures are the Syzygy fixture tables and the Fathom rows that
// price their positions.
type syzygyFixtures struct {
	// materials are the Syzygy names ("KQvK") of the fixture directory's
	// WDL files.
	materials map[string]bool
	// fathom are Fathom's rows by position (placement and side to move):
	// its DTZ does not depend on the clock (../shared/syzygy/README.md),
	// so a row at any clock prices the position. No fixture material has
	// pawns of both colours, so en passant never tells positions apart.
	fathom map[string]syzygyoracle.Row
}

// readSyzygyFixtures lists testdata/syzygy and reads its Fathom rows, and
// the shared oracle's when ../shared holds it (always in CI).
func readSyzygyFixtures(t *testing.T) *syzygyFixtures {
	t.Helper()
	dir := testenv.Testdata(t, "syzygy")
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := &syzygyFixtures{materials: map[string]bool{}, fathom: map[string]syzygyoracle.Row{}}
	for _, e := range ents {
		if m, ok := strings.CutSuffix(e.Name(), ".rtbw"); ok {
			s.materials[m] = true
		}
	}
	if len(s.materials) == 0 {
		t.Fatalf("%s holds no .rtbw file", dir)
	}
	files := []string{dir + "/probe.tsv"}
	if testenv.HasShared(t, "syzygy") {
		files = append(files, syzygyoracle.Path(t))
	}
	for _, f := range files {
		for _, r := range syzygyoracle.Read(t, f) {
			k := positionKey(r.FEN)
			if old, ok := s.fathom[k]; ok && old.SignedDTZ() != r.SignedDTZ() && !r.Terminal() {
				t.Fatalf("Fathom rows %s:%d and %d price %s differently", f, old.Line, r.Line, k)
			}
			s.fathom[k] = r
		}
	}
	return s
}

// positionKey is a FEN's placement and side to move.
func positionKey(fen string) string {
	f := strings.Fields(fen)
	return f[0] + " " + f[1]
}

// materialOf is a FEN's material in Syzygy's spelling, White's men first
// ("KRvKQ"), and the same with the colours swapped ("KQvKR"), by the rules
// of FEN.
func materialOf(fen string) (asIs, swapped string) {
	var side [2][]byte
	for _, c := range []byte(strings.Fields(fen)[0]) {
		if c >= 'A' && c <= 'Z' {
			side[0] = append(side[0], c)
		} else if c >= 'a' && c <= 'z' {
			side[1] = append(side[1], c-'a'+'A')
		}
	}
	const order = "KQRBNP"
	for i := range side {
		slices.SortFunc(side[i], func(a, b byte) int { return strings.IndexByte(order, a) - strings.IndexByte(order, b) })
	}
	return string(side[0]) + "v" + string(side[1]), string(side[1]) + "v" + string(side[0])
}

// holds reports whether the Syzygy fixtures hold fen's material.
func (s *syzygyFixtures) holds(fen string) bool {
	a, b := materialOf(fen)
	return s.materials[a] || s.materials[b]
}

// answers reports whether the Syzygy fixtures answer the position fen,
// whose chesstb oracle row is r. They do where they hold its material, and
// also where they do not but a capture wins: a Syzygy prober tries the
// captures first and takes a winning one without the position's own table
// (Fathom's probe_ab returns at once on a capture worth beta, 2). The
// winning capture is the zeroing move, one ply away, so the position is
// then a win at DTZ 1 (its class cannot exceed a win; no zeroing move is
// closer). The arbiter is chesstb's oracle and the rules: a pawnless
// position chesstb calls a win at DTZ 1 has a winning capture, and when
// every capture of it lands in a material the fixtures hold, the prober
// finds it; the test fails where only some captures would (no arbiter
// here says which one wins).
func (s *syzygyFixtures) answers(t *testing.T, r chesstboracle.Row, fen string) (held, byCapture bool) {
	t.Helper()
	if s.holds(fen) {
		return true, false
	}
	wdl, dtz, _ := r.Want(t)
	placement, side := strings.Fields(fen)[0], strings.Fields(fen)[1]
	if wdl != 2 || dtz == nil || *dtz != 1 || strings.ContainsAny(placement, "Pp") {
		return false, false
	}
	// The men the side to move can take: the other side's, but its king.
	victims := "qrbn"
	if side == "b" {
		victims = "QRBN"
	}
	into, all := 0, 0
	for i := range len(placement) {
		if strings.IndexByte(victims, placement[i]) < 0 {
			continue
		}
		all++
		if s.holds(placement[:i] + "1" + placement[i+1:]) {
			into++
		}
	}
	if into > 0 && into < all {
		t.Fatalf("%s: chesstb's win at DTZ 1 may or may not be a capture into the Syzygy fixtures; no arbiter here", r.Where)
	}
	return false, into > 0
}

// dtzWant is what the Syzygy fixtures' DTZ50″ of a position must be.
type dtzWant struct {
	// dtz is the value, signed for the side to move: a float64 where
	// Fathom prices the position, a oneOf bounded by chesstb's oracle
	// where it does not.
	dtz any
	// exact is the position's DTZ50″ from chesstb's oracle (its class and
	// exact plain distance), which a value the table stores unrounded must
	// equal; nil in the cursed band, where a blessed loss's DTZ50″ may be
	// shorter than chesstb's distance (chessprobe.Agree).
	exact *float64
}

// precise is what a precise_dtz must be where it is given: the exact
// DTZ50″, or Fathom's value where chesstb's oracle does not fix it.
func (w dtzWant) precise() any {
	if w.exact != nil {
		return *w.exact
	}
	return w.dtz
}

// fromChesstb is the DTZ50″ the chesstb oracle row r allows a Syzygy table
// of its position: a draw's is 0; a win's or loss's is chesstb's plain
// distance d (the zeroing move DTZ50″ counts), stored exactly or, in a
// table that stores moves, rounded down by one ply (n standing for n or
// n+1). r in the cursed band has no row-only arbiter here: the test fails
// saying so.
func fromChesstb(t *testing.T, r chesstboracle.Row) dtzWant {
	t.Helper()
	wdl, dtz, _ := r.Want(t)
	switch {
	case wdl == 0:
		zero := 0.0
		return dtzWant{dtz: zero, exact: &zero}
	case (wdl == 2 || wdl == -2) && dtz != nil:
		d := float64(*dtz)
		step := 1.0
		if d < 0 {
			step = -1
		}
		return dtzWant{dtz: oneOf{d, d - step}, exact: &d}
	}
	t.Fatalf("%s: no Fathom row prices this position and chesstb's class %d has no bound here; add the row to testdata/syzygy/probe.tsv", r.Where, wdl)
	return dtzWant{}
}

// exactOf is fromChesstb's exact value alone, nil where it has none.
func exactOf(t *testing.T, r chesstboracle.Row) *float64 {
	t.Helper()
	if wdl, dtz, _ := r.Want(t); wdl == 0 || (wdl == 2 || wdl == -2) && dtz != nil {
		return fromChesstb(t, r).exact
	}
	return nil
}

// root is the DTZ50″ of the position fen, whose chesstb oracle row is r:
// Fathom's where it has the position, else fromChesstb.
func (s *syzygyFixtures) root(t *testing.T, r chesstboracle.Row, fen string) dtzWant {
	t.Helper()
	if f, ok := s.fathom[positionKey(fen)]; ok && !f.Terminal() {
		return dtzWant{dtz: float64(f.SignedDTZ()), exact: exactOf(t, r)}
	}
	return fromChesstb(t, r)
}

// child is the DTZ50″ of the position after uci from parent, whose chesstb
// oracle row is r (children.tsv's: the child's values): Fathom's row of
// the child itself; else Fathom's entry for the move in the parent's row,
// which for a move that does not zero the clock is the child's |DTZ| plus
// the move's own ply, and 0 for a draw; else fromChesstb.
func (s *syzygyFixtures) child(t *testing.T, r chesstboracle.Row, parent, uci string) dtzWant {
	t.Helper()
	fen, zeroing := childFEN(t, parent, uci)
	if f, ok := s.fathom[positionKey(fen)]; ok && !f.Terminal() {
		return dtzWant{dtz: float64(f.SignedDTZ()), exact: exactOf(t, r)}
	}
	if p, ok := s.fathom[positionKey(parent)]; ok {
		for _, m := range p.Moves {
			if m.UCI != uci {
				continue
			}
			switch {
			case m.DTZ == 0:
				return dtzWant{dtz: 0.0, exact: exactOf(t, r)}
			case !zeroing:
				d := float64(m.DTZ - 1)
				if m.WDL > 0 { // the mover wins: the child's side loses
					d = -d
				}
				return dtzWant{dtz: d, exact: exactOf(t, r)}
			}
		}
	}
	return fromChesstb(t, r)
}

// addProbe adds to want, the chesstb-only answer wantJSON gives for the
// position fen (chesstb oracle row r), what the Syzygy fixtures add to
// tbprobe --json: formats ["chesstb","syzygy"], syzygy_dtz and, where
// the table calls its value precise, precise_dtz. A position the board
// settles (no formats) or the fixtures do not answer (see answers) gains
// nothing.
func (s *syzygyFixtures) addProbe(t *testing.T, want map[string]any, r chesstboracle.Row, fen string, dtz func() dtzWant) {
	t.Helper()
	w, ok := s.answer(t, want, r, fen, dtz)
	if !ok {
		return
	}
	want["formats"] = []any{"chesstb", "syzygy"}
	want["syzygy_dtz"] = w.dtz
	want["precise_dtz"] = optional{w.precise()}
}

// answer is the DTZ50″ the Syzygy fixtures give the position fen (chesstb
// oracle row r, chesstb-only answer want), dtz's where they hold its
// material, 1 where a capture wins (see answers); ok is false where they
// do not answer or the board settles the position (want has no formats).
func (s *syzygyFixtures) answer(t *testing.T, want map[string]any, r chesstboracle.Row, fen string, dtz func() dtzWant) (w dtzWant, ok bool) {
	t.Helper()
	if want["formats"] == nil {
		return dtzWant{}, false
	}
	switch held, byCapture := s.answers(t, r, fen); {
	case held:
		return dtz(), true
	case byCapture:
		one := 1.0
		return dtzWant{dtz: one, exact: &one}, true
	}
	return dtzWant{}, false
}

// childFEN is the position after uci from parent, and whether the move
// zeroes the clock (a capture or a pawn move), by corentings/chess.
func childFEN(t *testing.T, parent, uci string) (fen string, zeroing bool) {
	t.Helper()
	ccMu.Lock()
	defer ccMu.Unlock()
	opt, err := cchess.FEN(parent)
	if err != nil {
		t.Fatalf("corentings cannot read %q: %v", parent, err)
	}
	pos := cchess.NewGame(opt).Position()
	m, err := cchess.UCINotation{}.Decode(pos, uci)
	if err != nil {
		t.Fatalf("%s: corentings rejects %s: %v", parent, uci, err)
	}
	zeroing = m.HasTag(cchess.Capture) || m.HasTag(cchess.EnPassant) || pos.Board().Piece(m.S1()).Type() == cchess.Pawn
	return pos.Update(m).String(), zeroing
}

// oneOf is an expected value the arbiter bounds without fixing it: the
// value must be one of these.
type oneOf []any

// optional is an expected key the arbiter cannot require: absent is
// right, and present it must be want (or one of a oneOf).
type optional struct{ want any }

// matches reports whether got (present or not) is what want allows:
// equal, one of a oneOf, or an optional's value or absent.
func matches(got any, present bool, want any) bool {
	switch w := want.(type) {
	case optional:
		return !present || matches(got, true, w.want)
	case oneOf:
		return present && slices.ContainsFunc(w, func(v any) bool { return reflect.DeepEqual(got, v) })
	}
	return present && reflect.DeepEqual(got, want)
}

// describeWant prints an expected value for a failure message.
func describeWant(want any) string {
	switch w := want.(type) {
	case optional:
		return "absent or " + describeWant(w.want)
	case oneOf:
		return fmt.Sprintf("one of %v", []any(w))
	}
	return fmt.Sprint(want)
}

// TestDefaultTablesSyzygy: with no --tables, every Fathom row of the
// Syzygy fixtures (testdata/syzygy/probe.tsv) is answered through both
// formats, with Fathom's values: formats ["chesstb","syzygy"], syzygy_dtz
// Fathom's DTZ50″ signed for the side to move, wdl the tables' class of it;
// with --children, Fathom's moves, each child's syzygy_dtz Fathom's move
// dtz less the move's own ply where the move does not zero the clock (0
// for a draw). No material is Syzygy's alone in the fixtures (each has a
// chesstb table too), so both formats answer every row. And the answers
// are the ones the same tables give named on the command line, the chesstb
// roots then the Syzygy folder, byte for byte.
func TestDefaultTablesSyzygy(t *testing.T) {
	dir := testenv.Testdata(t, "syzygy")
	rows := syzygyoracle.Read(t, dir+"/probe.tsv")
	var in strings.Builder
	for _, r := range rows {
		in.WriteString(r.FEN + "\n")
	}
	res := runBin(t, in.String(), nil, "--json", "--children")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	objs := decodeLines(t, res.stdout)
	if len(objs) != len(rows) {
		t.Fatalf("%d answers for %d positions", len(objs), len(rows))
	}
	both := []any{"chesstb", "syzygy"}
	for i, r := range rows {
		o, where := objs[i], fmt.Sprintf("probe.tsv:%d %s", r.Line, r.FEN)
		moves, _ := o["moves"].([]any)
		if r.Terminal() {
			if len(moves) != 0 || o["checkmate"] != r.Checkmate() || o["formats"] != nil {
				t.Errorf("%s: terminal row (checkmate %v), got %v", where, r.Checkmate(), o)
			}
			continue
		}
		d := float64(r.SignedDTZ())
		if !reflect.DeepEqual(o["formats"], both) || o["syzygy_dtz"] != d || o["wdl"] != float64(syzygyoracle.TableClass(r.SignedDTZ())) {
			t.Errorf("%s: want formats %v, syzygy_dtz %v, wdl %d (Fathom); got %v", where, both, d, syzygyoracle.TableClass(r.SignedDTZ()), o)
		}
		if p, ok := o["precise_dtz"]; ok && p != d {
			t.Errorf("%s: precise_dtz %v, Fathom's dtz %v", where, p, d)
		}
		if len(moves) != len(r.Moves) {
			t.Errorf("%s: %d moves, Fathom %d", where, len(moves), len(r.Moves))
			continue
		}
		for _, fm := range r.Moves {
			var m map[string]any
			for _, mv := range moves {
				if mm := mv.(map[string]any); mm["uci"] == fm.UCI {
					m = mm
				}
			}
			if m == nil {
				t.Errorf("%s: Fathom's move %s missing", where, fm.UCI)
				continue
			}
			child, zeroing := childFEN(t, r.FEN, fm.UCI)
			if m["checkmate"] == true || bareKings(child, "") {
				if m["formats"] != nil {
					t.Errorf("%s %s: the board settles the child, yet formats %v", where, fm.UCI, m["formats"])
				}
				continue
			}
			if !reflect.DeepEqual(m["formats"], both) {
				t.Errorf("%s %s: formats %v, want %v", where, fm.UCI, m["formats"], both)
			}
			want := 0.0
			switch {
			case fm.DTZ == 0:
			case zeroing:
				continue // Fathom's entry prices the move, not the child
			case fm.WDL > 0:
				want = -float64(fm.DTZ - 1)
			default:
				want = float64(fm.DTZ - 1)
			}
			if m["syzygy_dtz"] != want {
				t.Errorf("%s %s: child syzygy_dtz %v, Fathom's move %d:%d gives %v", where, fm.UCI, m["syzygy_dtz"], fm.WDL, fm.DTZ, want)
			}
		}
	}
	named := runBin(t, in.String(), nil, "--json", "--children",
		"--tables", testenv.Testdata(t, "chesstb"), "--tables", testenv.Testdata(t, "chesstb", "packs"), "--tables", dir)
	if named.code != 0 || named.stdout != res.stdout {
		t.Errorf("the embedded defaults answer otherwise than the same tables named (exit %d, %s)", named.code, named.stderr)
	}
}

// TestServeDefaultSyzygy asks serve, on its embedded defaults, for every
// Fathom row of the Syzygy fixtures in /standard/batch requests: the root's
// dtz is Fathom's DTZ50″ as the table holds it (lila's dtz; a checkmated
// side -1), precise_dtz null or that value, formats both formats, and the
// category Fathom's class at the clock (lila's names) wherever the clock
// leaves the 50-move boundary more than a ply away (there a rounded table
// value cannot tell the classes apart; chesstb's exact category is checked
// against chesstb's oracle elsewhere). Each move that does not zero the
// clock leaves a child whose dtz is Fathom's move dtz less the move's ply,
// and a drawing move a child at dtz 0.
func TestServeDefaultSyzygy(t *testing.T) {
	base := startServe(t)
	rows := syzygyoracle.Read(t, testenv.Testdata(t, "syzygy", "probe.tsv"))
	lila := map[int]string{2: "win", 1: "cursed-win", 0: "draw", -1: "blessed-loss", -2: "loss"}
	both := []any{"chesstb", "syzygy"}
	for start := 0; start < len(rows); start += lichess.MaxBatchFENs {
		part := rows[start:min(len(rows), start+lichess.MaxBatchFENs)]
		var fens []string
		for _, r := range part {
			fens = append(fens, r.FEN)
		}
		list := postBatch(t, base, fens)
		for i, r := range part {
			a := list[i].(map[string]any)
			where := fmt.Sprintf("probe.tsv:%d %s", r.Line, r.FEN)
			if p := a["precise_dtz"]; p != nil && p != a["dtz"] {
				t.Errorf("%s: precise_dtz %v is neither null nor the dtz %v", where, p, a["dtz"])
			}
			switch {
			case r.Checkmate():
				if a["dtz"] != -1.0 || a["category"] != "loss" || a["checkmate"] != true {
					t.Errorf("%s: checkmated root: %v", where, a)
				}
				continue
			case r.Terminal():
				if a["category"] != "draw" || a["stalemate"] != true {
					t.Errorf("%s: stalemate root: %v", where, a)
				}
				continue
			}
			if d := float64(r.SignedDTZ()); a["dtz"] != d || !reflect.DeepEqual(a["formats"], both) {
				t.Errorf("%s: dtz %v formats %v; want Fathom's %v and %v", where, a["dtz"], a["formats"], d, both)
			}
			if c := clockOf(r.FEN); c < 99 && (r.DTZ == 0 || r.DTZ+c < 99 || r.DTZ+c > 101) && a["category"] != lila[r.WDL] {
				t.Errorf("%s: category %v, Fathom's class at the clock %d (%s)", where, a["category"], r.WDL, lila[r.WDL])
			}
			byUCI := map[string]syzygyoracle.Move{}
			for _, m := range r.Moves {
				byUCI[m.UCI] = m
			}
			moves, _ := a["moves"].([]any)
			if len(moves) != len(r.Moves) {
				t.Errorf("%s: %d moves, Fathom %d", where, len(moves), len(r.Moves))
			}
			for _, mv := range moves {
				m := mv.(map[string]any)
				uci, _ := m["uci"].(string)
				fm, ok := byUCI[uci]
				if !ok {
					t.Errorf("%s: move %s not Fathom's", where, uci)
					continue
				}
				if _, zeroing := childFEN(t, r.FEN, uci); zeroing && fm.DTZ != 0 || m["checkmate"] == true {
					continue
				}
				want := 0.0
				if fm.DTZ != 0 {
					want = float64(fm.DTZ - 1)
					if fm.WDL > 0 {
						want = -want
					}
				}
				if m["dtz"] != want {
					t.Errorf("%s %s: child dtz %v, Fathom's move %d:%d gives %v", where, uci, m["dtz"], fm.WDL, fm.DTZ, want)
				}
			}
		}
	}
}

// clockOf is a FEN's half-move clock.
func clockOf(fen string) int {
	n, _ := strconv.Atoi(strings.Fields(fen)[4])
	return n
}
