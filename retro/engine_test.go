package retro

import (
	"errors"
	"testing"

	"github.com/tbfs/tbfs/chess"
)

const foolsMate = "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3"

// TestEngineFoolsMate is the astralbase example: the Fool's Mate position
// seeded as Loss(0), one expansion, and Win(1) parents that are exactly the
// positions from which a legal move reaches it.
func TestEngineFoolsMate(t *testing.T) {
	mate := mustFEN(t, foolsMate)
	if !mate.IsCheckmate() {
		t.Fatal("the seed is not checkmate by the rules")
	}
	e := NewEngine()
	if err := e.AddSeed(mate, Loss(0)); err != nil {
		t.Fatal(err)
	}
	if v, ok := e.Probe(mate); !ok || v != Loss(0) {
		t.Fatalf("Probe(seed) = %v, %v; want Loss(0), true", v, ok)
	}
	if !e.Seeded(mate) {
		t.Error("the seed is not reported as a seed")
	}
	if n := e.Solve(0); n != 0 || e.Len() != 1 {
		t.Fatalf("Solve(0) expanded %d and stored %d positions; want 0 and 1", n, e.Len())
	}
	if n := e.Solve(1); n != 1 {
		t.Fatalf("Solve(1) = %d, want 1", n)
	}
	want := map[posKey]chess.Position{}
	for _, p := range bruteParents(mate) {
		want[key(&p)] = p
	}
	if len(want) == 0 {
		t.Fatal("the brute-force search found no parent")
	}
	got := map[posKey]chess.Position{}
	e.Each(func(p chess.Position, v Value) bool {
		if key(&p) == key(&mate) {
			return true
		}
		if v != Win(1) {
			t.Errorf("%s: %v after one expansion, want Win(1)", p.FEN(), v)
		}
		if e.Seeded(p) {
			t.Errorf("%s: a proved parent is reported as a seed", p.FEN())
		}
		got[key(&p)] = p
		return true
	})
	for k, p := range want {
		if _, ok := got[k]; !ok {
			t.Errorf("parent %s (found by brute force) is missing", p.FEN())
		}
	}
	for k, p := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("engine parent %s is not a parent by brute force", p.FEN())
		}
		if !reaches(p, mate) {
			t.Errorf("engine parent %s has no legal move to the mate (chess)", p.FEN())
		}
		if !ccReaches(t, p, mate) {
			t.Errorf("engine parent %s has no legal move to the mate (corentings/chess)", p.FEN())
		}
	}
	t.Logf("%d Win(1) parents", len(got))
}

// TestEngineAbsentUnknown expands Win positions so that their parents are
// stored without a proof, and checks the four answers stay distinct.
func TestEngineAbsentUnknown(t *testing.T) {
	mate := mustFEN(t, foolsMate)
	e := NewEngine()
	if err := e.AddSeed(mate, Loss(0)); err != nil {
		t.Fatal(err)
	}
	e.Solve(1 + 200)
	unknown := 0
	e.Each(func(p chess.Position, v Value) bool {
		switch v.Kind {
		case Unknown:
			unknown++
			if got, ok := e.Probe(p); !ok || got.Kind != Unknown {
				t.Errorf("Probe(%s) = %v, %v; want Unknown, true", p.FEN(), got, ok)
			}
		case LossKind:
			// A proved loss: every legal child must be a proved win.
			for _, m := range p.LegalMoves(nil) {
				c := p.Play(m)
				if cv, ok := e.Probe(c); !ok || !cv.IsWin() || cv.Plies >= v.Plies {
					t.Errorf("%s is %v but its child after %s is %v (stored %v)", p.FEN(), v, m.UCI(), cv, ok)
				}
			}
		case WinKind:
			ok := false
			for _, m := range p.LegalMoves(nil) {
				c := p.Play(m)
				if cv, found := e.Probe(c); found && cv == Loss(v.Plies-1) {
					ok = true
				}
			}
			if !ok {
				t.Errorf("%s is %v without a Loss(%d) child", p.FEN(), v, v.Plies-1)
			}
		}
		return true
	})
	if unknown == 0 {
		t.Error("no stored Unknown position after expanding Win parents")
	}
	// Every position the engine stored without being told is a parent it
	// emitted: it must have a legal move into some expanded position, by our
	// rules and by the independent library's.
	var expanded []chess.Position
	e.Each(func(p chess.Position, v Value) bool {
		if v.Decided() {
			expanded = append(expanded, p)
		}
		return true
	})
	checked := 0
	e.Each(func(p chess.Position, v Value) bool {
		if e.Seeded(p) {
			return true
		}
		found, ccFound := false, false
		for _, c := range expanded {
			if reaches(p, c) {
				found = true
				ccFound = ccReaches(t, p, c)
				break
			}
		}
		if !found || !ccFound {
			t.Errorf("%s (%v): no legal move into a proved position (chess %v, corentings %v)", p.FEN(), v, found, ccFound)
		}
		checked++
		return checked < 400
	})
	start := chess.StartPosition()
	if v, ok := e.Probe(start); ok {
		t.Errorf("Probe(start) = %v, present; want absent", v)
	}
}

