package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/cmd/internal/tables"
	"github.com/tbfs/tbfs/format/chesstb"
	"github.com/tbfs/tbfs/format/geister"
	"github.com/tbfs/tbfs/internal/testkit/chesstboracle"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/source"
	srchttp "github.com/tbfs/tbfs/source/http"
	"github.com/tbfs/tbfs/source/http/mirrortest"
	"github.com/tbfs/tbfs/source/listcache"
)

// geisterRaw is the Geister fixture's raw table; the mirror holds its
// seekable-zstd form beside it, which is the one the reader opens.
const geisterRaw = "id000_pb1pr1ob1or1_obsblk.bin"

// publishFixture builds a mirror folder of every format: the chesstb
// fixtures in their kind folders, the Syzygy fixtures at the root, the
// Geister fixture table (raw and compressed) with its SHA256SUMS, and the
// fixtures' README as a file that is no table.
func publishFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	copyTree := func(from, to string, keep func(name string) bool) {
		err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(from, p)
			if keep(filepath.ToSlash(rel)) {
				copyFile(t, p, filepath.Join(to, rel))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	copyTree(testenv.Testdata(t, "chesstb"), dir, func(n string) bool {
		return strings.HasPrefix(n, "wdl/") || strings.HasPrefix(n, "dtz/") || strings.HasPrefix(n, "dtm/") || n == "README.md"
	})
	copyTree(testenv.Testdata(t, "syzygy"), dir, func(n string) bool { return strings.Contains(n, ".rtb") })
	copyTree(testenv.Testdata(t, "geister"), dir, func(n string) bool { return n == geister.SumsFile || strings.HasPrefix(n, geisterRaw) })
	return dir
}

// fileState is what a run may change of a file.
type fileState struct {
	size int64
	mod  time.Time
	sum  [32]byte
}

// snapshot records every file under dir.
func snapshot(t *testing.T, dir string) map[string]fileState {
	t.Helper()
	out := map[string]fileState{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = fileState{fi.Size(), fi.ModTime(), sha256.Sum256(b)}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// readListing parses dir's MANIFEST into name -> size.
func readListing(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, srchttp.DefaultManifest))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	entries, err := srchttp.ParseManifest(f)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, e := range entries {
		out[e.Name] = e.Size
	}
	return out
}

// wantListing is the listing a folder must get: every file in it but the
// listing itself and the files left out (the arbiter is the file system).
func wantListing(t *testing.T, dir string, leftOut ...string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for name, st := range snapshot(t, dir) {
		out[name] = st.size
	}
	delete(out, srchttp.DefaultManifest)
	for _, n := range leftOut {
		delete(out, n)
	}
	return out
}

func sameListing(t *testing.T, got, want map[string]int64) {
	t.Helper()
	for n, s := range want {
		if g, ok := got[n]; !ok || g != s {
			t.Errorf("listing: %s has size %d (listed %v), want %d", n, g, ok, s)
		}
	}
	for n := range got {
		if _, ok := want[n]; !ok {
			t.Errorf("listing names %s, which it must not", n)
		}
	}
}

// verifyManifests writes, with verify --manifest and geister verify
// --manifest, the manifests of dir's tables into a folder of their own:
// what publish must have written beside them.
func verifyManifests(t *testing.T, dir string) string {
	t.Helper()
	out := t.TempDir()
	if res := runBin(t, "", nil, "verify", "--manifest", "--manifest-dir", out, "--tables", dir); res.code != 0 {
		t.Fatalf("verify --manifest: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if res := runBin(t, "", nil, "geister", "verify", "--manifest", "--manifest-dir", out, "--tables", dir); res.code != 0 {
		t.Fatalf("geister verify --manifest: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	return out
}

// sameManifests checks every manifest of want is in dir, byte for byte.
func sameManifests(t *testing.T, dir, want string) {
	t.Helper()
	n := 0
	err := filepath.WalkDir(want, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(want, p)
		w, _ := os.ReadFile(p)
		got, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil || !bytes.Equal(got, w) {
			t.Errorf("%s: publish wrote %d bytes (%v), verify --manifest %d", rel, len(got), err, len(w))
		}
		n++
		return nil
	})
	if err != nil || n == 0 {
		t.Fatalf("%d manifests from verify (%v)", n, err)
	}
}

// TestPublish: publish writes every table's manifest (the bytes verify
// --manifest writes) and a listing of exactly the folder's files (the
// arbiter is the file system, less the raw Geister table the reader never
// opens beside its .zst); a second run writes nothing and says so; a
// changed table gets a fresh manifest, a removed one leaves the listing;
// a damaged table of each format is refused, named, left out with its
// manifest, and the exit status is 1.
func TestPublish(t *testing.T) {
	dir := publishFixture(t)
	res := runBin(t, "", nil, "publish", dir)
	if res.code != 0 || strings.Contains(res.stdout, "REFUSED") {
		t.Fatalf("publish: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if !strings.Contains(res.stdout, "note    "+geisterRaw+": probes never read") {
		t.Errorf("no note on the raw Geister table beside its .zst:\n%s", res.stdout)
	}
	sameManifests(t, dir, verifyManifests(t, dir))
	sameListing(t, readListing(t, dir), wantListing(t, dir, geisterRaw))

	before := snapshot(t, dir)
	res = runBin(t, "", nil, "publish", dir)
	if res.code != 0 || !strings.Contains(res.stdout, "nothing changed") || strings.Contains(res.stdout, "wrote ") {
		t.Errorf("second publish: exit %d, want 0, nothing written and said so:\n%s%s", res.code, res.stdout, res.stderr)
	}
	after := snapshot(t, dir)
	for n, st := range before {
		if after[n] != st {
			t.Errorf("second publish touched %s", n)
		}
	}
	if len(after) != len(before) {
		t.Errorf("second publish left %d files, there were %d", len(after), len(before))
	}

	removed := false
	t.Run("changed and removed", func(t *testing.T) {
		if !testenv.HasShared(t, "chesstb", "full") {
			t.Skip("the other version of a table comes from ../shared")
		}
		copyFile(t, filepath.Join(testenv.Shared(t, "chesstb", "full"), "wdl", "KQK.lzw"), filepath.Join(dir, "wdl", "KQK.lzw"))
		if err := os.Remove(filepath.Join(dir, "KNvK.rtbz")); err != nil {
			t.Fatal(err)
		}
		removed = true
		res := runBin(t, "", nil, "publish", dir)
		if res.code != 0 {
			t.Fatalf("publish: exit %d\n%s%s", res.code, res.stdout, res.stderr)
		}
		if n := strings.Count(res.stdout, "wrote "); n != 2 ||
			!strings.Contains(res.stdout, "wrote   "+filepath.Join(dir, "wdl", "KQK.lzw"+chesstb.ManifestSuffix)) ||
			!strings.Contains(res.stdout, "wrote   "+filepath.Join(dir, srchttp.DefaultManifest)) {
			t.Errorf("want the changed table's manifest and the listing written, nothing else:\n%s", res.stdout)
		}
		sameManifests(t, dir, verifyManifests(t, dir))
		sameListing(t, readListing(t, dir), wantListing(t, dir, geisterRaw, "KNvK.rtbz"+chesstb.ManifestSuffix))
	})

	t.Run("damaged", func(t *testing.T) {
		damage(t, filepath.Join(dir, "dtz", "KRK.lzdtz"), dataOffset(t, dir, "KRK", "DTZ")+8, 1)
		damage(t, filepath.Join(dir, "KRvK.rtbw"), 200, 1)
		sums := filepath.Join(dir, geister.SumsFile)
		b, err := os.ReadFile(sums)
		if err != nil {
			t.Fatal(err)
		}
		// The raw table's sum, which the .zst's decoded frames must have.
		wrong := regexp.MustCompile(`(?m)^[0-9a-f]{64}(  `+regexp.QuoteMeta(geisterRaw)+`)$`).ReplaceAll(b, []byte(strings.Repeat("0", 64)+"$1"))
		if err := os.WriteFile(sums, wrong, 0o644); err != nil {
			t.Fatal(err)
		}
		res := runBin(t, "", nil, "publish", dir)
		if res.code != 1 {
			t.Errorf("publish of damaged tables: exit %d, want 1", res.code)
		}
		refused := []string{"dtz/KRK.lzdtz", "KRvK.rtbw", geisterRaw + ".zst"}
		for _, n := range refused {
			if !regexp.MustCompile(`(?m)^(CORRUPT|FAILED)  ?.*` + regexp.QuoteMeta(n)).MatchString(res.stdout) {
				t.Errorf("no line naming %s as corrupt:\n%s", n, res.stdout)
			}
			if !strings.Contains(res.stdout, "REFUSED "+n+":") {
				t.Errorf("%s not refused:\n%s", n, res.stdout)
			}
		}
		leftOut := []string{geisterRaw, geisterRaw + ".zst", geisterRaw + geister.ManifestSuffix}
		for _, n := range refused[:2] {
			leftOut = append(leftOut, n, n+chesstb.ManifestSuffix)
		}
		if removed {
			leftOut = append(leftOut, "KNvK.rtbz"+chesstb.ManifestSuffix)
		}
		sameListing(t, readListing(t, dir), wantListing(t, dir, leftOut...))
	})
}

// TestPublishServed: a published folder served as plain files over HTTP
// answers the reference's values (oracle rows of the fixtures' materials)
// from one listing, with no lookup of a table the listing leaves out.
func TestPublishServed(t *testing.T) {
	dir := publishFixture(t)
	if res := runBin(t, "", nil, "publish", dir); res.code != 0 {
		t.Fatalf("publish: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	url, slow := mirrortest.ServeSlow(t, dir, 0)
	rows := chesstboracle.Read(t, testenv.Testdata(t, "chesstb", "oracle", "probe.tsv"))
	ctx := context.Background()
	ts := probeListedMirror(t, ctx, url, rows, 7, 20)
	sent := slow.Counts().Total()
	if _, err := ts.set[0].Open(ctx, "dtc/KQK.lzdtc"); !errors.Is(err, source.ErrNotFound) {
		t.Errorf("open of a table the listing leaves out: %v, want not found", err)
	}
	if c := slow.Counts().Total(); c != sent {
		t.Errorf("a table the listing leaves out cost %d requests, want none", c-sent)
	}
}

// TestPublishUsage: publish needs one local folder.
func TestPublishUsage(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{nil, 2, "give exactly one DIR"},
		{[]string{"a", "b"}, 2, "give exactly one DIR"},
		{[]string{filepath.Join(t.TempDir(), "missing")}, 1, "no such file"},
		{[]string{file}, 1, "is not a folder"},
		{[]string{"s3://bucket/tables"}, 1, "is not a local folder"},
	} {
		res := runBin(t, "", nil, append([]string{"publish"}, c.args...)...)
		if res.code != c.code || !strings.Contains(res.stderr, c.stderr) {
			t.Errorf("publish %q: exit %d, stderr %q; want %d and %q", c.args, res.code, res.stderr, c.code, c.stderr)
		}
	}
}

// probeListedMirror opens url as the flags' defaults do (a listing trusted
// for a while) and probes every step-th oracle row of the shipped form:
// each must give the reference's WDL, DTZ and DTM, at least atLeast rows
// must be probed, and the whole run must cost one listing and no failed
// request. The tables stay open for the caller.
func probeListedMirror(t *testing.T, ctx context.Context, url string, rows []chesstboracle.Row, step, atLeast int) *tableSet {
	t.Helper()
	tf := tableFlags{tables: []string{url}, cacheSize: 64 << 20, metadataTTL: tables.MetadataTTL(listcache.DefaultTTL)}
	ts, err := tf.open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ts.Close() })
	n := 0
	for i, r := range rows {
		if !r.HasForm("shipped") || i%step != 0 {
			continue
		}
		pos, err := chess.ParseFEN(r.FEN)
		if err != nil {
			t.Fatal(err)
		}
		wdl, dtz, dtm := r.Want(t)
		got, err := ts.tb.Probe(ctx, &pos)
		if err != nil || got.WDL != wdl || dtz != nil && (!got.HasDTZ || got.DTZ != *dtz) || dtm != nil && (!got.HasDTM || got.DTM != *dtm) {
			t.Errorf("%s: %+v, %v; want wdl %d dtz %v dtm %v", r.Where, got, err, wdl, dtz, dtm)
		}
		n++
	}
	if n < atLeast {
		t.Fatalf("only %d oracle rows", n)
	}
	if st := ts.Stats(); st.Lists != 1 || st.Errors != 0 {
		t.Errorf("%+v: want one listing and no failed request", st)
	}
	return ts
}
