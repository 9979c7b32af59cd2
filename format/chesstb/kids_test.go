package chesstb

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// TestKidsOfFollowsParent checks that a probe's child memory answers only
// for the exact node it was built for: a parent that differs in the side to
// move, the clock or the en-passant square gets its own children, and
// nothing remembered of the old ones survives. The arbiter is the rules:
// each child must be the parent with the move played.
func TestKidsOfFollowsParent(t *testing.T) {
	tb := openDirs(t, Options{}, testenv.Testdata(t, "chesstb"))
	ctx := context.Background()
	p := tb.getProber(ctx)
	defer putProber(p)
	fens := []string{
		"8/8/8/5k2/8/8/1Q6/K7 w - - 0 1",
		"8/8/8/5k2/8/8/1Q6/K7 b - - 0 1",  // side to move
		"8/8/8/5k2/8/8/1Q6/K7 w - - 37 1", // clock
		"8/8/8/8/3Pp3/8/8/K5k1 b - d3 0 1",
		"8/8/8/8/3Pp3/8/8/K5k1 b - - 0 1", // en-passant square
	}
	for depth := range 2 {
		for _, fen := range fens {
			pos, err := chess.ParseFEN(fen)
			if err != nil {
				t.Fatal(err)
			}
			n := p.nodeOf(&pos)
			ks := p.kidsOf(&n, depth)
			if ks.parent != n {
				t.Fatalf("%s: set built for another parent", fen)
			}
			var want []chess.Move
			for _, m := range n.pos.LegalMoves(nil) {
				if !m.IsEnPassant() {
					want = append(want, m)
				}
			}
			if len(ks.kids) != len(want) {
				t.Fatalf("%s: %d children, want %d", fen, len(ks.kids), len(want))
			}
			for i := range ks.kids {
				k := &ks.kids[i]
				child := n.pos.Play(want[i])
				wantNode := node{pos: child, mat: n.mat}
				if n.pos.IsZeroing(want[i]) {
					wantNode = p.nodeOf(&child)
				}
				if k.move != want[i] || k.node != wantNode || k.zeroing != n.pos.IsZeroing(want[i]) {
					t.Fatalf("%s: child %d is %s/%s, want the parent after %s", fen, i, k.move.UCI(), k.node.pos.FEN(), want[i].UCI())
				}
				if k.have != 0 || k.canon == canonOther {
					t.Fatalf("%s: child %s starts with remembered facts %b", fen, k.move.UCI(), k.have)
				}
				// Plant a wrong answer: the next parent must not see it.
				k.have, k.wdl = haveWDL|haveImpl|haveStored|haveCell, wIllegal
			}
			if again := p.kidsOf(&n, depth); again != ks || again.kids[0].have == 0 {
				t.Fatalf("%s: the same parent did not get its set back", fen)
			}
		}
	}
	// A prober made ready for the next probe forgets every set.
	p.reset(ctx, tb)
	for d := range p.kids {
		if p.kids[d].valid {
			t.Fatalf("depth %d: a reset prober holds a valid child set", d)
		}
	}
}

