package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/format/syzygy"
	"github.com/tbfs/tbfs/internal/syzygyoracle"
	"github.com/tbfs/tbfs/internal/testenv"
	"github.com/tbfs/tbfs/source/mmap"
)

// TestManifestsFlag: with --manifests naming a folder of manifests kept
// apart from the tables, a Syzygy table damaged in a page the probes never
// read answers Fathom's values through the mount, page by page; without the
// flag the table waits for its whole-file checksum, which fails, and the
// reads fail too. Arbiters: Fathom's oracle (KNNvKP rows with an a- or
// h-file pawn at clock 0, whose pages lie away from the damage near the
// file's end) and the embedded checksum.
func TestManifestsFlag(t *testing.T) {
	if !testenv.HasShared(t, "syzygy") {
		t.Skip("../shared/syzygy absent")
	}
	tables := testenv.Shared(t, "syzygy", "tables")
	ctx := context.Background()

	// The manifest is made from the intact shared file, as verify does.
	src, err := mmap.New(tables)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	tb, err := syzygy.Open(syzygy.Options{}, src)
	if err != nil {
		t.Fatal(err)
	}
	name, sum, err := tb.Manifest(ctx, syzygy.KindWDL, "KNNvKP")
	tb.Close()
	if err != nil {
		t.Fatal(err)
	}
	sums := t.TempDir()
	if err := os.WriteFile(filepath.Join(sums, name+syzygy.ManifestSuffix), sum, 0o644); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join(tables, "KNNvKP.rtbw"))
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-200] ^= 0xff
	if err := os.WriteFile(filepath.Join(dir, "KNNvKP.rtbw"), data, 0o644); err != nil {
		t.Fatal(err)
	}

	rows := syzygyoracle.EdgePawnKNNvKP(t, syzygyoracle.Read(t, testenv.Shared(t, "syzygy", "oracle", "probe.tsv")))
	if len(rows) == 0 {
		t.Fatal("no KNNvKP rows with an a- or h-file pawn")
	}
	rows = rows[:min(len(rows), 5)]

	mnt, _ := startMount(t, nil, "--tables", dir, "--tables", tables, "--manifests", sums)
	for _, r := range rows {
		got, err := os.ReadFile(filepath.Join(mnt, "wdl", strings.ReplaceAll(r.FEN, " ", "_")))
		if want := strconv.Itoa(syzygyoracle.TableClass(r.SignedDTZ())) + "\n"; err != nil || string(got) != want {
			t.Errorf("with --manifests: %s: %q, %v; want Fathom's %q", r.FEN, got, err, want)
		}
	}

	mnt, _ = startMount(t, nil, "--tables", dir, "--tables", tables)
	if got, err := os.ReadFile(filepath.Join(mnt, "wdl", strings.ReplaceAll(rows[0].FEN, " ", "_"))); err == nil {
		t.Errorf("without --manifests: %s read %q from a table whose checksum fails", rows[0].FEN, got)
	}
}
