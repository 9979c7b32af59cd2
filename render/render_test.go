package render_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/chessprobe"
	"github.com/tbfs/tbfs/format/chesstb"
	"github.com/tbfs/tbfs/internal/testkit/chesstboracle"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/render"
	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/mmap"
)

func openTables(t testing.TB, dir string) (*chesstb.Tablebase, source.Source) {
	t.Helper()
	src, err := mmap.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	tb, err := chesstb.Open(chesstb.Options{}, src)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	return tb, src
}

// jsonKeys are the only keys issue 6 allows in a position's JSON object and
// in each of its moves.
var (
	reportKeys = map[string]bool{"fen": true, "category": true, "wdl": true, "dtz": true, "dtm": true,
		"dtm50": true, "dtc": true, "checkmate": true, "stalemate": true, "moves": true, "error": true,
		"formats": true, "syzygy_dtz": true, "precise_dtz": true}
	moveKeys = map[string]bool{"uci": true, "san": true, "category": true, "wdl": true, "dtz": true, "dtm": true,
		"dtm50": true, "dtc": true, "checkmate": true, "stalemate": true, "error": true,
		"formats": true, "syzygy_dtz": true, "precise_dtz": true}
)

// categoryValue orders lichess's categories for the side to move.
var categoryValue = map[string]int{"win": 2, "cursed-win": 1, "draw": 0, "blessed-loss": -1, "loss": -2}

// decoded is a position's JSON object read back with generic types, so the
// test checks the bytes a client sees rather than our structs.
type decoded map[string]any

func decode(t *testing.T, b []byte) decoded {
	t.Helper()
	if len(b) == 0 || b[len(b)-1] != '\n' || strings.Count(string(b), "\n") != 1 {
		t.Fatalf("JSON is not one line: %q", b)
	}
	var d decoded
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("bad JSON %q: %v", b, err)
	}
	return d
}

// checkValues compares one object's value keys with an oracle row.
// noTable says no table for the metric exists in the set (the fixtures
// ship DTM50 and DTC for a few materials only), so a value the reference
// printed may be missing; a value present must always equal the
// reference's.
func checkValues(t *testing.T, where string, d decoded, r chesstboracle.Row, allowed map[string]bool, noTable func(render.Metric) bool) {
	t.Helper()
	for k := range d {
		if !allowed[k] {
			t.Errorf("%s: unexpected key %q", where, k)
		}
	}
	wdl, dtz, dtm := r.Want(t)
	intKey := func(key string, want *int) {
		got, present := d[key]
		switch {
		case want == nil && present && !(got == float64(0) && d["checkmate"] == true):
			// By the rules a checkmated side is mated in 0 plies, which the
			// prober answers without a table; any other value needs one.
			t.Errorf("%s: %s = %v where the reference has none", where, key, got)
		case want != nil && present && got != float64(*want):
			t.Errorf("%s: %s = %v, want %d", where, key, got, *want)
		}
	}
	if d["wdl"] != float64(wdl) {
		t.Errorf("%s: wdl = %v, want %d", where, d["wdl"], wdl)
	}
	if want := r.WantCategory(t); d["category"] != want {
		t.Errorf("%s: category = %v, want %s", where, d["category"], want)
	}
	intKey("dtz", dtz)
	intKey("dtm", dtm)
	wantDTC, wantDTM50 := r.WantDTC(t)
	intKey("dtm50", wantDTM50)
	if wantDTM50 != nil {
		if _, ok := d["dtm50"]; !ok && !noTable(render.MetricDTM50) {
			t.Errorf("%s: dtm50 missing, reference %d", where, *wantDTM50)
		}
	}
	switch got, present := d["dtc"].(map[string]any); {
	case present && wantDTC == nil:
		t.Errorf("%s: dtc = %v where the reference has none", where, got)
	case present && (got["pushes"] != float64(wantDTC[0]) || got["plies"] != float64(wantDTC[1])):
		t.Errorf("%s: dtc = %v, want pushes %d plies %d", where, got, wantDTC[0], wantDTC[1])
	case !present && wantDTC != nil && !noTable(render.MetricDTC):
		t.Errorf("%s: dtc missing, reference %v", where, *wantDTC)
	}
	if dtm != nil {
		if _, ok := d["dtm"]; !ok && !noTable(render.MetricDTM) {
			t.Errorf("%s: dtm missing, reference %d", where, *dtm)
		}
	}
	if dtz != nil {
		if _, ok := d["dtz"]; !ok && !noTable(render.MetricDTZ) {
			t.Errorf("%s: dtz missing, reference %d", where, *dtz)
		}
	}
}

