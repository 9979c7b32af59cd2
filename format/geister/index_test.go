package geister

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/tbfs/tbfs/geister"
	"github.com/tbfs/tbfs/internal/testkit/geisteroracle"
)

// TestMaterialsOracle checks every material's id, name, swap, block size and
// entry counts against materials.tsv (all 256, reference output).
func TestMaterialsOracle(t *testing.T) {
	rows := geisteroracle.Shared(t, "materials.tsv")
	if len(rows) != NumMaterials {
		t.Fatalf("materials.tsv has %d rows, want %d", len(rows), NumMaterials)
	}
	all := Materials()
	for _, r := range rows {
		id := r.Int(t, "id")
		m := Material{r.Int(t, "pb"), r.Int(t, "pr"), r.Int(t, "ob"), r.Int(t, "or")}
		got, err := MaterialByID(id)
		if err != nil || got != m || all[id] != m || m.ID() != id {
			t.Errorf("id %d: MaterialByID = %v, %v; want %v (ID() = %d)", id, got, err, m, m.ID())
		}
		if m.String() != r["material"] || m.FileName() != r["file"] {
			t.Errorf("id %d: names %q %q, want %q %q", id, m, m.FileName(), r["material"], r["file"])
		}
		if pm, err := ParseMaterial(r["material"]); err != nil || pm != m {
			t.Errorf("ParseMaterial(%q) = %v, %v", r["material"], pm, err)
		}
		if m.Total() != r.Int(t, "total") || m.Swap().ID() != r.Int(t, "swap_id") {
			t.Errorf("id %d: total %d swap %d", id, m.Total(), m.Swap().ID())
		}
		if m.BlockSize() != r.Uint(t, "block_size") || m.OuterEntries() != r.Uint(t, "outer_entries") ||
			m.Entries() != r.Uint(t, "obsblk_entries") || m.LegacyEntries() != r.Uint(t, "legacy_entries") {
			t.Errorf("id %d %v: block %d outer %d entries %d legacy %d; oracle %s %s %s %s", id, m,
				m.BlockSize(), m.OuterEntries(), m.Entries(), m.LegacyEntries(),
				r["block_size"], r["outer_entries"], r["obsblk_entries"], r["legacy_entries"])
		}
		if fixed := r["obsblk_entries"] != r["legacy_entries"]; fixed != m.MirrorFixed() {
			t.Errorf("id %d %v: MirrorFixed = %v, oracle sizes differ = %v", id, m, m.MirrorFixed(), fixed)
		}
	}
}

func TestMaterialErrors(t *testing.T) {
	for _, id := range []int{-1, 256, 1000} {
		if _, err := MaterialByID(id); !errors.Is(err, ErrNoMaterial) {
			t.Errorf("MaterialByID(%d) error %v", id, err)
		}
	}
	for _, s := range []string{"", "pb0pr1ob1or1", "pb1pr1ob1or5", "pb1pr1ob1or", "xx1pr1ob1or1", "pb1pr1ob1or1x"} {
		if _, err := ParseMaterial(s); !errors.Is(err, ErrNoMaterial) {
			t.Errorf("ParseMaterial(%q) error %v", s, err)
		}
	}
	bad := Material{0, 1, 1, 1}
	if bad.ID() != -1 || bad.FileName() != "" || bad.Entries() != 0 {
		t.Errorf("invalid material %v has id %d file %q entries %d", bad, bad.ID(), bad.FileName(), bad.Entries())
	}
}

