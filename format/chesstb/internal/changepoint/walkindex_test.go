package changepoint

import (
	"errors"
	"math/rand/v2"
	"strconv"
	"testing"
)

// walkedBlock encodes a block of n random cells (the test-side encoder)
// and walks it whole with a Partial; it returns the random source for the
// test to go on with.
func walkedBlock(t *testing.T, seed uint64, layers, eb, ranks, n int) (*rand.Rand, [][]uint16, []byte, Params, *Partial) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, uint64(n)))
	cells := make([][]uint16, n)
	for i := range cells {
		cells[i] = randomCell(rng, layers, rng.IntN(5), rng.IntN(2) == 0, ranks)
	}
	payload := encode(cells, layers, eb)
	p := Params{Layers: layers, EntryBytes: eb, Positions: n, Ranks: ranks}
	walker, err := NewPartial(p, len(payload))
	if err != nil {
		t.Fatal(err)
	}
	if err := walker.WalkAll(payload); err != nil {
		t.Fatal(err)
	}
	return rng, cells, payload, p, walker
}

// TestWalkIndex: a Partial given the walk index another Partial built by
// walking the whole payload answers every position as the cells the
// test-side encoder wrote say (the arbiter: the step functions themselves),
// without walking; and an index with any one bit flipped, truncated,
// extended or of a partial walk is refused, leaving the Partial to walk.
func TestWalkIndex(t *testing.T) {
	for _, tc := range blockShapes {
		t.Run(tc.name, func(t *testing.T) {
			_, cells, payload, p, walker := walkedBlock(t, 2, tc.layers, tc.eb, tc.ranks, tc.n)
			index := walker.Index()

			pa, err := NewPartial(p, len(payload))
			if err != nil {
				t.Fatal(err)
			}
			if err := pa.SetIndex(payload, index); err != nil {
				t.Fatal(err)
			}
			walked := pa.walks
			for i, c := range cells {
				r, need, err := pa.Lookup(payload, i)
				if err != nil || need != 0 {
					t.Fatalf("cell %d: need %d, %v", i, need, err)
				}
				for h := 0; h < tc.layers; h++ {
					rank, draw := r.At(h)
					if draw != (c[h] == drawRank) || (!draw && rank != c[h]) {
						t.Fatalf("cell %d layer %d: got (%d,%v), want %d", i, h, rank, draw, c[h])
					}
				}
			}
			for _, st := range []State{Single, Double} {
				if pa.walks[st].n != walked[st].n {
					t.Fatalf("%v: lookups walked on from %d to %d records", st, walked[st].n, pa.walks[st].n)
				}
			}

			// Damage: each must be refused, and the Partial still walk.
			damaged := map[string][]byte{
				"empty":     nil,
				"magic":     append([]byte("xpwalk2\x00"), index[len(indexMagic):]...),
				"truncated": index[:len(index)-1],
				"trailing":  append(append([]byte(nil), index...), 0),
			}
			if tc.n > 100 {
				part, _ := NewPartial(p, len(payload))
				if _, _, err := part.Lookup(payload, tc.n/2); err != nil {
					t.Fatal(err)
				}
				damaged["partial"] = part.Index()
			}
			for bit := 0; bit < 8*(len(index)-len(indexMagic)); bit += 7 {
				d := append([]byte(nil), index...)
				d[len(indexMagic)+bit/8] ^= 1 << (bit % 8)
				damaged["bit"+strconv.Itoa(bit)] = d
			}
			for name, d := range damaged {
				fresh, _ := NewPartial(p, len(payload))
				err := fresh.SetIndex(payload, d)
				if err == nil {
					t.Fatalf("%s: damaged index accepted", name)
				}
				if name != "empty" && !errors.Is(err, ErrCorrupt) {
					t.Fatalf("%s: %v, not ErrCorrupt", name, err)
				}
				if _, _, err := fresh.Lookup(payload, tc.n-1); err != nil {
					t.Fatalf("%s: lookup after a refused index: %v", name, err)
				}
			}
		})
	}
}

// TestLookupIndexed: with a walk index set, LookupIndexed answers every
// position, in a random order, as the cells the test-side encoder wrote
// say (the arbiter), over a buffer in which only the ranges it asked ensure
// for hold the payload (the rest is junk), so it reads nothing it did not
// ask for; and it asks for a small part of a block per lookup.
func TestLookupIndexed(t *testing.T) {
	for _, tc := range blockShapes {
		t.Run(tc.name, func(t *testing.T) {
			rng, cells, payload, p, walker := walkedBlock(t, 3, tc.layers, tc.eb, tc.ranks, tc.n)
			pa, err := NewPartial(p, len(payload))
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, len(payload))
			for i := range buf {
				buf[i] = 0xA5
			}
			copy(buf, payload[:HeaderBytes])
			if err := pa.SetIndex(buf[:HeaderBytes], walker.Index()); err != nil {
				t.Fatal(err)
			}
			if !pa.Indexed() {
				t.Fatal("not Indexed after SetIndex")
			}
			asked := 0
			ensure := func(lo, hi int) error {
				if lo < 0 || hi > len(payload) || lo > hi {
					t.Fatalf("ensure(%d, %d) outside %d bytes", lo, hi, len(payload))
				}
				asked += hi - lo
				copy(buf[lo:hi], payload[lo:hi])
				return nil
			}
			for _, i := range rng.Perm(tc.n) {
				before := asked
				r, err := pa.LookupIndexed(buf, ensure, i)
				if err != nil {
					t.Fatalf("cell %d: %v", i, err)
				}
				// The stride's states and the record, nothing more.
				if n := asked - before; n > stride/4+8+4*tc.layers*tc.eb+64 {
					t.Fatalf("cell %d: asked for %d bytes", i, n)
				}
				for h := 0; h < tc.layers; h++ {
					rank, draw := r.At(h)
					if draw != (cells[i][h] == drawRank) || (!draw && rank != cells[i][h]) {
						t.Fatalf("cell %d layer %d: got (%d,%v), want %d", i, h, rank, draw, cells[i][h])
					}
				}
			}
			// Without a complete index it refuses.
			fresh, _ := NewPartial(p, len(payload))
			if _, err := fresh.LookupIndexed(payload, ensure, 0); err == nil {
				t.Fatal("LookupIndexed without an index answered")
			}
		})
	}
}
