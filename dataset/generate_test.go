package dataset_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/dataset"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// randomOptions exercise every selector: materials (one without tables,
// for rejected rows), a clock range and a category filter.
var randomOptions = dataset.GenerateOptions{
	Count: 60, Seed: 42, Materials: []string{"KQvK", "KRKR", "KPK", "KQQK"},
	ClockMin: 10, ClockMax: 99, Categories: []string{"win", "cursed-win", "draw", "loss"}, ShardRows: 16,
}

func generate(t *testing.T, l *dataset.Labeler, opts dataset.GenerateOptions) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "out")
	if _, err := dataset.Generate(context.Background(), l, opts, dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// sameFiles fails unless dirs a and b hold the same names and bytes.
func sameFiles(t *testing.T, a, b string) {
	t.Helper()
	ea, _ := os.ReadDir(a)
	eb, _ := os.ReadDir(b)
	if len(ea) != len(eb) || len(ea) == 0 {
		t.Fatalf("%d files and %d files", len(ea), len(eb))
	}
	for i := range ea {
		da, _ := os.ReadFile(filepath.Join(a, ea[i].Name()))
		db, _ := os.ReadFile(filepath.Join(b, eb[i].Name()))
		if ea[i].Name() != eb[i].Name() || !bytes.Equal(da, db) {
			t.Errorf("%s and %s differ", ea[i].Name(), eb[i].Name())
		}
	}
}

// TestDeterministic: two runs with the same parameters, on separate table
// handles and with different numbers of workers, give byte-identical files, random and FEN-file alike; the
// manifest holds no timestamp and no host path.
func TestDeterministic(t *testing.T) {
	one, many := randomOptions, randomOptions
	one.Workers, many.Workers = 1, 4
	a := generate(t, fixtureLabeler(t), one)
	b := generate(t, fixtureLabeler(t), many)
	sameFiles(t, a, b)
	fens, err := os.ReadFile(testenv.Testdata(t, "dataset", "sample.fens"))
	if err != nil {
		t.Fatal(err)
	}
	opts := dataset.GenerateOptions{FENs: fens, ShardRows: 20}
	sameFiles(t, generate(t, fixtureLabeler(t), opts), generate(t, fixtureLabeler(t), opts))
	m, _ := os.ReadFile(filepath.Join(a, dataset.ManifestName))
	if strings.Contains(string(m), filepath.Dir(a)) || strings.Contains(string(m), "/tmp") {
		t.Errorf("the manifest names a host path:\n%s", m)
	}
	other := randomOptions
	other.Seed++
	c := generate(t, fixtureLabeler(t), other)
	if x, y := readRows(t, a), readRows(t, c); x[0].FEN == y[0].FEN && x[1].FEN == y[1].FEN {
		t.Error("another seed drew the same positions")
	}
}

// TestRandomSelection: random rows obey the selectors by the rules (the
// material on the board, the clock, the category filter), materials the
// tables lack are rejected, and the artifact verifies.
func TestRandomSelection(t *testing.T) {
	l := fixtureLabeler(t)
	dir := generate(t, l, randomOptions)
	rows := readRows(t, dir)
	if len(rows) != randomOptions.Count {
		t.Fatalf("%d rows, want %d", len(rows), randomOptions.Count)
	}
	kinds := map[string]int{}
	for _, r := range rows {
		pos, err := chess.ParseFEN(r.FEN)
		if err != nil {
			t.Fatal(err)
		}
		if c := pos.HalfmoveClock(); c < randomOptions.ClockMin || c > randomOptions.ClockMax || c != r.Clock {
			t.Errorf("row %d: clock %d (field %d) outside %d-%d", r.Row, c, r.Clock, randomOptions.ClockMin, randomOptions.ClockMax)
		}
		if !slices.Contains([]string{"KQK", "KRKR", "KPK", "KQQK"}, canonicalMaterial(&pos)) {
			t.Errorf("row %d: material %s not asked for", r.Row, canonicalMaterial(&pos))
		}
		kinds[r.Label]++
		switch {
		case canonicalMaterial(&pos) == "KQQK" && (pos.IsCheckmate() || pos.IsStalemate()):
			// The rules settle a board with no move, with or without a table.
			if r.Label != dataset.LabelExact || r.Provenance.Arbiter != dataset.ArbiterRules {
				t.Errorf("row %d: %s has no legal move: %s by %q", r.Row, r.FEN, r.Label, r.Provenance.Arbiter)
			}
		case canonicalMaterial(&pos) == "KQQK":
			if r.Label != dataset.LabelRejected || !strings.Contains(r.Reason, "table not found") {
				t.Errorf("row %d: %s with no KQQK table: %s %q", r.Row, r.FEN, r.Label, r.Reason)
			}
		case !slices.Contains(randomOptions.Categories, r.Category):
			t.Errorf("row %d: category %q not asked for", r.Row, r.Category)
		}
	}
	if kinds[dataset.LabelExact] == 0 || kinds[dataset.LabelRejected] == 0 {
		t.Errorf("labels %v: want both kinds", kinds)
	}
	if rep := verify(t, l, dir); !rep.OK() {
		t.Errorf("verify: %v", rep.Problems)
	}
}

// canonicalMaterial names the board's material stronger side first, by
// the usual piece values, as the tables do (KQK for a black queen too).
func canonicalMaterial(pos *chess.Position) string {
	side := func(c chess.Color) string {
		s := "K"
		for _, pt := range []chess.PieceType{chess.Queen, chess.Rook, chess.Bishop, chess.Knight, chess.Pawn} {
			s += strings.Repeat(string("PNBRQ"[pt-1]), popcount(uint64(pos.Pieces(c, pt))))
		}
		return s
	}
	w, b := side(chess.White), side(chess.Black)
	if len(b) > len(w) || (len(b) == len(w) && b < w) {
		w, b = b, w
	}
	return w + b
}

func popcount(x uint64) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

// TestGenerateRejectsBadOptions: options that cannot give a dataset fail
// before anything is written.
func TestGenerateRejectsBadOptions(t *testing.T) {
	l := fixtureLabeler(t)
	for _, o := range []dataset.GenerateOptions{
		{Count: 0},
		{Count: 1, ClockMin: 5, ClockMax: 4},
		{Count: 1, Categories: []string{"won"}},
		{Count: 1, Materials: []string{"QK"}},
		{Count: 1, Materials: []string{"KXK"}},
	} {
		dir := filepath.Join(t.TempDir(), "out")
		if _, err := dataset.Generate(context.Background(), l, o, dir); err == nil {
			t.Errorf("%+v: no error", o)
		}
		if _, err := os.Stat(filepath.Join(dir, dataset.ManifestName)); err == nil {
			t.Errorf("%+v: wrote a manifest", o)
		}
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "old"), nil, 0o644)
	if _, err := dataset.Generate(context.Background(), l, dataset.GenerateOptions{Count: 1}, dir); err == nil {
		t.Error("generated into a non-empty directory")
	}
}