// checkIndexRow checks one oracle row carrying a board and its index
// columns (rank.tsv or values.tsv): the board parses to the oracle's
// bitboards, ranks to the oracle's index, and its canonical form and the
// unrank of the index are the reference's canonical representative.
func checkIndexRow(t *testing.T, r geisteroracle.Row) {
	t.Helper()
	p, err := geister.ParseBoard(r["board"])
	if err != nil {
		t.Errorf("ParseBoard(%q): %v", r["board"], err)
		return
	}
	want := geister.Position{OwnBlue: r.Hex(t, "pb_hex"), OwnRed: r.Hex(t, "pr_hex"), OppBlue: r.Hex(t, "ob_hex"), OppRed: r.Hex(t, "or_hex")}
	if p != want {
		t.Errorf("ParseBoard(%q) = %+v, oracle bitboards %+v", r["board"], p, want)
		return
	}
	if p.String() != r["board"] {
		t.Errorf("String() = %q, want %q", p.String(), r["board"])
	}
	m, idx, err := Rank(p)
	if err != nil {
		t.Errorf("Rank(%s): %v", p, err)
		return
	}
	if m.String() != r["material"] || idx != r.Uint(t, "obsblk_rank") {
		t.Errorf("Rank(%s) = %v %d, oracle %s %s", p, m, idx, r["material"], r["obsblk_rank"])
	}
	block := m.BlockSize()
	if block != r.Uint(t, "block_size") || idx/block != r.Uint(t, "outer") || idx%block != r.Uint(t, "inner") {
		t.Errorf("%s: outer/inner %d/%d, oracle %s/%s", p, idx/block, idx%block, r["outer"], r["inner"])
	}
	c, err := Canonical(p)
	if err != nil || c.String() != r["canon_board"] {
		t.Errorf("Canonical(%s) = %s, %v; oracle %s", p, c, err, r["canon_board"])
	}
	if mir := c != p; mir != (r["canon_is_mirror"] == "1") && c != p.Mirror() {
		t.Errorf("%s: canonical is mirror %v, oracle %s", p, mir, r["canon_is_mirror"])
	}
	u, err := Unrank(m, r.Uint(t, "obsblk_rank"))
	if err != nil || u.String() != r["canon_board"] {
		t.Errorf("Unrank(%v, %s) = %s, %v; oracle %s", m, r["obsblk_rank"], u, err, r["canon_board"])
	}
	o := geister.Observation{OwnBlue: p.OwnBlue, OwnRed: p.OwnRed, Opp: p.Opp(), OppRed: m.OR}
	om, first, cols, err := Colourings(o)
	if err != nil || om != m || first != idx/block*block || uint64(len(cols)) != block {
		t.Errorf("Colourings(%s) = %v %d %d colourings, %v", p, om, first, len(cols), err)
		return
	}
	if cols[idx%block] != p {
		t.Errorf("Colourings(%s)[%d] = %s", p, idx%block, cols[idx%block])
	}
	if gat, ok := r["gat"]; ok {
		if p.GAT() != gat {
			t.Errorf("GAT(%s) = %s, oracle %s", p, p.GAT(), gat)
		}
		if q, err := geister.ParseGAT(gat); err != nil || q != p {
			t.Errorf("ParseGAT(%s) = %s, %v", gat, q, err)
		}
	}
}

// TestRankOracle checks every row of rank.tsv (all 256 materials, reference
// index and unrank output).
func TestRankOracle(t *testing.T) {
	for _, r := range geisteroracle.Shared(t, "rank.tsv") {
		checkIndexRow(t, r)
		if r["obs_symmetric"] == "1" {
			p, _ := geister.ParseBoard(r["board"])
			o := geister.Position{OwnBlue: p.OwnBlue, OwnRed: p.OwnRed, OppBlue: p.Opp()}
			if o.Mirror() != o {
				t.Errorf("%s: oracle says the observation is symmetric", p)
			}
		}
		if t.Failed() {
			return
		}
	}
}

// TestValuesIndexOracle checks the index columns of every values.tsv row.
func TestValuesIndexOracle(t *testing.T) {
	for _, r := range geisteroracle.Shared(t, "values.tsv") {
		checkIndexRow(t, r)
		if t.Failed() {
			return
		}
	}
}

