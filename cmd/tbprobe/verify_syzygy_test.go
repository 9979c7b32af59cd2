package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/format/chesstb"
	"github.com/tbfs/tbfs/format/syzygy"
	"github.com/tbfs/tbfs/internal/testkit/syzygyoracle"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// TestManifestSuffixShared: one naming scheme for both formats' manifests
// (the table's object name plus one suffix), so a folder's manifests are
// told from its tables the same way whatever their format.
func TestManifestSuffixShared(t *testing.T) {
	if syzygy.ManifestSuffix != chesstb.ManifestSuffix {
		t.Fatalf("Syzygy manifests end in %q, chesstb's in %q", syzygy.ManifestSuffix, chesstb.ManifestSuffix)
	}
}

// TestVerifySyzygyManifest: verify --manifest writes a manifest beside
// every Syzygy fixture file (their embedded checksums are tbcheck's, per
// testdata/syzygy/README.md) or into --manifest-dir, and none for a file
// whose checksum fails, which it names as corrupt (exit 1).
func TestVerifySyzygyManifest(t *testing.T) {
	dir := copySyzygy(t)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	res := runBin(t, "", nil, "verify", "--manifest", "--tables", dir)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	other := t.TempDir()
	if res := runBin(t, "", nil, "verify", "--manifest", "--manifest-dir", other, "--tables", dir); res.code != 0 {
		t.Fatalf("--manifest-dir: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	for _, e := range ents {
		for _, d := range []string{dir, other} {
			path := filepath.Join(d, e.Name()+syzygy.ManifestSuffix)
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s: %v", e.Name(), err)
			}
		}
		if !strings.Contains(res.stdout, "wrote   "+filepath.Join(dir, e.Name()+syzygy.ManifestSuffix)+"\n") {
			t.Errorf("no line for the manifest of %s:\n%s", e.Name(), res.stdout)
		}
	}
	damaged := copySyzygy(t)
	damage(t, filepath.Join(damaged, "KRvKR.rtbw"), 5000, 1)
	res = runBin(t, "", nil, "verify", "--manifest", "--tables", damaged)
	if res.code != 1 || !strings.Contains(res.stdout, "CORRUPT KRvKR.rtbw") {
		t.Errorf("exit %d, want 1 naming KRvKR.rtbw as corrupt:\n%s%s", res.code, res.stdout, res.stderr)
	}
	if _, err := os.Stat(filepath.Join(damaged, "KRvKR.rtbw"+syzygy.ManifestSuffix)); !os.IsNotExist(err) {
		t.Errorf("a manifest was written for a table that fails its checksum: %v", err)
	}
}

