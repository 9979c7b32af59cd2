package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/tbfs/tbfs/format/geister"
	"github.com/tbfs/tbfs/format/syzygy"
	"github.com/tbfs/tbfs/internal/testkit/syzygyoracle"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
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

// TestGeisterManifestsFlag: the --geister tables take --manifests too. A
// byte of the committed id000 table is flipped (its shipped SHA256SUMS
// beside it); with --manifests naming a folder holding its frame manifest
// (written, as verify writes it, from the intact table after it matched
// those sums) a board in another chunk answers the reference's value and
// only a board in the flipped chunk fails (EIO); without the flag every
// board waits for the whole-file sha256, which fails. Arbiters:
// values_id000.tsv and the shipped SHA256SUMS.
func TestGeisterManifestsFlag(t *testing.T) {
	ctx := context.Background()
	fixture := testenv.Testdata(t, "geister")
	src, err := mmap.New(fixture)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	gtb, err := geister.Open(geister.Options{}, src)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := geister.MaterialByID(0)
	mf, err := gtb.Manifest(ctx, m)
	gtb.Close()
	if err != nil {
		t.Fatal(err)
	}
	manifests := t.TempDir()
	if err := os.WriteFile(filepath.Join(manifests, m.FileName()+geister.ManifestSuffix), mf, 0o644); err != nil {
		t.Fatal(err)
	}

	// Two oracle boards the table answers (not terminal), in different
	// 8 KiB chunks: values_id000.tsv's pos_id 1 and 4, with their value
	// and obsblk_rank. The flip goes into the first one's entry.
	boards := []struct {
		board string
		value int
		rank  int
	}{
		{"...r../....../..B.../.R..../....../b.....", 2, 97690},
		{"....../B..r../....R./....../b...../......", 3, 507472},
	}
	raw, err := os.ReadFile(filepath.Join(fixture, m.FileName()))
	if err != nil {
		t.Fatal(err)
	}
	raw[boards[0].rank] ^= 0x10
	sums, err := os.ReadFile(filepath.Join(fixture, geister.SumsFile))
	if err != nil {
		t.Fatal(err)
	}
	tables := t.TempDir()
	for name, b := range map[string][]byte{m.FileName(): raw, geister.SumsFile: sums} {
		if err := os.WriteFile(filepath.Join(tables, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	for _, c := range []struct {
		name string
		args []string
		ok   []bool // per board: answers the oracle's value, else an error
	}{
		{"with --manifests", []string{"--manifests", manifests}, []bool{false, true}},
		{"without", nil, []bool{false, false}},
	} {
		t.Run(c.name, func(t *testing.T) {
			mnt, p := startMount(t, nil, append([]string{"--tables", testenv.Testdata(t, "chesstb"), "--geister", tables}, c.args...)...)
			for i, b := range boards {
				data, err := os.ReadFile(filepath.Join(mnt, "geister", b.board+".json"))
				if !c.ok[i] {
					// A corrupt table is EIO, never a value.
					if !errors.Is(err, syscall.EIO) {
						t.Errorf("%s (entry %d, flipped): %s, %v; want EIO", b.board, b.rank, data, err)
					}
					continue
				}
				var d struct{ Value *int }
				if err != nil || json.Unmarshal(data, &d) != nil || d.Value == nil || *d.Value != b.value {
					t.Errorf("%s (entry %d): %s, %v; want value %d\n%s", b.board, b.rank, data, err, b.value, p.Stderr)
				}
			}
		})
	}
}
