package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// The front end only parses flags; package dataset's tests cover the
// labels. These rows check the wiring: generate with the built-in
// fixtures writes an artifact that verify passes (exit 0), a changed
// shard fails verify (exit 1, the file named), and usage errors exit 2.
func TestDatasetCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ds")
	var out, errb bytes.Buffer
	args := []string{"dataset", "generate", "--count", "12", "--seed", "3", "--materials", "KRK,KQKR", "--clock-range", "0-99", "--shard-rows", "5", "--out", dir}
	if code := run(context.Background(), args, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("generate: exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "12 rows") {
		t.Errorf("generate printed %q", out.String())
	}
	manifest := filepath.Join(dir, "manifest.json")
	out.Reset()
	if code := run(context.Background(), []string{"dataset", "verify", manifest}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("verify: exit %d: %s%s", code, out.String(), errb.String())
	}
	sample := testenv.Testdata(t, "dataset", "sample", "manifest.json")
	if code := run(context.Background(), []string{"dataset", "verify", sample}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("verify the sample: exit %d: %s%s", code, out.String(), errb.String())
	}
	shard := filepath.Join(dir, "rows-00001.jsonl")
	data, err := os.ReadFile(shard)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(shard, append(data, data...), 0o644)
	out.Reset()
	if code := run(context.Background(), []string{"dataset", "verify", manifest}, strings.NewReader(""), &out, &errb); code != 1 || !strings.Contains(out.String(), "rows-00001.jsonl") {
		t.Errorf("verify a changed shard: exit %d, printed %q", code, out.String())
	}
	for _, a := range [][]string{
		{"dataset", "generate"},
		{"dataset", "generate", "--out", dir + "x", "--clock-range", "a-b"},
		{"dataset", "verify"},
		{"dataset", "verify", manifest, "extra"},
	} {
		if code := run(context.Background(), a, strings.NewReader(""), &out, &errb); code != 2 {
			t.Errorf("%q: exit %d, want 2", a, code)
		}
	}
}
