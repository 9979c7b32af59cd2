package render_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	geistertb "github.com/tbfs/tbfs/format/geister"
	"github.com/tbfs/tbfs/geister"
	"github.com/tbfs/tbfs/internal/testkit/geisteroracle"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/render"
	"github.com/tbfs/tbfs/source/mmap"
)

// openGeister opens the committed Geister fixture table (id000).
func openGeister(t *testing.T) *geistertb.Tablebase {
	t.Helper()
	src, err := mmap.New(testenv.Testdata(t, "geister"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	tb, err := geistertb.Open(geistertb.Options{}, src)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	return tb
}

// wantMeaning is what stored byte v means (FORMAT.md: 0 no result within
// the horizon, odd v a win in v plies, even v a loss in v plies).
func wantMeaning(v int) (result string, plies int) {
	switch {
	case v == 0:
		return "draw", 0
	case v%2 == 1:
		return "win", v
	}
	return "loss", v
}

// TestCollectGeisterOracle checks both Geister collectors against the
// reference's rows (testdata/geister/values_id000.tsv and
// moves_id000.tsv): each board's value and its meaning, and, with the
// moves, the multiset of the children's values. Under the race detector an
// even sample of the rows is checked.
func TestCollectGeisterOracle(t *testing.T) {
	tb := openGeister(t)
	ctx := t.Context()
	values := geisteroracle.Testdata(t, "values_id000.tsv")
	step := 1
	if raceEnabled || testing.Short() {
		step = 25
	}
	for i := 0; i < len(values); i += step {
		r := values[i]
		p, err := geister.ParseBoard(r["board"])
		if err != nil {
			t.Fatal(err)
		}
		rep, err := render.CollectGeisterValue(ctx, tb, p)
		if err != nil {
			t.Fatalf("pos %s: %v", r["pos_id"], err)
		}
		v := r.Int(t, "value")
		result, plies := wantMeaning(v)
		if rep.Error != "" || rep.Value == nil || int(*rep.Value) != v || rep.Result != result || *rep.Plies != plies || rep.Moves != nil {
			t.Errorf("pos %s %s: %+v, oracle value %d (%s in %d)", r["pos_id"], r["board"], rep, v, result, plies)
		}
	}
	children := map[string][]int{}
	parentValue := map[string]int{}
	for _, r := range geisteroracle.Testdata(t, "moves_id000.tsv") {
		children[r["board"]] = append(children[r["board"]], r.Int(t, "child_value"))
		parentValue[r["board"]] = r.Int(t, "value")
	}
	boards := make([]string, 0, len(children))
	for b := range children {
		boards = append(boards, b)
	}
	sort.Strings(boards)
	for i := 0; i < len(boards); i += max(1, step/5) {
		board := boards[i]
		p, err := geister.ParseBoard(board)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := render.CollectGeister(ctx, tb, p)
		if err != nil {
			t.Fatalf("%s: %v", board, err)
		}
		if rep.Error != "" || rep.Value == nil || int(*rep.Value) != parentValue[board] {
			t.Errorf("%s: %+v, oracle value %d", board, rep, parentValue[board])
			continue
		}
		var got []int
		for _, m := range rep.Moves {
			got = append(got, int(m.Value))
		}
		want := children[board]
		sort.Ints(got)
		sort.Ints(want)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: child values %v, oracle %v", board, got, want)
		}
	}
}

// TestGeisterLine checks tbprobe geister's line form on FORMAT.md §7's
// example 1 (value 2: every move lets the opponent win at once, so each of
// the board's eight moves has a child of value 1 and all are equally
// best), on a report with an error, and that a board with a character
// that does not print is quoted.
func TestGeisterLine(t *testing.T) {
	tb := openGeister(t)
	const board = "...r../....../..B.../.R..../....../b....."
	p, err := geister.ParseBoard(board)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := render.CollectGeister(t.Context(), tb, p)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(render.GeisterLine(rep)), "\n"), "\n")
	if lines[0] != board+"\t2\tloss in 2" || len(lines) != 9 {
		t.Fatalf("line form:\n%s", strings.Join(lines, "\n"))
	}
	for _, l := range lines[1:] {
		if !strings.HasPrefix(l, "  ") || !strings.HasSuffix(l, "\tchild 1 (win in 1 for the opponent)\tbest") {
			t.Errorf("move line %q", l)
		}
	}
	if got := string(render.GeisterLine(&render.GeisterReport{Board: "B.....", Error: "bad"})); got != "B.....\terror: bad\n" {
		t.Errorf("error line %q", got)
	}
	if got := string(render.GeisterLine(&render.GeisterReport{Board: "B\x00", Error: "bad"})); got != `"B\x00"`+"\terror: bad\n" {
		t.Errorf("unprintable board %q", got)
	}
}