// TestCollectOracle renders every oracle row through Collect with the real
// prober and checks the JSON values and the human block against the row.
func TestCollectOracle(t *testing.T) {
	ctx := context.Background()
	for _, set := range oracleSets(t) {
		t.Run(set.Name, func(t *testing.T) {
			tb, _ := openTables(t, set.Tables)
			for _, file := range set.Files {
				for _, r := range sampled(chesstboracle.Read(t, file), set.LimitedRows) {
					if !r.HasForm("shipped") {
						continue
					}
					pos, err := chess.ParseFEN(r.FEN)
					if err != nil {
						t.Fatalf("%s: %v", r.Where, err)
					}
					rep, err := render.Collect(ctx, chessprobe.New(tb, nil), &pos, false)
					if err != nil {
						t.Errorf("%s %s: %v", r.Where, r.FEN, err)
						continue
					}
					d := decode(t, render.JSON(rep))
					if d["fen"] != pos.FEN() {
						t.Errorf("%s: fen %v, want %s", r.Where, d["fen"], pos.FEN())
					}
					if _, ok := d["moves"]; ok {
						t.Errorf("%s: moves present without children", r.Where)
					}
					checkValues(t, r.Where, d, r, reportKeys, noTableIn(rep.Unavailable))
					lines := humanLines(render.Text(rep))
					wdl, _, _ := r.Want(t)
					if cat := r.WantCategory(t); lines["fen"] != pos.FEN() || lines["category"] != cat || lines["WDL"] != strconv.Itoa(wdl) {
						t.Errorf("%s: human text %q does not show fen, category %s and WDL %d", r.Where, render.Text(rep), cat, wdl)
					}
				}
			}
		})
	}
}

// TestCollectChildren checks every move's values against children.tsv
// (probe_fen --children), that the list holds exactly the reference's
// moves, and that the first move holds the best class by the reference's
// own values. The order after the best moves is the prober's root ranking
// (TestCollectBestMovesOracle), which need not follow the clock-free class.
func TestCollectChildren(t *testing.T) {
	ctx := context.Background()
	sets := oracleSets(t)
	set := sets[len(sets)-1]
	file := strings.Replace(set.Files[0], "probe.tsv", "children.tsv", 1)
	tb, _ := openTables(t, set.Tables)
	byParent := map[string]map[string]chesstboracle.Row{}
	var parents []string
	for _, r := range chesstboracle.Read(t, file) {
		if byParent[r.FEN] == nil {
			byParent[r.FEN] = map[string]chesstboracle.Row{}
			parents = append(parents, r.FEN)
		}
		byParent[r.FEN][r.Move] = r
	}
	if len(parents) == 0 {
		t.Fatalf("%s has no rows", file)
	}
	if (raceEnabled || testing.Short()) && len(parents) > 5 {
		parents = parents[:5]
	}
	for _, fen := range parents {
		rows := byParent[fen]
		pos, err := chess.ParseFEN(fen)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := render.Collect(ctx, chessprobe.New(tb, nil), &pos, true)
		if err != nil {
			t.Errorf("%s: %v", fen, err)
			continue
		}
		d := decode(t, render.JSON(rep))
		moves, _ := d["moves"].([]any)
		if len(moves) != len(rows) {
			t.Errorf("%s: %d moves, the reference lists %d", fen, len(moves), len(rows))
		}
		// The first move must reach the best result under the 50-move rule
		// (the mover's side of the child's lichess category).
		best := -3
		for _, r := range rows {
			if w := -categoryValue[r.WantCategory(t)]; w > best {
				best = w
			}
		}
		for i, m := range moves {
			mv := m.(map[string]any)
			uci, _ := mv["uci"].(string)
			r, ok := rows[uci]
			if !ok {
				t.Errorf("%s: move %s is not in the reference's list", fen, uci)
				continue
			}
			where := r.Where + " " + uci
			child := pos.Play(mustMove(t, &pos, uci))
			cres, _ := tb.Probe(ctx, &child)
			_, un := render.FromResult(&chessprobe.Result{Result: cres}, child.HalfmoveClock())
			checkValues(t, where, decoded(mv), r, moveKeys, noTableIn(un))
			if w := -categoryValue[r.WantCategory(t)]; i == 0 && w != best {
				t.Errorf("%s: first move %s gives the mover %d, the best is %d", fen, uci, w, best)
			}
			if i == 0 && !rep.Moves[0].Best {
				t.Errorf("%s: first move not marked best", fen)
			}
			if san, _ := mv["san"].(string); san == "" {
				t.Errorf("%s: no SAN", where)
			}
		}
		if !strings.Contains(string(render.Text(rep)), "* "+rep.Moves[0].UCI) {
			t.Errorf("%s: human text does not mark the best move:\n%s", fen, render.Text(rep))
		}
	}
}

