package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// copyTables copies the fixture tables into a temporary directory, where a
// test may damage them.
func copyTables(t *testing.T) string {
	t.Helper()
	src := testenv.Testdata(t, "chesstb")
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// damage overwrites n bytes of a file at off with 0xFF.
func damage(t *testing.T, path string, off, n int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := off; i < off+n; i++ {
		b[i] = 0xFF
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// dataOffset asks tbprobe info where a table's White frame data starts.
func dataOffset(t *testing.T, dir, material, kind string) int {
	t.Helper()
	res := runBin(t, "", nil, "info", "--tables", dir, material)
	re := regexp.MustCompile(`(?m)^  ` + kind + `\s.*\n\s+white to move: stored, (\d+) blocks .* compressed bytes at (\d+)`)
	m := re.FindStringSubmatch(res.stdout)
	if m == nil {
		t.Fatalf("no white frame data offset for %s %s in:\n%s", material, kind, res.stdout)
	}
	off, _ := strconv.Atoi(m[2])
	return off
}

// fixtureTables are the table files of the committed fixtures, as ls and
// verify name them, read from the fixture directories themselves (the
// arbiter of what the binary embeds): chesstb's wdl/, dtz/ and dtm/ files
// by their path, the packs/ files and Syzygy's by their name (each folder
// is a table root of its own).
func fixtureTables(t *testing.T) (chesstb, syzygy []string) {
	t.Helper()
	root := testenv.Testdata(t, "chesstb")
	for _, dir := range []string{"wdl", "dtz", "dtm", "packs"} {
		ents, err := os.ReadDir(filepath.Join(root, dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "K") {
				name := dir + "/" + e.Name()
				if dir == "packs" {
					name = e.Name()
				}
				chesstb = append(chesstb, name)
			}
		}
	}
	ents, err := os.ReadDir(testenv.Testdata(t, "syzygy"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".rtbw") || strings.HasSuffix(e.Name(), ".rtbz") {
			syzygy = append(syzygy, e.Name())
		}
	}
	if len(chesstb) == 0 || len(syzygy) == 0 {
		t.Fatalf("fixtures: %d chesstb and %d Syzygy table files", len(chesstb), len(syzygy))
	}
	return chesstb, syzygy
}

// TestVerifyFixtures: the committed fixtures (the reference generators'
// own output: chesstb's, and Syzygy's whose embedded checksums tbcheck
// passed, ../shared/syzygy/README.md) verify clean, built-in (every
// chesstb and Syzygy fixture file, each Syzygy file by its checksum) and
// from the chesstb directories (the chesstb files alone).
func TestVerifyFixtures(t *testing.T) {
	chesstb, syzygy := fixtureTables(t)
	for _, c := range []struct {
		args   []string
		tables int
		syzygy []string
	}{
		{[]string{"verify"}, len(chesstb) + len(syzygy), syzygy},
		{[]string{"verify", "--tables", testenv.Testdata(t, "chesstb"), "--tables", testenv.Testdata(t, "chesstb", "packs")}, len(chesstb), nil},
	} {
		res := runBin(t, "", nil, c.args...)
		if res.code != 0 {
			t.Errorf("%q: exit %d\n%s%s", c.args, res.code, res.stdout, res.stderr)
		}
		if want := strconv.Itoa(c.tables) + " tables verified, 0 corrupt blocks or files, 0 unreadable"; !strings.Contains(res.stdout, want) {
			t.Errorf("%q: summary %q missing:\n%s", c.args, want, res.stdout)
		}
		for _, name := range c.syzygy {
			if !strings.Contains(res.stdout, "ok      "+name+" (Syzygy checksum)\n") {
				t.Errorf("%q: no passed checksum for %s:\n%s", c.args, name, res.stdout)
			}
		}
		if n := strings.Count(res.stdout, "(Syzygy checksum)"); n != len(c.syzygy) {
			t.Errorf("%q: %d Syzygy checksums, want %d", c.args, n, len(c.syzygy))
		}
	}
}

// TestVerifyShared verifies every shipped table of the shared set.
func TestVerifyShared(t *testing.T) {
	if !sharedPresent(t) || testing.Short() {
		t.Skip("shared tables absent or -short")
	}
	res := runBin(t, "", nil, "verify", "--tables", testenv.Shared(t, "chesstb", "shipped"))
	if res.code != 0 || !strings.Contains(res.stdout, " 0 corrupt blocks or files, 0 unreadable") {
		t.Errorf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}

// TestVerifyFindsDamage damages copies of the fixtures and checks that
// verify exits 1 naming each damaged block (and the checksum failure), and
// names no undamaged table.
func TestVerifyFindsDamage(t *testing.T) {
	tests := []struct {
		name, file, material, kind string
		at                         func(data int) int // offset to damage
		wantBlock                  *regexp.Regexp
	}{
		{"WDL first block", "wdl/KQKR.lzw", "KQKR", "WDL", func(d int) int { return d + 8 },
			regexp.MustCompile(`CORRUPT wdl/KQKR\.lzw white-to-move frame block 0: .*LZ4`)},
		{"DTZ first block", "dtz/KQKR.lzdtz", "KQKR", "DTZ", func(d int) int { return d + 8 },
			regexp.MustCompile(`CORRUPT dtz/KQKR\.lzdtz white-to-move frame block 0: .*LZMA`)},
		{"WDL later block", "wdl/KQKR.lzw", "KQKR", "WDL", func(d int) int { return d + 6000 },
			regexp.MustCompile(`CORRUPT wdl/KQKR\.lzw white-to-move frame block ([1-9]\d*): `)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyTables(t)
			damage(t, filepath.Join(dir, tt.file), tt.at(dataOffset(t, dir, tt.material, tt.kind)), 8)
			res := runBin(t, "", nil, "verify", "--tables", dir, "--tables", filepath.Join(dir, "packs"))
			if res.code != 1 {
				t.Errorf("exit %d, want 1", res.code)
			}
			if !tt.wantBlock.MatchString(res.stdout) {
				t.Errorf("no line matching %v:\n%s", tt.wantBlock, res.stdout)
			}
			if !strings.Contains(res.stdout, "CORRUPT "+tt.file+": chesstb: corrupt table: checksum") {
				t.Errorf("checksum failure of %s not reported:\n%s", tt.file, res.stdout)
			}
			for _, l := range strings.Split(res.stdout, "\n") {
				if strings.HasPrefix(l, "CORRUPT") && !strings.HasPrefix(l, "CORRUPT "+tt.file) {
					t.Errorf("an undamaged table is reported: %s", l)
				}
			}
			// Eight damaged bytes lie in one block, or straddle two.
			if n := strings.Count(res.stdout, "\nCORRUPT "+tt.file+" white-to-move frame block"); n < 1 || n > 2 {
				t.Errorf("%d blocks reported, want the one or two damaged:\n%s", n, res.stdout)
			}
		})
	}
	t.Run("truncated", func(t *testing.T) {
		dir := copyTables(t)
		p := filepath.Join(dir, "dtm", "KRK.lzdtm")
		if err := os.Truncate(p, 100); err != nil {
			t.Fatal(err)
		}
		res := runBin(t, "", nil, "verify", "--tables", dir)
		if res.code != 1 || !strings.Contains(res.stdout, "FAILED  dtm/KRK.lzdtm: ") {
			t.Errorf("exit %d:\n%s", res.code, res.stdout)
		}
	})
}

// TestLsAndInfo checks ls against the fixture directories themselves
// (every chesstb and Syzygy table file listed once, the Syzygy ones as
// such) and info's header facts against the files' sizes.
func TestLsAndInfo(t *testing.T) {
	root := testenv.Testdata(t, "chesstb")
	res := runBin(t, "", nil, "ls")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	chesstb, syzygy := fixtureTables(t)
	want := map[string]bool{}
	for _, name := range chesstb {
		want[name] = false
	}
	for _, name := range syzygy {
		want[name] = true
	}
	lines := strings.Split(strings.TrimSpace(res.stdout), "\n")[1:]
	if len(lines) != len(want) {
		t.Errorf("%d tables listed, the fixtures hold %d:\n%s", len(lines), len(want), res.stdout)
	}
	seen := map[string]bool{}
	for _, l := range lines {
		f := strings.Fields(l)
		name := f[len(f)-1]
		isSyzygy, ok := want[name]
		switch {
		case !ok:
			t.Errorf("listed %q, not a fixture table", name)
		case seen[name]:
			t.Errorf("listed %q twice", name)
		case isSyzygy != slices.Contains(f, "syzygy"):
			t.Errorf("%q: listed as %q; a Syzygy file: %v", name, l, isSyzygy)
		}
		seen[name] = true
	}
	res = runBin(t, "", nil, "info", "KQvKR")
	fi, err := os.Stat(filepath.Join(root, "dtz", "KQKR.lzdtz"))
	if err != nil {
		t.Fatal(err)
	}
	if res.code != 0 || !strings.Contains(res.stdout, "dtz/KQKR.lzdtz") || !strings.Contains(res.stdout, "("+strconv.FormatInt(fi.Size(), 10)+" bytes)") {
		t.Errorf("info KQvKR: exit %d\n%s", res.code, res.stdout)
	}
	if !strings.Contains(res.stdout, "DTC    no table") {
		t.Errorf("info should say KQKR has no DTC table here:\n%s", res.stdout)
	}
	// The Syzygy files of a material, named with their size and location.
	res = runBin(t, "", nil, "info", "KRvKR")
	for _, name := range []string{"KRvKR.rtbw", "KRvKR.rtbz"} {
		fi, err := os.Stat(testenv.Testdata(t, "syzygy", name))
		if err != nil {
			t.Fatal(err)
		}
		want := regexp.MustCompile(regexp.QuoteMeta(name) + `, \S+ \(` + strconv.FormatInt(fi.Size(), 10) + ` bytes\), Syzygy \(in embedded:testdata/syzygy\)`)
		if res.code != 0 || !want.MatchString(res.stdout) {
			t.Errorf("info KRvKR: exit %d, no %s of %d bytes:\n%s", res.code, name, fi.Size(), res.stdout)
		}
	}
	res = runBin(t, "", nil, "info", "KQQKQ")
	if res.code != 1 || !strings.Contains(res.stderr, "no table for KQQKQ") {
		t.Errorf("info of an absent material: exit %d, %s", res.code, res.stderr)
	}
}

// TestLsPlugins: with an empty plugin directory, ls --plugins says so and
// succeeds; a plugin directory that does not exist is an error naming it.
func TestLsPlugins(t *testing.T) {
	dir := t.TempDir()
	res := runBin(t, "", []string{"TBFS_PLUGIN_DIR="}, "ls", "--plugins", "--plugin-dir", dir)
	if res.code != 0 || !strings.Contains(res.stdout, "no plugins in "+dir) {
		t.Errorf("empty dir: exit %d, %q %q", res.code, res.stdout, res.stderr)
	}
	missing := filepath.Join(dir, "absent")
	res = runBin(t, "", []string{"TBFS_PLUGIN_DIR="}, "ls", "--plugins", "--plugin-dir", missing)
	if res.code == 0 || !strings.Contains(res.stderr, "absent") {
		t.Errorf("missing dir: exit %d, %q %q", res.code, res.stdout, res.stderr)
	}
	// --plugin-sha256 wants NAME and 64 hex digits.
	res = runBin(t, "", []string{"TBFS_PLUGIN_DIR="}, "ls", "--plugins", "--plugin-dir", dir, "--plugin-sha256", "ftp=abcd")
	if res.code != 2 || !strings.Contains(res.stderr, "64 hex digits") {
		t.Errorf("bad --plugin-sha256: exit %d, %q %q", res.code, res.stdout, res.stderr)
	}
	// A URL of a scheme no transport serves names the plugin to install.
	res = runBin(t, "8/8/8/5k2/8/8/1Q6/K7 w - - 0 1\n", []string{"TBFS_PLUGIN_DIR="}, "--tables", "ftp://127.0.0.1:1/")
	if res.code == 0 || !strings.Contains(res.stderr, "tbfs-source-ftp") || !strings.Contains(res.stderr, "--plugin-dir") {
		t.Errorf("ftp:// without the plugin: exit %d, %q", res.code, res.stderr)
	}
}

// TestVerifyInfoTotals: on the generator's full output, which ships its
// .info side files, every recounted WDL total equals the generator's own
// (the arbiter: the .info files, written by the generator as it saved each
// table). The materials cover singular frames (KBK), a symmetric material
// (KBKB), pawns on both sides (KPKP, KRKP) and tables with skipped blocks
// (KBNK, KQPK); format/chesstb recounts all 35 tables.
func TestVerifyInfoTotals(t *testing.T) {
	full := testenv.Shared(t, "chesstb", "full")
	res := runBin(t, "", nil, "verify", "--tables", full, "KBK", "KBKB", "KPKP", "KRKP", "KBNK", "KQPK")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if !strings.Contains(res.stdout, "6 .info files compared with a recount, 0 totals differ") {
		t.Errorf("recount summary missing:\n%s", res.stdout)
	}
}

// TestVerifyInfoMismatch: a copy of a table whose .info file has one count
// changed is reported, naming the file, colour and class, with exit 1; so is
// an .info file of the wrong size.
func TestVerifyInfoMismatch(t *testing.T) {
	full := testenv.Shared(t, "chesstb", "full")
	for _, tc := range []struct {
		name   string
		doctor func([]byte) []byte
		want   string
	}{
		{"black draw count plus one", func(b []byte) []byte {
			b[40]++ // Black's draw count, low byte (little-endian u64 at 32+8)
			return b
		}, "MISMATCH info/dtz/KRKP.info black-to-move draw: info says "},
		{"white illegal count minus one", func(b []byte) []byte {
			b[48]-- // White's illegal count, low byte
			return b
		}, "MISMATCH info/dtz/KRKP.info white-to-move illegal: info says "},
		{"truncated", func(b []byte) []byte { return b[:100] }, "MISMATCH info/dtz/KRKP.info: 100 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			copyFile(t, filepath.Join(full, "wdl", "KRKP.lzw"), filepath.Join(dir, "wdl", "KRKP.lzw"))
			info, err := os.ReadFile(filepath.Join(full, "info", "dtz", "KRKP.info"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(dir, "info", "dtz"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "info", "dtz", "KRKP.info"), tc.doctor(info), 0o644); err != nil {
				t.Fatal(err)
			}
			res := runBin(t, "", nil, "verify", "--tables", dir)
			if res.code != 1 {
				t.Errorf("exit %d, want 1\n%s%s", res.code, res.stdout, res.stderr)
			}
			if !strings.Contains(res.stdout, tc.want) {
				t.Errorf("no line containing %q in:\n%s", tc.want, res.stdout)
			}
			if n := strings.Count(res.stdout, "MISMATCH"); n != 1 {
				t.Errorf("%d MISMATCH lines, want 1:\n%s", n, res.stdout)
			}
		})
	}
}

// copyFile copies one file, creating the destination's folder.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestVerifyManifest writes manifests for the fixtures, then damages a
// block: verify (and so every reader) names the block as differing from
// its manifest before decoding it.
func TestVerifyManifest(t *testing.T) {
	dir := copyTables(t)
	res := runBin(t, "", nil, "verify", "--manifest", "--tables", dir, "--tables", filepath.Join(dir, "packs"))
	if res.code != 0 || !strings.Contains(res.stdout, "wrote   "+filepath.Join(dir, "dtz", "KQKR.lzdtz.tbsum")) {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	damage(t, filepath.Join(dir, "dtz", "KQKR.lzdtz"), dataOffset(t, dir, "KQKR", "DTZ")+8, 1)
	res = runBin(t, "", nil, "verify", "--tables", dir, "--tables", filepath.Join(dir, "packs"), "KQKR")
	want := regexp.MustCompile(`CORRUPT dtz/KQKR\.lzdtz white-to-move frame block 0: .*differs from the integrity manifest`)
	if res.code != 1 || !want.MatchString(res.stdout) {
		t.Errorf("exit %d, want 1 and a line matching %v:\n%s%s", res.code, want, res.stdout, res.stderr)
	}
	// Manifests kept elsewhere are found through --manifests; embedded
	// tables have no folder to write beside.
	other := t.TempDir()
	res = runBin(t, "", nil, "verify", "--manifest", "--manifest-dir", other, "KQK")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if _, err := os.Stat(filepath.Join(other, "wdl", "KQK.lzw.tbsum")); err != nil {
		t.Fatal(err)
	}
	res = runBin(t, "", nil, "verify", "--manifest", "KQK")
	if res.code != 1 || !strings.Contains(res.stdout, "give --manifest-dir") {
		t.Errorf("exit %d, want 1 asking for --manifest-dir:\n%s%s", res.code, res.stdout, res.stderr)
	}
}
