package dataset_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/dataset"
)

// FuzzVerifyShard: a shard of any bytes, sealed by a correct manifest,
// never panics or stops the verifier, and passes only when every line is
// a row that replays exactly (here: only an unchanged sample shard).
func FuzzVerifyShard(f *testing.F) {
	src := sampleDir(f)
	data, err := os.ReadFile(filepath.Join(src, "rows-00002.jsonl"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte("{}\n"))
	f.Add([]byte(strings.Replace(string(data), `"row":40`, `"row":-1`, 1)))
	l := fixtureLabeler(f)
	f.Fuzz(func(t *testing.T, shard []byte) {
		dir := t.TempDir()
		sum := sha256.Sum256(shard)
		m := dataset.Manifest{Schema: dataset.SchemaVersion, TBFS: "fuzz", Tables: []dataset.TableFile{},
			Files: []dataset.FileEntry{{Name: "rows-00000.jsonl", Bytes: int64(len(shard)), SHA256: hex.EncodeToString(sum[:]), Rows: strings.Count(string(shard), "\n")}}}
		mb, _ := json.Marshal(&m)
		os.WriteFile(filepath.Join(dir, dataset.ManifestName), mb, 0o644)
		os.WriteFile(filepath.Join(dir, "rows-00000.jsonl"), shard, 0o644)
		rep := verify(t, l, dir)
		if rep.OK() && len(shard) > 0 {
			// Only rows numbered from 0 can pass; the sample's last shard
			// starts at 40, so nothing the fuzzer makes from it may pass
			// unless it is a real row 0 that replays.
			var r dataset.Row
			if err := json.Unmarshal([]byte(strings.SplitN(string(shard), "\n", 2)[0]), &r); err != nil || r.Row != 0 {
				t.Fatalf("passed: %q", shard)
			}
		}
	})
}