// TestProbeForgetsPlantedMemory plants, in a pooled prober, the claim that
// every child of a row's position wins, and hands the prober back before
// probing the row: the answer must still be the reference prober's. A
// prober that carried its child sets into the next probe would read the
// position as lost.
func TestProbeForgetsPlantedMemory(t *testing.T) {
	base := testenv.Shared(t, "chesstb")
	rows := readOracle(t, filepath.Join(base, "oracle", "probe.tsv"), false)
	var sel []oracleRow
	for _, r := range rows {
		if r.hasForm("shipped") && r.wdl != "LOSE" {
			sel = append(sel, r)
		}
	}
	sel = sample(sel, 200)
	tb := openDirs(t, Options{}, filepath.Join(base, "shipped"))
	ctx := context.Background()
	bad := 0
	for _, r := range sel {
		pos := r.position(t)
		e := r.expectAll(t)
		p := tb.getProber(ctx)
		n := p.nodeOf(&pos)
		for depth := range p.kids {
			ks := p.kidsOf(&n, depth)
			for i := range ks.kids {
				k := &ks.kids[i]
				k.have = haveWDL | haveImpl | haveStored
				k.wdl, k.impl, k.stored = wWin, wWin, storedWin
				k.wdlErr, k.implEr, k.stErr = nil, nil, nil
			}
		}
		putProber(p)
		diffs := probeDiffs(ctx, tb, &pos, e)
		if len(diffs) > 0 {
			bad++
			if bad <= 20 {
				t.Errorf("line %d %s: %s", r.line, r.fen, strings.Join(diffs, "; "))
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d rows differ from the reference", bad, len(sel))
	}
}

// TestProbeMemoryOrder probes the oracle rows in orders that put the
// child memory of one probe next to probes it must not leak into: rows of
// one board with other sides to move and clocks back to back, each row
// asked of two table sets in turn (shipped, whose dropped frames are
// rebuilt, and full, which reads them), and several goroutines sharing the
// prober pool. Every answer must still be the reference prober's.
func TestProbeMemoryOrder(t *testing.T) {
	base := testenv.Shared(t, "chesstb")
	var rows []oracleRow
	for _, file := range []string{"probe.tsv", "children.tsv", "seed_cases.tsv"} {
		for _, r := range readOracle(t, filepath.Join(base, "oracle", file), file == "children.tsv") {
			if r.hasForm("shipped") && r.hasForm("full") {
				rows = append(rows, r)
			}
		}
	}
	if raceEnabled || testing.Short() {
		rows = sample(rows, 150)
	}
	// Same board, then side to move, then clock: neighbours differ in as
	// little as one field of the node.
	board := func(r oracleRow) string {
		pos := r.position(t)
		f := strings.Fields(pos.FEN())
		return f[0] + " " + f[1] + " " + f[3]
	}
	slices.SortStableFunc(rows, func(a, b oracleRow) int { return strings.Compare(board(a), board(b)) })
	sets := []*Tablebase{
		openDirs(t, Options{}, filepath.Join(base, "shipped")),
		openDirs(t, Options{}, filepath.Join(base, "full")),
	}
	// Parsed here, in the test's goroutine: a bad row fails the test there.
	positions := make([]chess.Position, len(rows))
	expects := make([]packExpect, len(rows))
	for i, r := range rows {
		positions[i], expects[i] = r.position(t), r.expectAll(t)
	}
	const workers = 3
	var wg sync.WaitGroup
	var mu sync.Mutex
	bad := 0
	ctx := context.Background()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each worker walks every row, from a different starting point.
			for i := range rows {
				j := (i + w*len(rows)/workers) % len(rows)
				r, pos, e := rows[j], positions[j], expects[j]
				for s, tb := range sets {
					diffs := probeDiffs(ctx, tb, &pos, e)
					if len(diffs) > 0 {
						mu.Lock()
						bad++
						if bad <= 20 {
							t.Errorf("set %d line %d %s %s: %s", s, r.line, r.fen, r.move, strings.Join(diffs, "; "))
						}
						mu.Unlock()
					}
				}
			}
		}()
	}
	wg.Wait()
	if bad > 0 {
		t.Errorf("%d answers differ from the reference", bad)
	}
}

// TestKidsCanonicalClaim checks the shortcut canonical takes: where it says
// a kid's memory answers for nodeOf's node of the child, that node must be
// the kid's node, for every child (and grandchild) of the oracle positions,
// with and without the opposing-pair table in the search path.
func TestKidsCanonicalClaim(t *testing.T) {
	base := testenv.Shared(t, "chesstb")
	noKPKP := func(name string) bool { return strings.Contains(name, "KPKP.") }
	sets := map[string]*Tablebase{
		"shipped": openDirs(t, Options{}, filepath.Join(base, "shipped")),
		"pair":    openView(t, noKPKP, filepath.Join(base, "pair"), filepath.Join(base, "shipped")),
	}
	var rows []oracleRow
	for _, file := range []string{"probe.tsv", "pair.tsv"} {
		rows = append(rows, readOracle(t, filepath.Join(base, "oracle", file), false)...)
	}
	if raceEnabled || testing.Short() {
		rows = sample(rows, 200)
	}
	ctx := context.Background()
	for name, tb := range sets {
		claimed := 0
		for _, r := range rows {
			pos := r.position(t)
			p := tb.getProber(ctx)
			n := p.nodeOf(&pos)
			var walk func(n *node, depth int)
			walk = func(n *node, depth int) {
				ks := p.kidsOf(n, depth)
				for i := range ks.kids {
					k := &ks.kids[i]
					var scratch node
					cn, memo := p.canonical(ks, k, &scratch)
					want := p.nodeOf(&k.node.pos)
					if *cn != want {
						t.Fatalf("%s line %d %s, %s: canonical gives %s/%s, nodeOf %s/%s", name, r.line, n.pos.FEN(), k.move.UCI(), cn.pos.FEN(), cn.mat.name(), want.pos.FEN(), want.mat.name())
					}
					if memo {
						claimed++
						if k.node != want {
							t.Fatalf("%s line %d %s, %s: memory claimed for a node nodeOf does not give", name, r.line, n.pos.FEN(), k.move.UCI())
						}
					}
					if depth == 0 && !k.node.mat.bareKings() {
						child := k.node
						walk(&child, depth+1)
						ks = p.kidsOf(n, depth) // the walk replaced nothing at this depth
					}
				}
			}
			walk(&n, 0)
			putProber(p)
		}
		if claimed == 0 {
			t.Errorf("%s: no child was answered from memory", name)
		}
	}
}