// TestProbeSyzygyManifests probes KNNvKP positions whose leading pawn is
// on the a- or h-file through a copy of the 13 MiB shared table damaged in
// its last data page (which belongs to the d-file sub-table, so no such
// probe reads it). With the manifests (--manifests) the probe checks only
// what it reads and answers Fathom's value; without them the whole-file
// checksum fails and the probe is refused. Arbiters: Fathom's rows; the
// embedded checksum.
func TestProbeSyzygyManifests(t *testing.T) {
	if !testenv.HasShared(t, "syzygy") {
		t.Skip("../shared/syzygy absent")
	}
	tables := testenv.Shared(t, "syzygy", "tables")
	sums := t.TempDir()
	if res := runBin(t, "", nil, "verify", "--manifest", "--manifest-dir", sums, "--tables", tables, "KNNvKP"); res.code != 0 {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	dir := t.TempDir()
	copyFile(t, filepath.Join(tables, "KNNvKP.rtbw"), filepath.Join(dir, "KNNvKP.rtbw"))
	info, err := os.Stat(filepath.Join(dir, "KNNvKP.rtbw"))
	if err != nil {
		t.Fatal(err)
	}
	damage(t, filepath.Join(dir, "KNNvKP.rtbw"), int(info.Size())-200, 1)
	rows := syzygyoracle.EdgePawnKNNvKP(t, syzygyoracle.Read(t, testenv.Shared(t, "syzygy", "oracle", "probe.tsv")))
	if len(rows) == 0 {
		t.Fatal("no KNNvKP rows with an a- or h-file pawn")
	}
	rows = rows[:min(len(rows), 10)]
	var in strings.Builder
	for _, r := range rows {
		in.WriteString(r.FEN + "\n")
	}
	base := []string{"--json", "--tables", dir, "--tables", tables}
	res := runBin(t, in.String(), nil, append(base, "--manifests", sums)...)
	lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
	if res.code != 0 || len(lines) != len(rows) {
		t.Fatalf("with manifests: exit %d, %d answers for %d rows\n%s%s", res.code, len(lines), len(rows), res.stdout, res.stderr)
	}
	for i, r := range rows {
		var a struct{ WDL *int }
		if err := json.Unmarshal([]byte(lines[i]), &a); err != nil {
			t.Fatal(err)
		}
		if a.WDL == nil || *a.WDL != r.WDL {
			t.Errorf("%s: %s; Fathom's WDL %d", r.FEN, lines[i], r.WDL)
		}
	}
	if res := runBin(t, in.String(), nil, base...); res.code == 0 || !strings.Contains(res.stdout+res.stderr, "checksum mismatch") {
		t.Errorf("without manifests: exit %d, want a failure naming the checksum\n%s%s", res.code, res.stdout, res.stderr)
	}
}

// TestSyzygyKindFolders: Syzygy files kept in wdl/ and dtz/ folders, where
// the reader also looks for them, are listed by ls and checked by verify
// like files at the root: every fixture file passes its embedded checksum
// (tbcheck's, per testdata/syzygy/README.md), and one flipped byte is
// CORRUPT with exit 1. verify used to report "0 tables verified" and exit 0
// over such a location.
func TestSyzygyKindFolders(t *testing.T) {
	flat := copySyzygy(t)
	ents, err := os.ReadDir(flat)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var names []string
	for _, e := range ents {
		kind, _, ok := syzygy.ParseTableName(e.Name())
		if !ok {
			continue
		}
		name := kind.String() + "/" + e.Name()
		if err := os.MkdirAll(filepath.Join(dir, kind.String()), 0o755); err != nil {
			t.Fatal(err)
		}
		copyFile(t, filepath.Join(flat, e.Name()), filepath.Join(dir, name))
		names = append(names, name)
	}
	if len(names) == 0 {
		t.Fatal("no Syzygy fixture files")
	}
	res := runBin(t, "", nil, "ls", "--tables", dir)
	for _, name := range names {
		if res.code != 0 || !strings.Contains(res.stdout, " "+name+"\n") {
			t.Errorf("ls does not list %s (exit %d):\n%s%s", name, res.code, res.stdout, res.stderr)
		}
	}
	res = runBin(t, "", nil, "verify", "--tables", dir)
	if res.code != 0 || !strings.Contains(res.stdout, strconv.Itoa(len(names))+" tables verified, 0 corrupt") {
		t.Fatalf("verify: exit %d, want %d tables verified:\n%s%s", res.code, len(names), res.stdout, res.stderr)
	}
	info, err := os.Stat(filepath.Join(dir, names[0]))
	if err != nil {
		t.Fatal(err)
	}
	damage(t, filepath.Join(dir, names[0]), int(info.Size())/2, 1)
	res = runBin(t, "", nil, "verify", "--tables", dir)
	if res.code != 1 || !strings.Contains(res.stdout, "CORRUPT "+names[0]) {
		t.Errorf("exit %d, want 1 naming %s as corrupt:\n%s%s", res.code, names[0], res.stdout, res.stderr)
	}
}

// TestInfoSyzygyIntegrity: info says how a Syzygy table's reads are checked,
// so a manifest that is present but refused is visible (the table still
// answers, through the whole-file gate). Arbiter: the layout the test
// builds — no manifest, a manifest verify wrote for this file, and the
// manifest of another file put in its place.
func TestInfoSyzygyIntegrity(t *testing.T) {
	dir := copySyzygy(t)
	wholeFile := "reads of KRvKR.rtbw: whole-file checksum before the first answer"
	for _, tc := range []struct {
		name  string
		setup func()
		want  []string
	}{
		{"no manifest", func() {}, []string{wholeFile + " (no manifest used: no KRvKR.rtbw.tbsum)"}},
		{"manifest", func() {
			if res := runBin(t, "", nil, "verify", "--manifest", "--tables", dir, "KRvKR"); res.code != 0 {
				t.Fatalf("verify: exit %d\n%s%s", res.code, res.stdout, res.stderr)
			}
		}, []string{"reads of KRvKR.rtbw: each page checked against the manifest KRvKR.rtbw.tbsum"}},
		{"another file's manifest", func() {
			if res := runBin(t, "", nil, "verify", "--manifest", "--tables", dir, "KQvK"); res.code != 0 {
				t.Fatalf("verify: exit %d\n%s%s", res.code, res.stdout, res.stderr)
			}
			copyFile(t, filepath.Join(dir, "KQvK.rtbw"+syzygy.ManifestSuffix), filepath.Join(dir, "KRvKR.rtbw"+syzygy.ManifestSuffix))
		}, []string{wholeFile + " (no manifest used: KRvKR.rtbw.tbsum was written for a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.setup()
			res := runBin(t, "", nil, "info", "--tables", dir, "KRvKR")
			if res.code != 0 {
				t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(res.stdout, w) {
					t.Errorf("info does not say %q:\n%s", w, res.stdout)
				}
			}
		})
	}
}
