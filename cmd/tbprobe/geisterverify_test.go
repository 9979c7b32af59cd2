package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/cmd/internal/tables"
	"github.com/tbfs/tbfs/format/geister"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/source/s3/s3test"
)

// The committed total-4 fixture's files (testdata/geister; their sha256 in
// its SHA256SUMS, the reference's lines).
const (
	gvRaw    = "id000_pb1pr1ob1or1_obsblk.bin"
	gvZst    = gvRaw + ".zst"
	gvLegacy = "id000_pb1pr1ob1or1.bin"
	gvTbsum  = gvRaw + geister.ManifestSuffix
)

// geisterFixture reads a file of the committed Geister fixture.
func geisterFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(testenv.Testdata(t, "geister", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// geisterDir writes files into a fresh directory and returns it.
func geisterDir(t *testing.T, files map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// flipped is b with the byte at off changed.
func flipped(b []byte, off int) []byte {
	out := append([]byte(nil), b...)
	out[off] ^= 0x10
	return out
}

// sumsLine is the reference's SHA256SUMS line for name, renamed to as.
func sumsLine(t *testing.T, name, as string) []byte {
	t.Helper()
	for _, line := range strings.Split(string(geisterFixture(t, "SHA256SUMS")), "\n") {
		if sum, n, ok := strings.Cut(line, "  "); ok && n == name {
			return []byte(sum + "  " + as + "\n")
		}
	}
	t.Fatalf("SHA256SUMS does not list %s", name)
	return nil
}

// runGeisterVerifyArgs runs "tbprobe geister verify ARGS...".
func runGeisterVerifyArgs(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), append([]string{"geister", "verify"}, args...), nil, &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestGeisterVerify checks each table state verify reports. Arbiters: the
// reference's SHA256SUMS shipped with the fixture and the shared tables
// (a table matching it is verified, a flipped byte is not), and the
// damage itself.
func TestGeisterVerify(t *testing.T) {
	raw, zst, sums := geisterFixture(t, gvRaw), geisterFixture(t, gvZst), geisterFixture(t, "SHA256SUMS")
	legacySums := sumsLine(t, gvRaw, gvLegacy)
	type verifyCase struct {
		name string
		// tables is a folder to verify; files, when tables is "",
		// the files of a fresh one.
		tables string
		files  map[string][]byte
		args   []string
		code   int
		out    []string // lines or parts stdout must hold
		// manifest reports whether a manifest must be beside the
		// table afterwards.
		manifest bool
	}
	cases := []verifyCase{
		{name: "shipped fixture", tables: testenv.Testdata(t, "geister"), code: 0,
			out: []string{"ok      " + gvZst + "\n", "1 tables checked: 1 verified, 0 not listed in any sums, 0 corrupt, 0 unreadable\n"}},
		{name: "raw with sums", files: map[string][]byte{gvRaw: raw, "SHA256SUMS": sums}, code: 0,
			out: []string{"ok      " + gvRaw + "\n", "1 verified"}},
		{name: "material named three ways", files: map[string][]byte{gvRaw: raw, "SHA256SUMS": sums}, args: []string{"pb1pr1ob1or1", "id000", "0"}, code: 0,
			out: []string{"1 tables checked: 1 verified"}},
		{name: "flipped raw", files: map[string][]byte{gvRaw: flipped(raw, 300_000), "SHA256SUMS": sums}, code: 1,
			out: []string{"CORRUPT ", gvRaw + ": sha256 differs", "0 verified, 0 not listed in any sums, 1 corrupt"}},
		{name: "flipped zst", files: map[string][]byte{gvZst: flipped(zst, 70_000), "SHA256SUMS": sums}, code: 1,
			out: []string{"CORRUPT ", gvZst, "1 corrupt"}},
		{name: "flipped raw, --manifest", files: map[string][]byte{gvRaw: flipped(raw, 300_000), "SHA256SUMS": sums}, args: []string{"--manifest"}, code: 1,
			out: []string{"CORRUPT ", "1 corrupt"}},
		{name: "not listed", files: map[string][]byte{gvRaw: raw}, code: 0,
			out: []string{"note    " + gvRaw + ": not listed in SHA256SUMS", "0 verified, 1 not listed in any sums, 0 corrupt"}},
		{name: "not listed, --manifest", files: map[string][]byte{gvRaw: raw}, args: []string{"--manifest"}, code: 0,
			out: []string{"note    " + gvRaw + ": not listed", "no manifest written", "1 not listed"}},
		{name: "legacy layout", files: map[string][]byte{gvLegacy: raw, "SHA256SUMS": legacySums}, code: 0,
			out: []string{"ok      " + gvLegacy + " (legacy layout)\n", "1 verified"}},
		{name: "legacy layout, --manifest", files: map[string][]byte{gvLegacy: raw, "SHA256SUMS": legacySums}, args: []string{"--manifest"}, code: 0,
			out: []string{"note    " + gvLegacy + ": legacy layout: no manifest written"}},
		{name: "damaged manifest", files: map[string][]byte{gvRaw: raw, "SHA256SUMS": sums, gvTbsum: []byte("not a manifest")}, code: 1,
			out: []string{"CORRUPT ", gvTbsum, "1 corrupt"}, manifest: true},
		{name: "damaged manifest, --manifest rewrites it", files: map[string][]byte{gvRaw: raw, "SHA256SUMS": sums, gvTbsum: []byte("not a manifest")}, args: []string{"--manifest"}, code: 0,
			out: []string{"ok      " + gvRaw + "\n", "wrote   ", "1 verified"}, manifest: true},
		{name: "--manifest", files: map[string][]byte{gvZst: zst, "SHA256SUMS": sums}, args: []string{"--manifest"}, code: 0,
			out: []string{"ok      " + gvZst + "\n", "wrote   ", "1 verified"}, manifest: true},
	}
	if testenv.HasShared(t, "geister", "tables") {
		cases = append(cases, verifyCase{name: "shared tables", tables: testenv.Shared(t, "geister", "tables"), code: 0,
			out: []string{"ok      id004_pb2pr1ob1or1_obsblk.bin.zst\n", "5 tables checked: 5 verified, 0 not listed in any sums, 0 corrupt, 0 unreadable\n"}})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := c.tables
			if dir == "" {
				dir = geisterDir(t, c.files)
			}
			code, stdout, stderr := runGeisterVerifyArgs(t, append([]string{"--tables", dir}, c.args...)...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, stdout, stderr)
			}
			for _, want := range c.out {
				if !strings.Contains(stdout, want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout)
				}
			}
			_, err := os.Stat(filepath.Join(dir, gvTbsum))
			if c.manifest != (err == nil) {
				t.Errorf("manifest beside the table: %v, want %v", err == nil, c.manifest)
			}
			if c.manifest && strings.Contains(stdout, "wrote   ") && !strings.Contains(stdout, "wrote   "+filepath.Join(dir, gvTbsum)+"\n") {
				t.Errorf("stdout does not name %s as written:\n%s", filepath.Join(dir, gvTbsum), stdout)
			}
		})
	}
}