func TestEngineSeeds(t *testing.T) {
	mate := mustFEN(t, foolsMate)
	e := NewEngine()
	if err := e.AddSeed(mate, Value{}); !errors.Is(err, ErrSeed) {
		t.Errorf("seeding Unknown: %v, want ErrSeed", err)
	}
	if err := e.AddSeed(mate, Draw); !errors.Is(err, ErrSeed) {
		t.Errorf("seeding Draw: %v, want ErrSeed", err)
	}
	if e.Len() != 0 {
		t.Errorf("refused seeds were stored")
	}
	if err := e.AddSeed(mate, Loss(0)); err != nil {
		t.Fatal(err)
	}
	// The same position at another move number is the same key.
	again := mustFEN(t, "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 7 40")
	if err := e.AddSeed(again, Loss(0)); err != nil {
		t.Errorf("re-seeding the same value: %v", err)
	}
	if err := e.AddSeed(again, Loss(2)); !errors.Is(err, ErrSeed) {
		t.Errorf("conflicting seed: %v, want ErrSeed", err)
	}
	if e.Len() != 1 || e.Pending() != 1 {
		t.Errorf("Len %d Pending %d, want 1 and 1", e.Len(), e.Pending())
	}
	e.Solve(1)
	other := mustFEN(t, "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1")
	if err := e.AddSeed(other, Win(5)); err != nil {
		t.Errorf("seed above the frontier: %v", err)
	}
	for d, ok := e.Frontier(); ok && d <= 5; d, ok = e.Frontier() {
		e.Solve(1)
	}
	other2 := mustFEN(t, "6k1/5ppp/8/8/8/8/8/1R4K1 w - - 0 1")
	if err := e.AddSeed(other2, Win(1)); !errors.Is(err, ErrSeed) {
		t.Errorf("seed below the expanded frontier: %v, want ErrSeed", err)
	}
}

// TestEngineSaturation seeds the largest distance: its parents are
// Win(MaxPlies), not a wrapped-around Win(0).
func TestEngineSaturation(t *testing.T) {
	mate := mustFEN(t, foolsMate)
	e := NewEngine()
	if err := e.AddSeed(mate, Loss(MaxPlies)); err != nil {
		t.Fatal(err)
	}
	e.Solve(1)
	n := 0
	e.Each(func(p chess.Position, v Value) bool {
		if key(&p) != key(&mate) {
			n++
			if v != Win(MaxPlies) {
				t.Errorf("%s: %v, want Win(%d)", p.FEN(), v, uint32(MaxPlies))
			}
		}
		return true
	})
	if n == 0 {
		t.Fatal("no parent")
	}
	if succ(MaxPlies) != MaxPlies || succ(1) != 2 {
		t.Error("succ does not saturate")
	}
}

// TestEngineOrderIndependent seeds a far loss before a near one and the
// other way round. The position that has a move into each must be Win(1)
// either way (a first-come queue would make it Win(3) in one order), and the
// two engines must hold identical tables once both have expanded every
// distance up to 2.
func TestEngineOrderIndependent(t *testing.T) {
	mate := mustFEN(t, "k6R/8/1K6/8/8/8/8/8 b - - 0 1")   // checkmate by the rules
	far := mustFEN(t, "k7/8/1K6/8/8/8/7R/8 b - - 0 1")    // declared Loss(2) by the caller
	parent := mustFEN(t, "k7/8/1K6/8/8/8/8/7R w - - 0 1") // Rh8 mates, Rh2 reaches far
	if !mate.IsCheckmate() || !reaches(parent, mate) || !reaches(parent, far) {
		t.Fatal("test positions are not what they claim")
	}
	run := func(seeds []chess.Position, values []Value) *Engine {
		e := NewEngine()
		for i, p := range seeds {
			if err := e.AddSeed(p, values[i]); err != nil {
				t.Fatal(err)
			}
		}
		for d, ok := e.Frontier(); ok && d <= 2; d, ok = e.Frontier() {
			e.Solve(1)
		}
		return e
	}
	a := run([]chess.Position{far, mate}, []Value{Loss(2), Loss(0)})
	b := run([]chess.Position{mate, far}, []Value{Loss(0), Loss(2)})
	for _, e := range []*Engine{a, b} {
		if v, ok := e.Probe(parent); !ok || v != Win(1) {
			t.Errorf("parent: %v (%v), want Win(1)", v, ok)
		}
	}
	if a.Len() != b.Len() {
		t.Fatalf("stored %d vs %d positions", a.Len(), b.Len())
	}
	a.Each(func(p chess.Position, v Value) bool {
		if w, ok := b.Probe(p); !ok || w != v {
			t.Errorf("%s: %v in one order, %v (%v) in the other", p.FEN(), v, w, ok)
			return false
		}
		return true
	})
}
