package chesstb

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestManifest: a manifest written from intact tables lets every probe
// through unchanged (the intact answer is the arbiter), and a damaged,
// stale or missing manifest is an error naming the table, never ignored.
func TestManifest(t *testing.T) {
	dir := copyFixtures(t)
	ctx := context.Background()
	pos := mustFEN(t, fenKQKR)
	want, err := openDirs(t, Options{}, dir).DTZ(ctx, &pos)
	if err != nil {
		t.Fatal(err)
	}
	b, err := openDirs(t, Options{NoManifests: true}, dir).Manifest(ctx, KindDTZ, "KQKR")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "dtz", "KQKR.lzdtz"+ManifestSuffix)
	write := func(b []byte) {
		t.Helper()
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(b)
	if got, err := openDirs(t, Options{}, dir).DTZ(ctx, &pos); err != nil || got != want {
		t.Fatalf("with the manifest: %d, %v; want %d", got, err, want)
	}
	for _, tc := range []struct {
		name  string
		bytes []byte
		want  string
	}{
		{"damaged", append(append([]byte(nil), b[:40]...), append([]byte{b[40] ^ 1}, b[41:]...)...), "manifest itself is damaged"},
		{"truncated", b[:len(b)-9], "manifest"},
		{"stale", func() []byte {
			m, err := decodeManifest(b)
			if err != nil {
				t.Fatal(err)
			}
			m.size += 64
			return m.encode()
		}(), "written for a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			write(tc.bytes)
			_, err := openDirs(t, Options{}, dir).DTZ(ctx, &pos)
			checkFileError(t, err, "dtz/KQKR.lzdtz", tc.want)
			if !errors.Is(err, errBlockHash) {
				t.Errorf("%v is not a manifest error", err)
			}
		})
	}
	// Required but absent.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	_, err = openDirs(t, Options{RequireManifest: true}, dir).DTZ(ctx, &pos)
	if err == nil || !strings.Contains(err.Error(), "no manifest") {
		t.Errorf("a required manifest's absence gives %v", err)
	}
}
