package geister

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	seekable "github.com/SaveTheRbtz/zstd-seekable-format-go/pkg"
	"github.com/klauspost/compress/zstd"

	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// seekableZstd compresses raw as seekable zstd with another writer than
// the reference's, cutting frames of the given sizes in turn (so frame
// sizes vary and the reader's non-uniform path is used).
func seekableZstd(t *testing.T, raw []byte, sizes ...int) []byte {
	t.Helper()
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	var out bytes.Buffer
	w, err := seekable.NewWriter(&out, enc)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; len(raw) > 0; i++ {
		n := min(sizes[i%len(sizes)], len(raw))
		if _, err := w.Write(raw[:n]); err != nil {
			t.Fatal(err)
		}
		raw = raw[n:]
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// legacyID000 reorders the reference's id000 obsblk table into the legacy
// layout: entry LegacyRank(p) gets the value stored for p (LegacyRank is
// checked against the oracle's legacy_rank column).
func legacyID000(t *testing.T) []byte {
	t.Helper()
	m := Material{1, 1, 1, 1}
	raw, err := os.ReadFile(testenv.Testdata(t, "geister", m.FileName()))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]byte, m.LegacyEntries())
	for idx := range m.Entries() {
		p, err := Unrank(m, idx)
		if err != nil {
			t.Fatal(err)
		}
		_, j, err := LegacyRank(p)
		if err != nil {
			t.Fatal(err)
		}
		out[j] = raw[idx]
	}
	return out
}

// TestOtherFileForms reads id000 from files the reference did not write
// (the legacy layout, raw and compressed; obsblk compressed with frames of
// varying size by another seekable-zstd writer) and checks the committed
// oracle rows through each.
func TestOtherFileForms(t *testing.T) {
	m := Material{1, 1, 1, 1}
	raw, err := os.ReadFile(testenv.Testdata(t, "geister", m.FileName()))
	if err != nil {
		t.Fatal(err)
	}
	legacy := legacyID000(t)
	legacyName := "id000_pb1pr1ob1or1.bin"
	dirWith := func(files map[string][]byte) string {
		dir := t.TempDir()
		for name, b := range files {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	tbs := map[string]*Tablebase{
		"legacy raw":           openDir(t, dirWith(map[string][]byte{legacyName: legacy}), Options{}),
		"legacy zstd":          openDir(t, dirWith(map[string][]byte{legacyName + ".zst": seekableZstd(t, legacy, 8192)}), Options{}),
		"obsblk varied frames": openDir(t, dirWith(map[string][]byte{m.FileName() + ".zstd": seekableZstd(t, raw, 5000, 777, 12000)}), Options{CacheBytes: 1}),
	}
	rows := readTSV(t, testenv.Testdata(t, "geister", "values_id000.tsv"))
	checkValues(t, tbs, rows)
	checkMoves(t, tbs, readTSV(t, testenv.Testdata(t, "geister", "moves_id000.tsv")))
	for form, tb := range tbs {
		for _, r := range rows[:200] {
			p, _ := ParseBoard(r["board"])
			o := Observation{OwnBlue: p.OwnBlue, OwnRed: p.OwnRed, Opp: p.Opp(), OppRed: 1}
			_, _, cs, err := tb.ColouringValues(context.Background(), o)
			if err != nil || cs[r.uint(t, "inner")].Value != uint8(r.int(t, "value")) {
				t.Fatalf("%s: colourings of %s: %v", form, p, err)
			}
		}
	}

	// The preference: obsblk over legacy, compressed over raw.
	both := openDir(t, dirWith(map[string][]byte{legacyName + ".zst": seekableZstd(t, legacy, 8192), m.FileName(): raw}), Options{})
	if name, err := both.TableName(context.Background(), m); err != nil || name != m.FileName() {
		t.Errorf("with a legacy .zst and an obsblk .bin, read %q (%v)", name, err)
	}
	// A file whose id does not match its counts is ignored.
	wrong := openDir(t, dirWith(map[string][]byte{"id001_pb1pr1ob1or1_obsblk.bin": raw}), Options{})
	if ok, err := wrong.Has(context.Background(), m); ok || err != nil {
		t.Errorf("a file named with the wrong id was used: %v %v", ok, err)
	}
}
