package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tbfs/tbfs/cmd/internal/cli"
	"github.com/tbfs/tbfs/cmd/internal/progress"
	"github.com/tbfs/tbfs/cmd/internal/tables"
	"github.com/tbfs/tbfs/format/chesstb"
	"github.com/tbfs/tbfs/format/syzygy"
	"github.com/tbfs/tbfs/source"
)

// verifyLong is verify's help text.
const verifyLong = `Decodes every block of every table (or of the named materials' tables),
checks each decoded cell against its header and each file's XXH64
checksum, and names every corrupt block; each Syzygy file (.rtbw, .rtbz)
has the checksum its generator embeds recomputed (as its tbcheck does).
Where a folder ships the
generator's info/dtz/MATERIAL.info files, each WDL table is recounted
and its per-colour win/draw/lose/illegal totals compared with them. A
progress bar is drawn on a terminal; otherwise one line per table. Exit
status 1 on any corruption.

With --manifest, each table that verifies gets a block integrity manifest
(KIND/MATERIAL.EXT` + chesstb.ManifestSuffix + `, beside it or in --manifest-dir); a probe
then checks every block it reads against it, so a damaged block is an
error, never a value. Each Syzygy file whose embedded checksum verifies
gets one too (MATERIAL.rtbw` + syzygy.ManifestSuffix + `): a hash per 64 KiB page and the
generator's chunk hashes, which the reader checks against the file's
embedded checksum; with it a probe checks only the pages it reads instead
of the whole file before its first answer (the difference between a few
requests and gigabytes from a remote table). Probes find manifests beside
the tables or in --manifests.`