// geisterOracleRow is one committed oracle row: its board, reference value
// and byte offset in the obsblk table.
type geisterOracleRow struct {
	board string
	value uint8
	rank  uint64
}

// geisterOracleRanks reads the committed id000 oracle rows with their
// obsblk_rank.
func geisterOracleRanks(t *testing.T) []geisterOracleRow {
	t.Helper()
	var rows []geisterOracleRow
	for _, row := range geisterOracleRows(t) {
		v, err1 := strconv.Atoi(row["value"])
		r, err2 := strconv.ParseUint(row["obsblk_rank"], 10, 64)
		if err := errors.Join(err1, err2); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, geisterOracleRow{row["board"], uint8(v), r})
	}
	if len(rows) == 0 {
		t.Fatal("no oracle rows")
	}
	return rows
}

// TestGeisterVerifyManifest writes manifests with verify --manifest,
// beside the table and through --manifest-dir, and checks the library
// takes them: with the manifest beside the table every committed oracle
// row answers its reference value, and once a byte of the table is
// flipped the rows in that 8 KiB chunk fail with ErrCorrupt while every
// other row still answers its reference value (without the manifest the
// whole table would be refused on open). Arbiters: the oracle's values and
// obsblk_rank columns, the reference's SHA256SUMS, and the damage.
func TestGeisterVerifyManifest(t *testing.T) {
	ctx := context.Background()
	rows := geisterOracleRanks(t)
	flipAt := tableRow(t, rows)
	raw, sums := geisterFixture(t, gvRaw), geisterFixture(t, "SHA256SUMS")
	for _, intoDir := range []bool{false, true} {
		t.Run(map[bool]string{false: "beside", true: "manifest-dir"}[intoDir], func(t *testing.T) {
			dir := geisterDir(t, map[string][]byte{gvRaw: raw, "SHA256SUMS": sums})
			args := []string{"--manifest", "--tables", dir}
			want := filepath.Join(dir, gvTbsum)
			if intoDir {
				mdir := filepath.Join(t.TempDir(), "manifests")
				args = append(args, "--manifest-dir", mdir)
				want = filepath.Join(mdir, gvTbsum)
			}
			code, stdout, stderr := runGeisterVerifyArgs(t, args...)
			if code != 0 || !strings.Contains(stdout, "wrote   "+want+"\n") {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			if intoDir {
				if _, err := os.Stat(filepath.Join(dir, gvTbsum)); err == nil {
					t.Fatal("--manifest-dir also wrote beside the table")
				}
				b, err := os.ReadFile(want)
				if err != nil {
					t.Fatal(err)
				}
				// Copied beside the table, as the help says.
				if err := os.WriteFile(filepath.Join(dir, gvTbsum), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			probeGeisterRows(t, ctx, dir, rows, -1)
			if err := os.WriteFile(filepath.Join(dir, gvRaw), flipped(raw, flipAt), 0o644); err != nil {
				t.Fatal(err)
			}
			probeGeisterRows(t, ctx, dir, rows, flipAt)
		})
	}
}

// tableRow returns the entry of the first row the tables answer, not the
// rules: where a flipped byte must be found.
func tableRow(t *testing.T, rows []geisterOracleRow) int {
	t.Helper()
	for _, r := range rows {
		p, err := geister.ParseBoard(r.board)
		if err != nil {
			t.Fatal(err)
		}
		if _, term := p.Terminal(); !term {
			return int(r.rank)
		}
	}
	t.Fatal("every oracle row is terminal")
	return -1
}

// probeGeisterRows probes every row in a fresh tablebase on dir (a
// --tables location): a non-terminal row in the 8 KiB chunk of flipAt
// (none when negative) must fail with ErrCorrupt, every other row give its
// oracle value.
func probeGeisterRows(t *testing.T, ctx context.Context, dir string, rows []geisterOracleRow, flipAt int) {
	t.Helper()
	tb, err := openGeister(ctx, []string{dir}, tables.ManifestDir{}, geister.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	failing := 0
	for _, r := range rows {
		p, err := geister.ParseBoard(r.board)
		if err != nil {
			t.Fatal(err)
		}
		_, term := p.Terminal()
		got, err := tb.DTW(ctx, p)
		if flipAt >= 0 && !term && int(r.rank)/8192 == flipAt/8192 {
			failing++
			if !errors.Is(err, geister.ErrCorrupt) {
				t.Fatalf("%s (entry %d, flipped %d): %d, %v; want ErrCorrupt", r.board, r.rank, flipAt, got, err)
			}
			continue
		}
		if err != nil || got != r.value {
			t.Fatalf("%s: %d, %v; oracle %d", r.board, got, err, r.value)
		}
	}
	if flipAt >= 0 && failing == 0 {
		t.Fatal("no row in the flipped chunk")
	}
}

// TestGeisterVerifyBuilt verifies a table the builder wrote against the
// builder's own sidecar (no SHA256SUMS): verify --manifest writes the
// manifest the builder wrote, and a flipped byte is corrupt.
func TestGeisterVerifyBuilt(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := runGeisterBuild(ctx, []string{"--material", "0", "--out", dir, "--quiet"}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("build exit %d: %s", code, stderr.String())
	}
	built, err := os.ReadFile(filepath.Join(dir, gvTbsum))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, gvTbsum)); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runGeisterVerifyArgs(t, "--manifest", "--tables", dir)
	if code != 0 || !strings.Contains(out, "1 tables checked: 1 verified") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	got, err := os.ReadFile(filepath.Join(dir, gvTbsum))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, built) {
		t.Error("verify --manifest wrote another manifest than the builder's")
	}
	// The flip goes into the file the tables serve (the .zst); the
	// manifest is set aside so the whole file is checked.
	os.Remove(filepath.Join(dir, gvTbsum))
	zst, err := os.ReadFile(filepath.Join(dir, gvZst))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, gvZst), flipped(zst, len(zst)/2), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runGeisterVerifyArgs(t, "--tables", dir)
	if code != 1 || !strings.Contains(out, "CORRUPT ") || !strings.Contains(out, gvZst) {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

// TestGeisterVerifyUsage: bad flags, materials and locations give a clear
// message and verify's exit status (2 usage, 1 nothing to verify).
func TestGeisterVerifyUsage(t *testing.T) {
	tables := geisterDir(t, map[string][]byte{gvRaw: geisterFixture(t, gvRaw), "SHA256SUMS": geisterFixture(t, "SHA256SUMS")})
	empty := t.TempDir()
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		args   []string
		code   int
		stderr string // part of standard error ("" for stdout's)
		stdout string
		never  string // what neither may show
	}{
		{name: "manifest-dir alone", args: []string{"--manifest-dir", empty}, code: 2, stderr: "--manifest-dir needs --manifest"},
		{name: "manifest of the built-in fixture", args: []string{"--manifest"}, code: 2, stderr: "the built-in fixture is not a local folder: give --tables or --manifest-dir"},
		{name: "manifest of a remote location", args: []string{"--manifest", "--tables", "https://user:s3cret@127.0.0.1:1/t"}, code: 2, stderr: "is not a local folder: give --manifest-dir", never: "s3cret"},
		{name: "bad material", args: []string{"pb9"}, code: 2, stderr: `"pb9" is not of the form pb1pr1ob1or1`},
		{name: "material id out of range", args: []string{"id256"}, code: 2, stderr: "outside 0..255"},
		{name: "material with no table", args: []string{"--tables", tables, "id001"}, code: 1, stderr: "no table for pb1pr1ob1or2 (id001)"},
		{name: "missing folder", args: []string{"--tables", filepath.Join(empty, "nope")}, code: 1, stderr: "no such file or directory"},
		{name: "folder without tables", args: []string{"--tables", empty}, code: 1, stderr: "no Geister tables in " + empty},
		{name: "unknown flag", args: []string{"--bogus"}, code: 2, stderr: "unknown flag: --bogus"},
		{name: "manifest-dir is a file", args: []string{"--manifest", "--manifest-dir", notDir, "--tables", tables}, code: 1, stdout: "FAILED  manifest of " + gvRaw},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runGeisterVerifyArgs(t, c.args...)
			if code != c.code || !strings.Contains(stderr, c.stderr) || !strings.Contains(stdout, c.stdout) {
				t.Fatalf("exit %d, want %d with %q / %q\nstdout:\n%s\nstderr:\n%s", code, c.code, c.stdout, c.stderr, stdout, stderr)
			}
			if c.never != "" && strings.Contains(stdout+stderr, c.never) {
				t.Errorf("output shows %q", c.never)
			}
		})
	}
}

