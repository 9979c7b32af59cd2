package dataset_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/tbfs/tbfs/dataset"
	"github.com/tbfs/tbfs/format/chesstb"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/fssource"
	"github.com/tbfs/tbfs/source/mmap"
	"github.com/tbfs/tbfs/testdata"
)

// testVersion stamps rows made by the tests.
const testVersion = "test"

// fixtureLabeler labels from the embedded fixture tables, searched as
// tbprobe searches them with no --tables.
func fixtureLabeler(t testing.TB) *dataset.Labeler {
	t.Helper()
	var srcs []source.Source
	for _, dir := range testdata.ChessTBRoots {
		sub, err := testdata.ChessTBRoot(dir)
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, fssource.New(sub, "embedded:testdata/"+dir))
	}
	return labeler(t, srcs)
}

// dirLabeler labels from the table folder dir.
func dirLabeler(t testing.TB, dir string) *dataset.Labeler {
	t.Helper()
	src, err := mmap.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	return labeler(t, []source.Source{src})
}

func labeler(t testing.TB, srcs []source.Source) *dataset.Labeler {
	t.Helper()
	tb, err := chesstb.Open(chesstb.Options{}, srcs...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		tb.Close()
		for _, s := range srcs {
			s.Close()
		}
	})
	return dataset.NewLabeler(dataset.Tables{TB: tb, Sources: srcs}, testVersion)
}

// sampleDir is the shipped sample artifact.
func sampleDir(t testing.TB) string {
	t.Helper()
	return testenv.Testdata(t, "dataset", "sample")
}

// readRows reads every row of the artifact in dir, in order.
func readRows(t testing.TB, dir string) []dataset.Row {
	t.Helper()
	m := readManifest(t, dir)
	var rows []dataset.Row
	for _, f := range m.Files {
		data, err := os.ReadFile(filepath.Join(dir, f.Name))
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		for dec.More() {
			var r dataset.Row
			if err := dec.Decode(&r); err != nil {
				t.Fatalf("%s: %v", f.Name, err)
			}
			rows = append(rows, r)
		}
	}
	return rows
}

func readManifest(t testing.TB, dir string) dataset.Manifest {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, dataset.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	var m dataset.Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// copyDir copies the flat directory src into a new temporary one.
func copyDir(t testing.TB, src string) string {
	t.Helper()
	dst := t.TempDir()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// reseal rewrites the manifest's sizes and hashes (and nothing else) to
// match the files as they now are, as a forger would, so that the checks
// behind the hashes are the ones tested.
func reseal(t testing.TB, dir string) {
	t.Helper()
	m := readManifest(t, dir)
	for i, f := range m.Files {
		data, err := os.ReadFile(filepath.Join(dir, f.Name))
		if err != nil {
			continue
		}
		sum := sha256.Sum256(data)
		m.Files[i].Bytes, m.Files[i].SHA256 = int64(len(data)), hex.EncodeToString(sum[:])
	}
	data, err := json.MarshalIndent(&m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, dataset.ManifestName), append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// verify runs Verify on the artifact in dir with the fixture tables.
func verify(t testing.TB, l *dataset.Labeler, dir string) *dataset.VerifyReport {
	t.Helper()
	rep, err := dataset.Verify(context.Background(), l, filepath.Join(dir, dataset.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	return rep
}