// TestRankUnrankRoundTrip is an exhaustive proof over sampled indexes of
// every material: Unrank gives a canonical position whose Rank is the index.
func TestRankUnrankRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, m := range Materials() {
		n := m.Entries()
		for _, idx := range []uint64{0, 1, n / 2, n - 2, n - 1, rng.Uint64N(n), rng.Uint64N(n), rng.Uint64N(n)} {
			p, err := Unrank(m, idx)
			if err != nil {
				t.Fatalf("Unrank(%v, %d): %v", m, idx, err)
			}
			gm, gi, err := Rank(p)
			if err != nil || gm != m || gi != idx {
				t.Fatalf("Rank(Unrank(%v, %d) = %s) = %v %d, %v", m, idx, p, gm, gi, err)
			}
			if c, _ := Canonical(p); c != p {
				t.Fatalf("Unrank(%v, %d) = %s is not canonical (%s)", m, idx, p, c)
			}
		}
		if _, err := Unrank(m, n); !errors.Is(err, ErrIndexRange) {
			t.Fatalf("Unrank(%v, entries) error %v", m, err)
		}
	}
}

// TestRankExhaustiveID000 checks that Unrank then Rank is the identity on
// every index of the smallest material, and that every position of it ranks
// inside the table (a bijection between canonical positions and indexes).
func TestRankExhaustiveID000(t *testing.T) {
	m := Material{1, 1, 1, 1}
	for idx := range m.Entries() {
		p, err := Unrank(m, idx)
		if err != nil {
			t.Fatal(err)
		}
		if _, gi, err := Rank(p); err != nil || gi != idx {
			t.Fatalf("Rank(Unrank(%d) = %s) = %d, %v", idx, p, gi, err)
		}
		if _, gi, err := Rank(p.Mirror()); err != nil || gi != idx {
			t.Fatalf("Rank(mirror of Unrank(%d) = %s) = %d, %v", idx, p, gi, err)
		}
	}
}

func TestRankErrors(t *testing.T) {
	tests := []struct {
		name string
		p    geister.Position
		want error
	}{
		{"off board", geister.Position{OwnBlue: 1, OwnRed: 1 << 10, OppBlue: 1 << 20, OppRed: 1 << 30}, geister.ErrInvalidPosition},
		{"overlap", geister.Position{OwnBlue: 1 << 10, OwnRed: 1 << 10, OppBlue: 1 << 20, OppRed: 1 << 30}, geister.ErrInvalidPosition},
		{"no own blue", geister.Position{OwnRed: 1 << 10, OppBlue: 1 << 20, OppRed: 1 << 30}, ErrNoMaterial},
		{"five reds", geister.Position{OwnBlue: 1 << 9, OwnRed: 0x3E << 16, OppBlue: 1 << 33, OppRed: 1 << 41}, geister.ErrInvalidPosition},
	}
	for _, tc := range tests {
		if _, _, err := Rank(tc.p); !errors.Is(err, tc.want) {
			t.Errorf("%s: Rank error %v, want %v", tc.name, err, tc.want)
		}
	}
}

// TestLegacyRankOracle checks LegacyRank on every rank.tsv and values.tsv
// row (the reference's legacy_rank column).
func TestLegacyRankOracle(t *testing.T) {
	for _, file := range []string{"rank.tsv", "values.tsv"} {
		for _, r := range geisteroracle.Shared(t, file) {
			p, err := geister.ParseBoard(r["board"])
			if err != nil {
				t.Fatal(err)
			}
			m, idx, err := LegacyRank(p)
			if err != nil || idx != r.Uint(t, "legacy_rank") || m.String() != r["material"] {
				t.Fatalf("%s: LegacyRank(%s) = %v %d, %v; oracle %s %s", file, p, m, idx, err, r["material"], r["legacy_rank"])
			}
			if _, mi, _ := LegacyRank(p.Mirror()); mi != idx {
				t.Fatalf("%s: mirror image ranks %d, not %d", p, mi, idx)
			}
		}
	}
}