// humanLines splits the human block's fact lines into label and value,
// whatever the alignment; the first line is the FEN.
func humanLines(b []byte) map[string]string {
	out := map[string]string{}
	for i, line := range strings.Split(string(b), "\n") {
		if i == 0 {
			out["fen"] = line
			continue
		}
		f := strings.Fields(line)
		if len(f) >= 2 && strings.HasPrefix(line, "  ") && !strings.HasPrefix(line, "    ") {
			out[f[0]] = strings.Join(f[1:], " ")
		}
	}
	return out
}

// noTableIn reads a report's reasons: a metric may be missing only when the
// prober found no table for it.
func noTableIn(un map[render.Metric]string) func(render.Metric) bool {
	return func(m render.Metric) bool { return strings.Contains(un[m], "table not found") }
}

func mustMove(t *testing.T, pos *chess.Position, uci string) chess.Move {
	t.Helper()
	m, err := pos.ParseMove(uci)
	if err != nil {
		t.Fatalf("%s %s: %v", pos.FEN(), uci, err)
	}
	return m
}

// TestCollectNoTable: a material missing from the tables is an answer that
// says so, not an error, and carries no value.
func TestCollectNoTable(t *testing.T) {
	tb, _ := openTables(t, testenv.Testdata(t, "chesstb"))
	// K+Q+R against K+N: five men, no table in the fixtures (arbiter: the
	// fixture folder's listing).
	pos, err := chess.ParseFEN("8/8/8/3k4/8/8/1QR3n1/K7 w - - 0 1")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := render.Collect(context.Background(), chessprobe.New(tb, nil), &pos, false)
	if err != nil {
		t.Fatalf("Collect: %v", err)
	}
	d := decode(t, render.JSON(rep))
	for _, k := range []string{"wdl", "dtz", "dtm", "category"} {
		if _, ok := d[k]; ok {
			t.Errorf("key %s present for a material without tables: %v", k, d)
		}
	}
	if e, _ := d["error"].(string); !strings.Contains(e, "no table for KQRKN") {
		t.Errorf("error = %q, want it to name KQRKN", e)
	}
	if text := string(render.Text(rep)); !strings.Contains(text, "no table for KQRKN") {
		t.Errorf("human text:\n%s", text)
	}
}

// TestCollectUnranked: when some move has no answer in the tables the
// prober cannot rank the moves; every legal move is still listed (the
// rules of the game count them), in UCI order, none marked best, and the
// report says why. K+Q+R against K+N has no table in the fixtures (the
// fixture folder's listing), so a move that keeps the knight has none.
func TestCollectUnranked(t *testing.T) {
	tb, _ := openTables(t, testenv.Testdata(t, "chesstb"))
	pos, err := chess.ParseFEN("8/8/8/3k4/8/8/1QR3n1/K7 w - - 0 1")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := render.Collect(context.Background(), chessprobe.New(tb, nil), &pos, true)
	if err != nil {
		t.Fatalf("Collect: %v", err)
	}
	if !strings.Contains(rep.MovesUnranked, "KQRKN") {
		t.Errorf("MovesUnranked = %q, want the missing table named", rep.MovesUnranked)
	}
	if n := len(pos.LegalMoves(nil)); len(rep.Moves) != n {
		t.Errorf("%d moves listed, %d legal", len(rep.Moves), n)
	}
	missing := 0
	for i, mv := range rep.Moves {
		if mv.Best {
			t.Errorf("%s marked best in an unranked list", mv.UCI)
		}
		if i > 0 && rep.Moves[i-1].UCI >= mv.UCI {
			t.Errorf("%s listed after %s: not UCI order", mv.UCI, rep.Moves[i-1].UCI)
		}
		if strings.Contains(mv.Error, "no table for KQRKN") {
			missing++
		}
	}
	if missing == 0 {
		t.Error("no move says its KQRKN child has no table")
	}
	if text := string(render.Text(rep)); !strings.Contains(text, "not ranked") || strings.Contains(text, "* ") {
		t.Errorf("human text does not say the moves are unranked, or stars one:\n%s", text)
	}
}

// failingSource fails every read once switched, as a broken transport.
type failingSource struct {
	source.Source
	fail atomic.Bool
}

func (s *failingSource) Open(ctx context.Context, name string) (source.Object, error) {
	if s.fail.Load() {
		return nil, &source.Error{Op: "open", Name: name, Err: source.Transient(errors.New("injected"))}
	}
	obj, err := s.Source.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	return &failingObject{Object: obj, src: s}, nil
}