// newVerifyCmd is "tbprobe verify": decode every block of every table,
// check every file's checksum, and report each corrupt block by file,
// frame and block number. It exits 1 when anything is corrupt or unreadable.
func newVerifyCmd() *cobra.Command {
	var tf tableFlags
	var writeManifests bool
	var manifestDir string
	cmd := &cobra.Command{
		Use:   "verify [flags] [MATERIAL...]",
		Short: "Decode every block of every table and recount the .info totals",
		Long:  verifyLong,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cli.Exit(runVerify(cmd.Context(), &tf, writeManifests, manifestDir, args, cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
	fs := cmd.Flags()
	tf.register(fs)
	fs.BoolVar(&writeManifests, "manifest", false, "write an integrity manifest for every table that verifies (chesstb: one hash per block; Syzygy: one per 64 KiB page, bound to the embedded checksum), beside it (local tables) or in --manifest-dir; probes check what they read against it")
	fs.StringVar(&manifestDir, "manifest-dir", "", "with --manifest: write the manifests into this directory (as the table's name plus "+chesstb.ManifestSuffix+", e.g. wdl/KQK.lzwdl"+chesstb.ManifestSuffix+" or KQvK.rtbw"+syzygy.ManifestSuffix+") instead of beside the tables")
	return cmd
}

// runVerify verifies the tables and returns the exit status.
func runVerify(ctx context.Context, tf *tableFlags, writeManifests bool, manifestDir string, materials []string, stdout, stderr io.Writer) int {
	// A manifest is written from the table alone, so a stale one must
	// not stand in the way.
	tf.noManifests = writeManifests
	want := map[string]bool{}
	for _, m := range materials {
		want[strings.Replace(strings.ToUpper(m), "V", "", 1)] = true
	}
	ts, err := tf.open(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "tbprobe verify: %v\n", err)
		return 1
	}
	defer ts.Close()
	tables, err := findTables(ctx, ts)
	if err != nil {
		fmt.Fprintf(stderr, "tbprobe verify: %v\n", err)
		return 1
	}
	syz, err := findSyzygyTables(ctx, ts)
	if err != nil {
		fmt.Fprintf(stderr, "tbprobe verify: %v\n", err)
		return 1
	}
	if len(want) > 0 {
		// Keep every kind of each named material, not just the first.
		kept := tables[:0]
		found := map[string]bool{}
		for _, e := range tables {
			if want[e.material] {
				kept = append(kept, e)
				found[e.material] = true
			}
		}
		tables = kept
		keptSyz := syz[:0]
		for _, e := range syz {
			if m := chesstbSpelling(e.material); want[m] {
				keptSyz = append(keptSyz, e)
				found[m] = true
			}
		}
		syz = keptSyz
		for m := range want {
			if !found[m] {
				fmt.Fprintf(stderr, "tbprobe verify: no table for %s\n", m)
				return 1
			}
		}
	}
	var sv *manifestSaver
	if writeManifests {
		sv = &manifestSaver{
			ready: func(loc string) error {
				_, err := manifestFolder(loc, manifestDir)
				return err
			},
			save: func(loc, name string, b []byte) (string, error) {
				path, err := saveManifest(loc, name, manifestDir, b)
				return "wrote   " + path, err
			},
		}
	}
	tot := checkChessTables(ctx, ts, tables, syz, sv, stdout, stderr)
	fmt.Fprintf(stdout, "%d tables verified, %d corrupt blocks or files, %d unreadable\n", len(tables)+len(syz), tot.bad, tot.failed)
	if tot.recounted > 0 || tot.mismatches > 0 {
		fmt.Fprintf(stdout, "%d .info files compared with a recount, %d totals differ\n", tot.recounted, tot.mismatches)
	}
	if tot.bad > 0 || tot.failed > 0 || tot.mismatches > 0 || ctx.Err() != nil {
		return 1
	}
	return 0
}

// manifestSaver is where a check puts the integrity manifests of the
// tables that verify.
type manifestSaver struct {
	// ready says whether manifests of tables in location loc can be
	// stored, before one is computed.
	ready func(loc string) error
	// save stores manifest b, called name (the table's object name plus
	// its suffix), of a table in location loc, and returns the line to
	// print for it ("wrote   PATH").
	save func(loc, name string, b []byte) (string, error)
}

// checkedTable is what checking one table found.
type checkedTable struct {
	name, src string
	// ok: the table verified (and its manifest, when one was asked for,
	// was stored as manifest).
	ok       bool
	manifest string
	// forms are every file name that stands for the same table (a
	// Geister table's raw and compressed forms), name among them; nil
	// for name alone.
	forms []string
}

// checkTotals are a check's counts, verify's summary lines.
type checkTotals struct {
	bad, failed, recounted, mismatches int
	tables                             []checkedTable
}

// checkChessTables checks every chesstb table (its blocks, its checksum
// and, for WDL, the generator's .info totals) and every Syzygy file (its
// embedded checksum), printing a line for each table that is corrupt or
// unreadable ("ok" lines too when stderr shows no progress bar); with save,
// each table that verified gets its integrity manifest, computed from the
// table alone and handed to save.
func checkChessTables(ctx context.Context, ts *tableSet, tables []tableEntry, syz []syzygyEntry, save *manifestSaver, stdout, stderr io.Writer) checkTotals {
	bar := progress.New(stderr, progress.Options{Unit: "blocks"})
	var tot checkTotals
	for i, e := range tables {
		label := fmt.Sprintf("[%d/%d] %s", i+1, len(tables), e.name)
		var step *progress.Step
		blocks, err := ts.tb.VerifyTable(ctx, e.kind, e.material, func(done, total int64) {
			if step == nil {
				step = bar.Start(label, total)
			}
			step.Set(done)
		})
		if step != nil {
			step.Done()
		}
		res := checkedTable{name: e.name, src: e.src}
		for _, b := range blocks {
			fmt.Fprintf(stdout, "CORRUPT %v (in %s)\n", b, e.src)
			tot.bad++
		}
		if err != nil {
			fmt.Fprintf(stdout, "FAILED  %s: %v (in %s)\n", e.name, err, e.src)
			tot.failed++
			tot.tables = append(tot.tables, res)
			if ctx.Err() != nil {
				break
			}
			continue
		}
		if err := ts.tb.VerifyChecksum(ctx, e.kind, e.material); err != nil {
			fmt.Fprintf(stdout, "CORRUPT %v (in %s)\n", err, e.src)
			tot.bad++
			tot.tables = append(tot.tables, res)
			continue
		}
		if len(blocks) > 0 {
			tot.tables = append(tot.tables, res)
			continue
		}
		if !bar.Terminal() {
			fmt.Fprintf(stdout, "ok      %s\n", e.name)
		}
		if e.kind == chesstb.KindWDL {
			// Before the manifest, which is written only for a table
			// that verified in full.
			r := recountInfo(ctx, ts, e, stdout)
			tot.recounted += r.checked
			tot.mismatches += r.mismatches
			tot.failed += r.failed
			if r.mismatches > 0 || r.failed > 0 {
				tot.tables = append(tot.tables, res)
				continue
			}
		}
		if save != nil {
			line, err := writeManifest(ctx, ts, e, save)
			if err != nil {
				fmt.Fprintf(stdout, "FAILED  manifest of %s: %v (in %s)\n", e.name, err, e.src)
				tot.failed++
				tot.tables = append(tot.tables, res)
				continue
			}
			fmt.Fprintln(stdout, line)
			res.manifest = e.name + chesstb.ManifestSuffix
		}
		res.ok = true
		tot.tables = append(tot.tables, res)
	}
	for i, e := range syz {
		if ctx.Err() != nil {
			break
		}
		// The generator's embedded checksum over the whole file, the one
		// its tbcheck recomputes; with a manifest wanted it is computed in
		// the same pass, and only when that checksum matches.
		step := bar.Start(fmt.Sprintf("[%d/%d] %s", i+1, len(syz), e.name), 1)
		var name string
		var sums []byte
		var err error
		if save != nil {
			if err = save.ready(e.src); err == nil {
				name, sums, err = ts.probe.Syzygy.Manifest(ctx, e.kind, e.material)
			}
		} else {
			err = ts.probe.Syzygy.VerifyChecksum(ctx, e.kind, e.material)
		}
		step.Done()
		res := checkedTable{name: e.name, src: e.src}
		switch {
		case errors.Is(err, syzygy.ErrCorrupt):
			fmt.Fprintf(stdout, "CORRUPT %v (in %s)\n", err, e.src)
			tot.bad++
			tot.tables = append(tot.tables, res)
			continue
		case err != nil:
			fmt.Fprintf(stdout, "FAILED  %s: %v (in %s)\n", e.name, err, e.src)
			tot.failed++
			tot.tables = append(tot.tables, res)
			continue
		case !bar.Terminal():
			fmt.Fprintf(stdout, "ok      %s (Syzygy checksum)\n", e.name)
		}
		if save != nil {
			line, err := save.save(e.src, name+syzygy.ManifestSuffix, sums)
			if err != nil {
				fmt.Fprintf(stdout, "FAILED  manifest of %s: %v (in %s)\n", e.name, err, e.src)
				tot.failed++
				tot.tables = append(tot.tables, res)
				continue
			}
			fmt.Fprintln(stdout, line)
			res.manifest = name + syzygy.ManifestSuffix
		}
		res.ok = true
		tot.tables = append(tot.tables, res)
	}
	return tot
}

// infoName is where the generator's side file for a material's WDL and DTZ
// tables lives, relative to a table folder's root.
func infoName(material string) string { return "info/dtz/" + material + ".info" }

// recountResult tallies one table's .info comparison.
type recountResult struct{ checked, mismatches, failed int }

// recountInfo compares the generator's per-colour W/D/L/illegal totals for
// a WDL table with a recount of the table, when the table's source ships
// the .info file; it prints one MISMATCH line per differing total.
func recountInfo(ctx context.Context, ts *tableSet, e tableEntry, stdout io.Writer) recountResult {
	var res recountResult
	var src *tables.Location
	for _, loc := range ts.set {
		if loc.URL == e.src {
			src = loc
			break
		}
	}
	if src == nil {
		return res
	}
	name := infoName(e.material)
	obj, err := src.Open(ctx, name)
	if errors.Is(err, source.ErrNotFound) {
		return res // this folder ships no .info files
	}
	if err != nil {
		fmt.Fprintf(stdout, "FAILED  %s: %v (in %s)\n", name, err, e.src)
		res.failed++
		return res
	}
	defer obj.Close()
	if obj.Size() != chesstb.InfoSize {
		fmt.Fprintf(stdout, "MISMATCH %s: %d bytes, a generator .info file has %d (in %s)\n", name, obj.Size(), chesstb.InfoSize, e.src)
		res.mismatches++
		return res
	}
	data, err := source.ReadAll(ctx, obj, source.HintData)
	if err != nil {
		fmt.Fprintf(stdout, "FAILED  %s: %v (in %s)\n", name, err, e.src)
		res.failed++
		return res
	}
	info, err := chesstb.ParseInfo(data)
	if err != nil {
		fmt.Fprintf(stdout, "MISMATCH %s: %v (in %s)\n", name, err, e.src)
		res.mismatches++
		return res
	}
	counts, counted, err := ts.tb.RecountWDL(ctx, e.material)
	switch {
	case errors.Is(err, chesstb.ErrUnsupported):
		fmt.Fprintf(stdout, "note    %s: not recounted: %v\n", name, err)
		return res
	case errors.Is(err, chesstb.ErrCorrupt):
		fmt.Fprintf(stdout, "CORRUPT %v (in %s)\n", err, e.src)
		res.mismatches++
		return res
	case err != nil:
		fmt.Fprintf(stdout, "FAILED  recount of %s: %v (in %s)\n", e.name, err, e.src)
		res.failed++
		return res
	}
	res.checked++
	for c, side := range [2]string{"white", "black"} {
		if !counted[c] {
			continue // a mirrored or dropped frame has no cells on file
		}
		got, want := counts[c], info.Counts[c]
		for _, f := range []struct {
			class     string
			got, want uint64
		}{
			{"win", got.Win, want.Win},
			{"draw", got.Draw, want.Draw},
			{"lose", got.Lose, want.Lose},
			{"illegal", got.Illegal, want.Illegal},
		} {
			if f.got != f.want {
				fmt.Fprintf(stdout, "MISMATCH %s %s-to-move %s: info says %d, %s recounts %d (in %s)\n", name, side, f.class, f.want, e.name, f.got, e.src)
				res.mismatches++
			}
		}
	}
	return res
}

// writeManifest computes the integrity manifest of chesstb table e and
// hands it to save.
func writeManifest(ctx context.Context, ts *tableSet, e tableEntry, save *manifestSaver) (string, error) {
	if err := save.ready(e.src); err != nil {
		return "", err
	}
	b, err := ts.tb.Manifest(ctx, e.kind, e.material)
	if err != nil {
		return "", err
	}
	return save.save(e.src, e.name+chesstb.ManifestSuffix, b)
}

// manifestFolder is where the manifests of the tables in location loc go:
// dir, or loc itself when dir is empty and loc is a local folder.
func manifestFolder(loc, dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	local, ok := localDir(loc)
	if !ok {
		return "", fmt.Errorf("%s is not a local folder: give --manifest-dir", loc)
	}
	return local, nil
}

// saveManifest writes manifest b, called name (a table's object name plus
// the suffix), for a table in location loc, into dir or beside the table,
// and returns the path written.
func saveManifest(loc, name, dir string, b []byte) (string, error) {
	dir, err := manifestFolder(loc, dir)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	// Written aside and renamed, so a reader never sees half a manifest.
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return "", err
	}
	return path, nil
}

// localDir returns the folder a --tables location names when it is a
// local one (a plain path or a file:// URL).
func localDir(loc string) (string, bool) {
	if rest, ok := strings.CutPrefix(loc, "file://"); ok {
		return rest, true
	}
	if strings.Contains(loc, "://") || strings.HasPrefix(loc, "embedded:") {
		return "", false
	}
	return loc, true
}