// TestGeisterVerifyS3 is the remote case verify exists for: reference
// tables in a bucket with only their SHA256SUMS. verify --manifest needs
// --manifest-dir there; the manifest it writes, uploaded beside the table,
// is taken by a probe over the bucket (oracle values, then ErrCorrupt in
// the chunk of a flipped byte). Arbiters as TestGeisterVerifyManifest's.
func TestGeisterVerifyS3(t *testing.T) {
	ctx := context.Background()
	raw := geisterFixture(t, gvRaw)
	dir := geisterDir(t, map[string][]byte{gvRaw: raw, "SHA256SUMS": geisterFixture(t, "SHA256SUMS")})
	srv, url := s3test.ServeDir(t, dir)
	srv.Setenv(t)
	if code, _, stderr := runGeisterVerifyArgs(t, "--manifest", "--tables", url); code != 2 || !strings.Contains(stderr, "give --manifest-dir") {
		t.Fatalf("--manifest over s3 without --manifest-dir: exit %d: %s", code, stderr)
	}
	mdir := t.TempDir()
	code, stdout, stderr := runGeisterVerifyArgs(t, "--manifest", "--manifest-dir", mdir, "--tables", url)
	want := filepath.Join(mdir, gvTbsum)
	if code != 0 || !strings.Contains(stdout, "ok      "+gvRaw+"\n") || !strings.Contains(stdout, "wrote   "+want+"\n") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	b, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, gvTbsum), b, 0o644); err != nil {
		t.Fatal(err)
	}
	rows := geisterOracleRanks(t)
	probeGeisterRows(t, ctx, url, rows, -1)
	flipAt := tableRow(t, rows[len(rows)/2:])
	if err := os.WriteFile(filepath.Join(dir, gvRaw), flipped(raw, flipAt), 0o644); err != nil {
		t.Fatal(err)
	}
	probeGeisterRows(t, ctx, url, rows, flipAt)
}