type failingObject struct {
	source.Object
	src *failingSource
}

func (o *failingObject) ReadAt(ctx context.Context, p []byte, off int64, h source.Hint) (int, error) {
	if o.src.fail.Load() {
		return 0, &source.Error{Op: "read", Err: source.Transient(errors.New("injected"))}
	}
	return o.Object.ReadAt(ctx, p, off, h)
}

// TestCollectTransportFailure: a transport failure is an error, never a
// report, for the position and for any child.
func TestCollectTransportFailure(t *testing.T) {
	src, err := mmap.New(testenv.Testdata(t, "chesstb"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	fs := &failingSource{Source: src}
	fs.fail.Store(true)
	tb, err := chesstb.Open(chesstb.Options{}, fs)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	pos, _ := chess.ParseFEN("8/8/8/5k2/8/8/1Q6/K7 w - - 0 1")
	for _, children := range []bool{false, true} {
		rep, err := render.Collect(context.Background(), chessprobe.New(tb, nil), &pos, children)
		if err == nil || !errors.Is(err, source.ErrTransient) {
			t.Errorf("children=%v: Collect = %+v, %v; want a transient error", children, rep, err)
		}
	}
}

// TestCollectBestMovesOracle checks the order and best marks Collect takes
// from the prober's root ranking against children.tsv, for every parent
// there (an even spread under -race or -short). The arbiter is the
// reference's values of each child: the mover's class after a move is the
// negated class of the child, so the best class is the largest of those.
// Every move marked best must hold that class, the first move listed must
// be marked, the marked moves must come before all others, and the human
// block must star exactly them.
func TestCollectBestMovesOracle(t *testing.T) {
	ctx := context.Background()
	for _, set := range oracleSets(t) {
		t.Run(set.Name, func(t *testing.T) {
			file := strings.Replace(set.Files[0], "probe.tsv", "children.tsv", 1)
			tb, _ := openTables(t, set.Tables)
			byParent := map[string]map[string]int{}
			var parents []chesstboracle.Row
			for _, r := range chesstboracle.Read(t, file) {
				if byParent[r.FEN] == nil {
					byParent[r.FEN] = map[string]int{}
					parents = append(parents, r)
				}
				w, _, _ := r.Want(t)
				byParent[r.FEN][r.Move] = -w
			}
			if len(parents) == 0 {
				t.Fatalf("%s has no rows", file)
			}
			checked := 0
			for _, p := range sampled(parents, 10) {
				fen := p.FEN
				mover := byParent[fen]
				best := -3
				for _, c := range mover {
					best = max(best, c)
				}
				pos, err := chess.ParseFEN(fen)
				if err != nil {
					t.Fatal(err)
				}
				if len(pos.LegalMoves(nil)) != len(mover) {
					continue // the reference listed only some moves
				}
				rep, err := render.Collect(ctx, chessprobe.New(tb, nil), &pos, true)
				if err != nil {
					t.Errorf("%s: %v", fen, err)
					continue
				}
				if rep.MovesUnranked != "" {
					t.Errorf("%s: moves not ranked (%s), yet the reference answers every child", fen, rep.MovesUnranked)
					continue
				}
				if len(rep.Moves) == 0 {
					t.Errorf("%s: no moves listed", fen)
					continue
				}
				if !rep.Moves[0].Best {
					t.Errorf("%s: first move %s not marked best", fen, rep.Moves[0].UCI)
				}
				if c, ok := mover[rep.Moves[0].UCI]; !ok || c != best {
					t.Errorf("%s: first move %s gives the mover class %d, the best is %d", fen, rep.Moves[0].UCI, c, best)
				}
				text := string(render.Text(rep))
				prefix := true
				for _, mv := range rep.Moves {
					c, ok := mover[mv.UCI]
					if !ok {
						t.Errorf("%s: move %s is not in the reference's list", fen, mv.UCI)
						continue
					}
					if mv.Best && c != best {
						t.Errorf("%s: %s marked best, but gives the mover class %d; the best is %d", fen, mv.UCI, c, best)
					}
					if mv.Best && !prefix {
						t.Errorf("%s: best move %s listed after a move not marked best", fen, mv.UCI)
					}
					prefix = prefix && mv.Best
					if starred := strings.Contains(text, "* "+mv.UCI+" "); starred != mv.Best {
						t.Errorf("%s: human text stars %s = %v, marked best = %v", fen, mv.UCI, starred, mv.Best)
					}
				}
				checked++
			}
			t.Logf("%d parents checked", checked)
			if checked == 0 {
				t.Error("no parent checked")
			}
		})
	}
}
