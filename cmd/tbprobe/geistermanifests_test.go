package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	geistertb "github.com/tbfs/tbfs/format/geister"
	"github.com/tbfs/tbfs/geister"
	"github.com/tbfs/tbfs/render"
	"github.com/tbfs/tbfs/source/s3/s3test"
)

// TestGeisterManifestsFlag is --manifests for Geister tables in a
// read-only location: the committed id000 fixture with only its shipped
// SHA256SUMS in a bucket. "geister verify --manifest --manifest-dir D"
// writes the manifest into D; "tbprobe geister --manifests D" then takes
// it from there: every oracle row answers its reference value, and after a
// byte of the table is flipped only the rows of the chunk it falls in fail
// (with the manifest's chunk error), where without the manifest every row
// fails the whole-file sha256. A manifest in the folder for another
// version of the table is refused; a folder without the table's manifest
// falls back to the whole-file check. Arbiters: the shipped SHA256SUMS
// and values_id000.tsv (the reference's values), and the damage.
func TestGeisterManifestsFlag(t *testing.T) {
	ctx := context.Background()
	raw := geisterFixture(t, gvRaw)
	bucket := geisterDir(t, map[string][]byte{gvRaw: raw, "SHA256SUMS": geisterFixture(t, "SHA256SUMS")})
	srv, url := s3test.ServeDir(t, bucket)
	srv.Setenv(t)
	rows := geisterOracleRanks(t)
	flipAt := tableRow(t, rows[len(rows)/2:])
	bad := flipped(raw, flipAt)

	writeManifest := func(tables string) string {
		t.Helper()
		dir := t.TempDir()
		code, stdout, stderr := runGeisterVerifyArgs(t, "--manifest", "--manifest-dir", dir, "--tables", tables)
		if code != 0 || !strings.Contains(stdout, "wrote   "+filepath.Join(dir, gvTbsum)+"\n") {
			t.Fatalf("verify --manifest --manifest-dir: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		return dir
	}
	good := writeManifest(url)
	if _, err := os.Stat(filepath.Join(bucket, gvTbsum)); err == nil {
		t.Fatal("verify --manifest-dir wrote into the bucket")
	}
	// Another version of the table: the flipped bytes, listed by their
	// own sha256, so verify writes a manifest for them.
	sum := sha256.Sum256(bad)
	other := writeManifest(geisterDir(t, map[string][]byte{gvRaw: bad, "SHA256SUMS": []byte(hex.EncodeToString(sum[:]) + "  " + gvRaw + "\n")}))
	empty := t.TempDir()

	for _, c := range []struct {
		name      string
		table     []byte
		manifests string // --manifests; "" for none
		// fail says which non-terminal rows must fail: none, all, or
		// chunk (those in flipAt's 8 KiB chunk); with errPart in the
		// error.
		fail, errPart string
	}{
		{"manifests folder", raw, good, "none", ""},
		{"manifests folder, flipped byte", bad, good, "chunk", "its manifest says"},
		{"no flag", raw, "", "none", ""},
		{"no flag, flipped byte", bad, "", "all", "sha256 differs"},
		{"folder without the manifest", raw, empty, "none", ""},
		{"folder without the manifest, flipped byte", bad, empty, "all", "sha256 differs"},
		{"another version's manifest", raw, other, "all", geistertb.ManifestSuffix + " gives the table a sha256 its sums do not"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := os.WriteFile(filepath.Join(bucket, gvRaw), c.table, 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"--json", "--tables", url}
			if c.manifests != "" {
				args = append(args, "--manifests", c.manifests)
			}
			var in strings.Builder
			for _, r := range rows {
				in.WriteString(r.board + "\n")
			}
			var stdout, stderr bytes.Buffer
			code := runGeister(ctx, args, strings.NewReader(in.String()), &stdout, &stderr)
			if want := map[bool]int{true: 0, false: 1}[c.fail == "none"]; code != want {
				t.Fatalf("exit %d, want %d: %s", code, want, stderr.String())
			}
			checkManifestAnswers(t, stdout.Bytes(), rows, c.fail, c.errPart, flipAt)
		})
	}

	// verify (without --manifest) checks the manifest --manifests names.
	if err := os.WriteFile(filepath.Join(bucket, gvRaw), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		manifests string
		code      int
		out       string
	}{
		{good, 0, "1 verified"},
		{other, 1, "CORRUPT "},
	} {
		code, stdout, stderr := runGeisterVerifyArgs(t, "--tables", url, "--manifests", c.manifests)
		if code != c.code || !strings.Contains(stdout, c.out) {
			t.Errorf("verify --manifests %s: exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", c.manifests, code, c.code, c.out, stdout, stderr)
		}
	}
}

// checkManifestAnswers reads one JSON answer per row, in order: a
// non-terminal row fail names (all, or chunk: those in flipAt's 8 KiB
// chunk) must be an error holding errPart, every other row the oracle's
// value.
func checkManifestAnswers(t *testing.T, out []byte, rows []geisterOracleRow, fail, errPart string, flipAt int) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(out))
	failing, i := 0, 0
	for ; sc.Scan(); i++ {
		if i >= len(rows) {
			t.Fatalf("more answers than the %d boards", len(rows))
		}
		var ans render.GeisterReport
		if err := json.Unmarshal(sc.Bytes(), &ans); err != nil {
			t.Fatal(err)
		}
		r := rows[i]
		p, err := geister.ParseBoard(r.board)
		if err != nil {
			t.Fatal(err)
		}
		_, term := p.Terminal()
		if !term && (fail == "all" || fail == "chunk" && int(r.rank)/8192 == flipAt/8192) {
			failing++
			if ans.Error == "" || !strings.Contains(ans.Error, errPart) {
				t.Fatalf("%s (entry %d): %s; want an error with %q", r.board, r.rank, sc.Bytes(), errPart)
			}
			continue
		}
		if ans.Error != "" || ans.Value == nil || *ans.Value != r.value {
			t.Fatalf("%s (entry %d): %s; oracle %d", r.board, r.rank, sc.Bytes(), r.value)
		}
	}
	if i != len(rows) {
		t.Fatalf("%d answers for %d boards", i, len(rows))
	}
	if (fail != "none") != (failing > 0) || fail == "chunk" && failing > len(rows)/10 {
		t.Fatalf("%d of %d rows in the damage's reach for %q", failing, len(rows), fail)
	}
}