// BenchmarkGenerate measures generation speed (rows/s) of random rows
// from the fixture tables, table hashing included, on one worker and on
// every core.
func BenchmarkGenerate(b *testing.B) {
	for _, workers := range []int{1, 0} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			opts := dataset.GenerateOptions{Count: 500, Seed: 1, ClockMax: 99, Workers: workers}
			for b.Loop() {
				l := fixtureLabeler(b)
				dir := filepath.Join(b.TempDir(), "out")
				if _, err := dataset.Generate(context.Background(), l, opts, dir); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(opts.Count*b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// TestVerifyChecksParams: rows must fit the manifest's generation
// parameters (the arbiter: the parameters themselves): a count, clock
// range, material list or category list changed in the manifest fails.
func TestVerifyChecksParams(t *testing.T) {
	l := fixtureLabeler(t)
	opts := randomOptions
	opts.Materials = []string{"KNBvK", "KRKR", "KQQK"} // unsorted pieces still name KBNK
	src := generate(t, l, opts)
	if rep := verify(t, l, src); !rep.OK() {
		t.Fatalf("verify: %v", rep.Problems)
	}
	for _, tc := range []struct {
		name, from, to, reason string
	}{
		{"count", `"count": 60`, `"count": 61`, "the parameters ask for 61"},
		{"clock range", `"clock_min": 10`, `"clock_min": 98`, "outside the parameters' range 98-99"},
		{"materials", `"KRKR",`, `"KPK",`, "material KRKR, the parameters ask for"},
		{"categories", `"cursed-win",`, ``, "the parameters ask for win,draw,loss"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyDir(t, src)
			p := filepath.Join(dir, dataset.ManifestName)
			data, _ := os.ReadFile(p)
			if !strings.Contains(string(data), tc.from) {
				t.Fatalf("the manifest has no %q", tc.from)
			}
			os.WriteFile(p, []byte(strings.Replace(string(data), tc.from, tc.to, 1)), 0o644)
			rep := verify(t, l, dir)
			for _, pr := range rep.Problems {
				if strings.Contains(pr.Reason, tc.reason) {
					return
				}
			}
			t.Errorf("no problem with %q: %v", tc.reason, rep.Problems)
		})
	}
}
