package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// TestGeisterBuildCLI builds the total-4 table with the CLI, checks the raw
// file against the reference's sha256 (SHA256SUMS), probes every committed
// oracle board in the built tables (the reference oracle's values are the
// arbiter), and checks that a second run skips the finished material.
func TestGeisterBuildCLI(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := runGeisterBuild(ctx, []string{"--upto-total", "4", "--out", dir}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	// Standard error is no terminal here: one line per finished step,
	// at 100%, and no carriage return (issue 20: a log is not a terminal).
	if !strings.Contains(stderr.String(), "id000 layers") || !strings.Contains(stderr.String(), "100%") || strings.ContainsRune(stderr.String(), '\r') {
		t.Errorf("no progress line in %q", stderr.String())
	}
	sums, err := os.ReadFile(testenv.Testdata(t, "geister", "build", "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "id000_pb1pr1ob1or1_obsblk.bin"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(raw)
	if line := hex.EncodeToString(sum[:]) + "  id000_pb1pr1ob1or1_obsblk.bin"; !strings.Contains(string(sums), line) {
		t.Errorf("built id000 has sha256 %x, not the reference's", sum)
	}

	boards, values := geisterOracle(t)
	stdout.Reset()
	stderr.Reset()
	code := runGeister(ctx, []string{"--json", "--tables", dir}, strings.NewReader(strings.Join(boards, "\n")+"\n"), &stdout, &stderr)
	if code != 0 {
		t.Fatalf("probe exit %d: %s", code, stderr.String())
	}
	dec := json.NewDecoder(&stdout)
	for i := range boards {
		var ans geisterJSON
		if err := dec.Decode(&ans); err != nil {
			t.Fatalf("answer %d: %v", i, err)
		}
		if ans.Value == nil || int(*ans.Value) != values[i] {
			t.Errorf("%s: %+v, oracle value %d", boards[i], ans, values[i])
		}
	}

	stdout.Reset()
	stderr.Reset()
	if code := runGeisterBuild(ctx, []string{"--upto-total=4", "--out", dir, "--quiet"}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("second run exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "skipped") {
		t.Errorf("second run did not skip: %s", stderr.String())
	}
}

func TestGeisterBuildCLIErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--upto-total", "4"}, "--out is required"},
		{[]string{"--upto-total", "3", "--out", dir}, "4..16"},
		{[]string{"--out", dir}, "4..16"},
		{[]string{"--material", "256", "--out", dir}, "outside 0..255"},
		{[]string{"--material", "x", "--out", dir}, "not a material id"},
		{[]string{"--material", "1", "--upto-total", "5", "--out", dir}, "not both"},
		{[]string{"--upto-total", "5", "--out", dir, "--mem", "lots"}, "not a size"},
		{[]string{"--upto-total", "5", "--out", dir, "--mem", "1M"}, "more memory than allowed"},
		{[]string{"--upto-total", "4", "--out", dir, "extra"}, "unexpected argument"},
	} {
		var stdout, stderr bytes.Buffer
		code := runGeisterBuild(context.Background(), tc.args, nil, &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr.String(), tc.want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("refused builds left %d files", len(entries))
	}
}
