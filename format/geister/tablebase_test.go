package geister

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/mmap"
)

var (
	rawDirOnce sync.Once
	rawDir     string
	rawDirErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if rawDir != "" {
		os.RemoveAll(rawDir)
	}
	os.Exit(code)
}

// sharedTables returns ../shared/geister/tables (skipping when absent).
func sharedTables(t testing.TB) string {
	t.Helper()
	return testenv.Shared(t, "geister", "tables")
}

// rawTables returns a directory holding every shared table as a raw .bin
// only: decompressed from the shipped .zst and checked against the
// reference's SHA256SUMS, so the raw bytes are the reference's own.
func rawTables(t testing.TB) string {
	t.Helper()
	dir := sharedTables(t)
	rawDirOnce.Do(func() { rawDir, rawDirErr = makeRawTables(dir) })
	if rawDirErr != nil {
		t.Fatal(rawDirErr)
	}
	return rawDir
}

func makeRawTables(shared string) (string, error) {
	sums := map[string]string{}
	f, err := os.Open(filepath.Join(shared, "SHA256SUMS"))
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) == 2 {
			sums[fields[1]] = fields[0]
		}
	}
	dir, err := os.MkdirTemp("", "geister-raw-")
	if err != nil {
		return "", err
	}
	dec, err := zstd.NewReader(nil)
	if err != nil {
		return "", err
	}
	defer dec.Close()
	matches, _ := filepath.Glob(filepath.Join(shared, "*_obsblk.bin.zst"))
	for _, zst := range matches {
		name := strings.TrimSuffix(filepath.Base(zst), ".zst")
		in, err := os.Open(zst)
		if err != nil {
			return "", err
		}
		if err := dec.Reset(in); err != nil {
			in.Close()
			return "", err
		}
		raw, err := io.ReadAll(dec)
		in.Close()
		if err != nil {
			return "", err
		}
		h := sha256.Sum256(raw)
		if hex.EncodeToString(h[:]) != sums[name] {
			return "", errors.New("decompressed " + name + " does not match SHA256SUMS")
		}
		if err := os.WriteFile(filepath.Join(dir, name), raw, 0o644); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// openDir opens a Tablebase over one local directory.
func openDir(t testing.TB, dir string, opts Options) *Tablebase {
	t.Helper()
	tb, closeTB := openTemp(t, dir, opts)
	t.Cleanup(closeTB)
	return tb
}

// zstdOnly returns a directory with only the .zst files of dir (hard
// links or copies), so the raw file cannot be picked.
func zstdOnly(t testing.TB, dir string) string {
	t.Helper()
	out := t.TempDir()
	matches, _ := filepath.Glob(filepath.Join(dir, "*.bin.zst"))
	for _, m := range matches {
		b, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, filepath.Base(m)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// forms returns the table forms to test: raw files and zstd files.
func forms(t *testing.T, rawDir, zstdDir string) map[string]*Tablebase {
	return map[string]*Tablebase{
		"raw":  openDir(t, rawDir, Options{}),
		"zstd": openDir(t, zstdDir, Options{CacheBytes: 1 << 20}),
	}
}

// checkValues checks DTW and Probe on every row of a values.tsv file
// (reference runtime output), and the raw byte at the oracle's index.
func checkValues(t *testing.T, tbs map[string]*Tablebase, rows []oracleRow) {
	ctx := context.Background()
	for form, tb := range tbs {
		bad := 0
		for _, r := range rows {
			p, err := ParseBoard(r["board"])
			if err != nil {
				t.Fatal(err)
			}
			want := uint8(r.int(t, "value"))
			got, err := tb.DTW(ctx, p)
			if err != nil || got != want {
				t.Errorf("%s: DTW(%s) = %d, %v; oracle %d (pos %s)", form, p, got, err, want, r["pos_id"])
				if bad++; bad > 10 {
					t.FailNow()
				}
				continue
			}
			res, err := tb.Probe(ctx, p)
			if err != nil || res.Value != want || res.Outcome != ResultOf(want).Outcome {
				t.Errorf("%s: Probe(%s) = %+v, %v", form, p, res, err)
			}
			if r["raw_byte"] != r["value"] {
				t.Errorf("oracle row %s: raw byte %s differs from value %s", r["pos_id"], r["raw_byte"], r["value"])
			}
		}
	}
}

// checkMoves checks Moves on every parent of a moves.tsv file: the
// parent's value and every child's value are the reference's.
func checkMoves(t *testing.T, tbs map[string]*Tablebase, rows []oracleRow) {
	ctx := context.Background()
	byParent := map[string][]oracleRow{}
	for _, r := range rows {
		byParent[r["board"]] = append(byParent[r["board"]], r)
	}
	for form, tb := range tbs {
		for board, rs := range byParent {
			p, err := ParseBoard(board)
			if err != nil {
				t.Fatal(err)
			}
			ms, err := tb.Moves(ctx, p)
			if err != nil {
				t.Errorf("%s: Moves(%s): %v", form, p, err)
				continue
			}
			if ms.Value != uint8(rs[0].int(t, "value")) || len(ms.List) != len(rs) {
				t.Errorf("%s: Moves(%s) value %d with %d moves; oracle %s with %d", form, p, ms.Value, len(ms.List), rs[0]["value"], len(rs))
				continue
			}
			byMove := map[string]MoveValue{}
			for _, mv := range ms.List {
				byMove[mv.From.Coord()+mv.To.Coord()] = mv
			}
			for _, r := range rs {
				mv, ok := byMove[r["from"]+r["to"]]
				if !ok || mv.Value != uint8(r.int(t, "child_value")) || mv.Child.String() != r["child_board"] {
					t.Errorf("%s: %s move %s-%s: child %s value %d; oracle %s %s", form, p, r["from"], r["to"], mv.Child, mv.Value, r["child_board"], r["child_value"])
				}
			}
			best := ms.Best()
			if ms.Terminal {
				if len(best) != 0 {
					t.Errorf("%s: %s is terminal, yet moves are marked best", form, p)
				}
				continue
			}
			if len(best) == 0 || best[0].Result.Value != ms.Value && !(ms.Value == 0 && best[0].Result.Outcome == Draw) {
				t.Errorf("%s: %s value %d, best move result %+v", form, p, ms.Value, best)
			}
		}
	}
}

// TestOracleShared checks every values.tsv and moves.tsv row against the
// shared tables, raw and zstd.
func TestOracleShared(t *testing.T) {
	tbs := forms(t, rawTables(t), zstdOnly(t, sharedTables(t)))
	checkValues(t, tbs, oracle(t, "values.tsv"))
	checkMoves(t, tbs, oracle(t, "moves.tsv"))
}

// TestOracleFixtures checks the committed id000 fixtures against the
// committed subset of oracle rows, so a fresh clone tests the reader too.
func TestOracleFixtures(t *testing.T) {
	dir := testenv.Testdata(t, "geister")
	rawOnly := t.TempDir()
	b, err := os.ReadFile(filepath.Join(dir, Material{1, 1, 1, 1}.FileName()))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rawOnly, Material{1, 1, 1, 1}.FileName()), b, 0o644); err != nil {
		t.Fatal(err)
	}
	tbs := forms(t, rawOnly, zstdOnly(t, dir))
	checkValues(t, tbs, readTSV(t, filepath.Join(dir, "values_id000.tsv")))
	checkMoves(t, tbs, readTSV(t, filepath.Join(dir, "moves_id000.tsv")))
}

// TestFilePreference checks that with both forms present the compressed
// file is read (the reference runtime's preference).
func TestFilePreference(t *testing.T) {
	tb := openDir(t, testenv.Testdata(t, "geister"), Options{})
	name, err := tb.TableName(context.Background(), Material{1, 1, 1, 1})
	if err != nil || name != "id000_pb1pr1ob1or1_obsblk.bin.zst" {
		t.Errorf("TableName = %q, %v", name, err)
	}
	if ok, err := tb.Has(context.Background(), Material{1, 1, 1, 2}); ok || err != nil {
		t.Errorf("Has(id001) in the fixtures = %v, %v", ok, err)
	}
}

// TestConsistencyExhaustiveID000 checks the rule of FORMAT.md §2 on every
// entry of the total-4 table: each position's value is the minimax of its
// children's values (Moves returns ErrCorrupt otherwise). The table's own
// rules are the arbiter.
func TestConsistencyExhaustiveID000(t *testing.T) {
	tb := openDir(t, testenv.Testdata(t, "geister"), Options{})
	m := Material{1, 1, 1, 1}
	ctx := context.Background()
	step := uint64(1)
	if raceEnabled {
		step = 7
	}
	for idx := uint64(0); idx < m.Entries(); idx += step {
		p, err := Unrank(m, idx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tb.Moves(ctx, p); err != nil {
			t.Fatalf("index %d %s: %v", idx, p, err)
		}
	}
}

// TestConsistencySampleShared checks the consistency rule on random
// entries of every shared table (total 5 children reach total 4 tables).
func TestConsistencySampleShared(t *testing.T) {
	tb := openDir(t, sharedTables(t), Options{})
	rng := rand.New(rand.NewPCG(7, 9))
	ctx := context.Background()
	n := 100000
	if raceEnabled {
		n = 3000
	}
	for _, m := range []Material{{1, 1, 1, 2}, {1, 1, 2, 1}, {1, 2, 1, 1}, {2, 1, 1, 1}} {
		for range n {
			p, err := Unrank(m, rng.Uint64N(m.Entries()))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tb.Moves(ctx, p); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			// The position and its mirror image share one entry.
			a, err1 := tb.DTW(ctx, p)
			b, err2 := tb.DTW(ctx, p.Mirror())
			if err1 != nil || err2 != nil || a != b {
				t.Fatalf("%s: %d %v, mirror %d %v", p, a, err1, b, err2)
			}
		}
	}
}

// TestRuleCases checks hand-built positions whose result follows from the
// rules alone, through the table reader.
func TestRuleCases(t *testing.T) {
	tb := openDir(t, testenv.Testdata(t, "geister"), Options{})
	ctx := context.Background()
	tests := []struct {
		board string
		value uint8
		why   string
	}{
		{"B...../....../..R.../....../...b../...r..", 1, "escape available now (table entry)"},
		{"..B..B/....../..R.../....../...b../...r..", 1, "escape available now (no table for pb2pr1ob1or1 needed)"},
		{"....../.B..../...R../....../....../...r..", 1, "all opponent blues captured"},
		{"....../.B..../....../....../...b../...r..", 1, "all own reds captured"},
		{"....../....../...R../....../...b../...r..", 2, "all own blues captured"},
		{"....../..B.../...R../....../...b../......", 2, "all opponent reds captured"},
		{"...b../...B../....../...R../....../...r..", 1, "capturing the last blue wins in one"},
		{"....../.....R/....../....../....Bb/.....r", 1, "capture the last blue while far from the exit"},
	}
	for _, tc := range tests {
		p, err := ParseBoard(tc.board)
		if err != nil {
			t.Fatal(err)
		}
		v, err := tb.DTW(ctx, p)
		if tc.why == "capturing the last blue wins in one" || strings.HasPrefix(tc.why, "capture the last blue") {
			// Not terminal: the table holds 1 because a move takes the
			// last blue (FORMAT.md §2).
			if _, term := p.Terminal(); term {
				t.Fatalf("%s should not be terminal", p)
			}
		}
		if err != nil && errors.Is(err, ErrNoTable) {
			continue
		}
		if err != nil || v != tc.value {
			t.Errorf("%s (%s): DTW = %d, %v; want %d", p, tc.why, v, err, tc.value)
		}
	}
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	fix := testenv.Testdata(t, "geister")
	m := Material{1, 1, 1, 1}
	raw, err := os.ReadFile(filepath.Join(fix, m.FileName()))
	if err != nil {
		t.Fatal(err)
	}
	zst, err := os.ReadFile(filepath.Join(fix, m.FileName()+".zst"))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := ParseBoard("...r../....../..B.../.R..../....../b.....") // oracle pos 1, index 97690
	probe := func(t *testing.T, name string, data []byte) error {
		t.Helper()
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		tb := openDir(t, dir, Options{})
		_, err := tb.DTW(ctx, p)
		return err
	}
	le32 := func(b []byte, off int, v uint32) {
		b[off], b[off+1], b[off+2], b[off+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	}
	u32 := func(b []byte, off int) uint32 {
		return uint32(b[off]) | uint32(b[off+1])<<8 | uint32(b[off+2])<<16 | uint32(b[off+3])<<24
	}
	nframes := int(u32(zst, len(zst)-9))
	entries := len(zst) - 9 - 8*nframes // first seek table entry
	frameOfP := 97690 / 8192
	frameStart := 0
	for i := 0; i < frameOfP; i++ {
		frameStart += int(u32(zst, entries+8*i))
	}
	mutate := func(f func(b []byte)) []byte {
		b := append([]byte(nil), zst...)
		f(b)
		return b
	}
	tests := []struct {
		name string
		file string
		data []byte
		want error
	}{
		{"raw too short", m.FileName(), raw[:len(raw)-1], ErrCorrupt},
		{"raw too long", m.FileName(), append(append([]byte(nil), raw...), 0), ErrCorrupt},
		{"raw value beyond horizon", m.FileName(), func() []byte { b := append([]byte(nil), raw...); b[97690] = 250; return b }(), ErrCorrupt},
		{"no seek table", m.FileName() + ".zst", zst[:len(zst)-20], ErrCorrupt},
		{"footer magic", m.FileName() + ".zst", mutate(func(b []byte) { b[len(b)-1] ^= 0xFF }), ErrCorrupt},
		{"frame count lies", m.FileName() + ".zst", mutate(func(b []byte) { le32(b, len(b)-9, uint32(nframes+1)) }), ErrCorrupt},
		{"huge frame count", m.FileName() + ".zst", mutate(func(b []byte) { le32(b, len(b)-9, 0xFFFFFFFF) }), ErrCorrupt},
		{"compressed size lies", m.FileName() + ".zst", mutate(func(b []byte) { le32(b, entries, u32(b, entries)+1) }), ErrCorrupt},
		{"compressed sizes shifted", m.FileName() + ".zst", mutate(func(b []byte) {
			le32(b, entries+8*frameOfP, u32(b, entries+8*frameOfP)+3)
			le32(b, entries+8*(frameOfP+1), u32(b, entries+8*(frameOfP+1))-3)
		}), ErrCorrupt},
		{"decompressed total lies", m.FileName() + ".zst", mutate(func(b []byte) { le32(b, entries+4, 8191) }), ErrCorrupt},
		{"decompressed sizes shifted", m.FileName() + ".zst", mutate(func(b []byte) {
			le32(b, entries+8*frameOfP+4, 8191)
			le32(b, entries+8*(frameOfP+1)+4, 8193)
		}), ErrCorrupt},
		{"frame magic broken", m.FileName() + ".zst", mutate(func(b []byte) { b[frameStart] ^= 0xFF }), ErrCorrupt},
		{"frame truncated inside", m.FileName() + ".zst", mutate(func(b []byte) { le32(b, frameStart, 0xFD2FB528); b[frameStart+4] = 0xFF }), ErrCorrupt},
		{"skippable magic", m.FileName() + ".zst", mutate(func(b []byte) { b[entries-8] ^= 1 }), ErrCorrupt},
		{"reserved descriptor bits", m.FileName() + ".zst", mutate(func(b []byte) { b[len(b)-5] = 0x04 }), ErrCorrupt},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := probe(t, tc.file, tc.data)
			if !errors.Is(err, tc.want) {
				t.Errorf("error %v, want %v", err, tc.want)
			}
		})
	}
	t.Run("no table", func(t *testing.T) {
		tb := openDir(t, t.TempDir(), Options{})
		if _, err := tb.DTW(ctx, p); !errors.Is(err, ErrNoTable) {
			t.Errorf("error %v, want ErrNoTable", err)
		}
		// Terminal positions need no table.
		q, _ := ParseBoard("B...../....../..R.../....../...b../...r..")
		if v, err := tb.DTW(ctx, q); v != 1 || err != nil {
			t.Errorf("terminal DTW = %d, %v", v, err)
		}
	})
	t.Run("bad positions", func(t *testing.T) {
		tb := openDir(t, fix, Options{})
		for _, q := range []Position{
			{OwnBlue: 1, OwnRed: 1 << 10, OppBlue: 1 << 20, OppRed: 1 << 30},
			{OwnBlue: 1 << 10, OwnRed: 1 << 10, OppBlue: 1 << 20, OppRed: 1 << 30},
			{OwnBlue: 0x3E << 16, OwnRed: 1 << 10, OppBlue: 1 << 33, OppRed: 1 << 41},
		} {
			if _, err := tb.DTW(ctx, q); !errors.Is(err, ErrInvalidPosition) {
				t.Errorf("DTW(%+v) error %v", q, err)
			}
		}
	})
	t.Run("closed", func(t *testing.T) {
		src, err := mmap.New(fix)
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		tb, _ := Open(Options{}, src)
		if _, err := tb.DTW(ctx, p); err != nil {
			t.Fatal(err)
		}
		tb.Close()
		if _, err := tb.DTW(ctx, p); !errors.Is(err, source.ErrClosed) {
			t.Errorf("DTW after Close: %v", err)
		}
	})
	if _, err := Open(Options{}); err == nil {
		t.Error("Open with no source succeeded")
	}
}

func TestAvailable(t *testing.T) {
	tb := openDir(t, sharedTables(t), Options{})
	got, err := tb.Available(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// The shared folder holds the five tables of totals 4 and 5 (its
	// README), ids 0..4.
	if len(got) != 5 {
		t.Fatalf("Available = %v", got)
	}
	for i, m := range got {
		if m.ID() != i {
			t.Errorf("Available[%d] = %v (id %d)", i, m, m.ID())
		}
	}
}
