package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tbfs/tbfs/cmd/internal/cli"
	"github.com/tbfs/tbfs/cmd/internal/progress"
	"github.com/tbfs/tbfs/cmd/internal/tables"
	geistertb "github.com/tbfs/tbfs/format/geister"
	"github.com/tbfs/tbfs/source"
)

// geisterVerifyLong is geister verify's help text.
const geisterVerifyLong = `Reads every Geister table of the --tables locations (or the named
materials' tables: the file a probe reads, a .bin.zst before a raw .bin)
whole and checks it against its location's ` + geistertb.SumsFile + ` or the builder's
<raw name>.sha256 sidecar: a raw .bin by its sha256, a .bin.zst by its raw
file's sha256 over the decoded frames, or else by its own. A frame
manifest beside a table, or in the --manifests folder, is checked too,
chunk by chunk. Each table is reported as verified ("ok"; on a terminal a
progress bar stands for it), not listed (a note: no sums name it, so
nothing says its bytes are right), CORRUPT naming the file, or unreadable
(FAILED); a table in the legacy layout is checked the same way and noted
as such. Exit status 1 on any corruption, an unreadable table, or a named
material with no table; 2 on a usage error.

A MATERIAL is pb1pr1ob1or1 (as in the file names), id000 or 0.

With --manifest, each obsblk table that verifies gets a frame manifest
(<raw name>` + geistertb.ManifestSuffix + `: one hash per 8 KiB chunk of the decoded table, with its
sha256), beside it (local tables) or in --manifest-dir, which probes of
tables in a read-only location then take as --manifests (or from where it
is copied beside the tables, into the bucket, say). A probe checks each
chunk it reads against the manifest instead of reading the whole table for
its sha256 before its first answer (for a remote table, the difference
between a few requests and a download). Tables no sums list, and legacy
tables, get none. Manifests already there (and --manifests) are then
ignored, so stale ones are rewritten.`

// geisterVerifyOptions are the flags of "tbprobe geister verify".
type geisterVerifyOptions struct {
	tables         []string
	writeManifests bool
	manifestDir    string
	// manifests is --manifests: where the manifests checked are (not
	// with --manifest, which ignores them).
	manifests tables.ManifestDir
}

// newGeisterVerifyCmd is "tbprobe geister verify".
func newGeisterVerifyCmd() *cobra.Command {
	var o geisterVerifyOptions
	cmd := &cobra.Command{
		Use:   "verify [flags] [MATERIAL...]",
		Short: "Check Geister tables against their SHA256SUMS and write their frame manifests",
		Long:  geisterVerifyLong,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cli.Exit(runGeisterVerifyCmd(cmd, o, args))
		},
	}
	fs := cmd.Flags()
	registerGeisterTables(fs, &o.tables)
	fs.BoolVar(&o.writeManifests, "manifest", false, "write a frame manifest (one hash per 8 KiB chunk, bound to the sums' sha256) for every obsblk table that verifies, beside it (local tables) or in --manifest-dir; probes check what they read against it")
	fs.StringVar(&o.manifestDir, "manifest-dir", "", "with --manifest: write the manifests into this directory (as the table's raw name plus "+geistertb.ManifestSuffix+", e.g. id000_pb1pr1ob1or1_obsblk.bin"+geistertb.ManifestSuffix+") instead of beside the tables")
	o.manifests.Register(fs)
	return cmd
}

// runGeisterVerifyCmd checks the usage, then verifies the tables; it
// returns the exit status.
func runGeisterVerifyCmd(cmd *cobra.Command, o geisterVerifyOptions, args []string) int {
	usage := func(format string, a ...any) int {
		cli.UsageError(cmd, format, a...)
		return 2
	}
	if o.manifestDir != "" && !o.writeManifests {
		return usage("--manifest-dir needs --manifest")
	}
	var want []geistertb.Material
	seen := map[geistertb.Material]bool{}
	for _, a := range args {
		m, err := parseGeisterMaterial(a)
		if err != nil {
			return usage("%v", err)
		}
		if !seen[m] {
			seen[m] = true
			want = append(want, m)
		}
	}
	if o.writeManifests && o.manifestDir == "" {
		// Found before reading any table, not after reading each.
		if len(o.tables) == 0 {
			return usage("--manifest: the built-in fixture is not a local folder: give --tables or --manifest-dir")
		}
		for _, loc := range o.tables {
			if _, err := manifestFolder(source.RedactURL(loc), ""); err != nil {
				return usage("--manifest: %v", err)
			}
		}
	}
	return runGeisterVerify(cmd.Context(), o, want, cmd.OutOrStdout(), cmd.ErrOrStderr())
}

// parseGeisterMaterial reads a material as pb1pr1ob1or1, id000 or 0.
func parseGeisterMaterial(s string) (geistertb.Material, error) {
	if n := strings.TrimPrefix(strings.ToLower(s), "id"); n != "" && strings.Trim(n, "0123456789") == "" {
		id, err := strconv.Atoi(n)
		if err != nil {
			return geistertb.Material{}, fmt.Errorf("%q is not a material id", s)
		}
		return geistertb.MaterialByID(id)
	}
	return geistertb.ParseMaterial(strings.ToLower(s))
}

// runGeisterVerify verifies the tables of want (every table found when
// want is empty) and returns the exit status.
func runGeisterVerify(ctx context.Context, o geisterVerifyOptions, want []geistertb.Material, stdout, stderr io.Writer) int {
	// A manifest is written from the table and its sums alone, so a
	// stale one must not stand in the way.
	gt, err := openGeister(ctx, o.tables, o.manifests, geistertb.Options{NoManifests: o.writeManifests})
	if err != nil {
		fmt.Fprintf(stderr, "tbprobe geister verify: %v\n", err)
		return 1
	}
	defer gt.Close()
	named := len(want) > 0
	if !named {
		if want, err = gt.Candidates(ctx); err != nil {
			fmt.Fprintf(stderr, "tbprobe geister verify: %v\n", err)
			return 1
		}
	}
	var sv *manifestSaver
	if o.writeManifests {
		sv = &manifestSaver{
			ready: func(loc string) error {
				_, err := manifestFolder(loc, o.manifestDir)
				return err
			},
			save: func(loc, name string, b []byte) (string, error) {
				path, err := saveManifest(loc, name, o.manifestDir, b)
				return "wrote   " + path, err
			},
		}
	}
	tot, err := checkGeisterTables(ctx, gt, want, named, sv, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "tbprobe geister verify: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "%d tables checked: %d verified, %d not listed in any sums, %d corrupt, %d unreadable\n", tot.checked, tot.verified, tot.unlisted, tot.bad, tot.failed)
	if tot.checked == 0 && ctx.Err() == nil {
		fmt.Fprintf(stderr, "tbprobe geister verify: no Geister tables in %s\n", strings.Join(redactAll(gt.locs), ", "))
		return 1
	}
	if tot.bad > 0 || tot.failed > 0 || ctx.Err() != nil {
		return 1
	}
	return 0
}

// geisterTotals are what a check of Geister tables counted.
type geisterTotals struct {
	checked, verified, unlisted, bad, failed int
	// tables has one entry for each table checked; ok for one that
	// verified against its sums and got its frame manifest (with save).
	tables []checkedTable
}

// checkGeisterTables reads the tables of want whole and checks each
// against its sums (and a frame manifest, when one is used), printing a
// line for each ("ok" only without a progress bar); with save, each obsblk
// table that verified gets its frame manifest. A material of want with no
// table is an error when named (the user asked for it), and skipped
// otherwise (a candidate of a source that cannot list).
func checkGeisterTables(ctx context.Context, gt *geisterTables, want []geistertb.Material, named bool, save *manifestSaver, stdout, stderr io.Writer) (geisterTotals, error) {
	bar := progress.New(stderr, progress.Options{Unit: "entries"})
	var tot geisterTotals
	for i, m := range want {
		if ctx.Err() != nil {
			break
		}
		var step *progress.Step
		c, err := gt.Verify(ctx, m, func(done, total int64) {
			if step == nil {
				step = bar.Start(fmt.Sprintf("[%d/%d] %s", i+1, len(want), m.FileName()), total)
			}
			step.Set(done)
		})
		if step != nil {
			step.Done()
		}
		where := ""
		if err == nil || c.Name != "" {
			where = source.RedactURL(gt.locs[c.Source])
		}
		res := checkedTable{name: c.Name, src: where, forms: geisterForms(m)}
		if res.name == "" {
			// Refused as it was opened: which form is not known.
			res.name = m.FileName()
		}
		switch {
		case errors.Is(err, geistertb.ErrNoTable) && !named:
			continue // a candidate of a source that cannot list
		case errors.Is(err, geistertb.ErrNoTable):
			return tot, fmt.Errorf("no table for %v (id%03d)", m, m.ID())
		case errors.Is(err, geistertb.ErrCorrupt):
			tot.checked++
			tot.bad++
			tot.tables = append(tot.tables, res)
			fmt.Fprintf(stdout, "CORRUPT %v%s\n", err, inLoc(where))
			continue
		case err != nil:
			tot.checked++
			tot.failed++
			tot.tables = append(tot.tables, res)
			fmt.Fprintf(stdout, "FAILED  %s: %v%s\n", m.FileName(), err, inLoc(where))
			continue // an interrupt ends the loop at its top
		}
		tot.checked++
		if !c.Listed {
			tot.unlisted++
			tot.tables = append(tot.tables, res)
			note := ""
			if save != nil {
				note = "; no manifest written"
			}
			fmt.Fprintf(stdout, "note    %s: not listed in %s or %s.sha256: read whole, but nothing to check its bytes against%s (in %s)\n", c.Name, geistertb.SumsFile, m.FileName(), note, where)
			continue
		}
		tot.verified++
		if !bar.Terminal() {
			legacy := ""
			if c.Legacy {
				legacy = " (legacy layout)"
			}
			fmt.Fprintf(stdout, "ok      %s%s\n", c.Name, legacy)
		}
		if save == nil {
			res.ok = true
			tot.tables = append(tot.tables, res)
			continue
		}
		if c.Legacy {
			tot.tables = append(tot.tables, res)
			fmt.Fprintf(stdout, "note    %s: legacy layout: no manifest written (frame manifests cover obsblk tables)\n", c.Name)
			continue
		}
		line, err := save.save(gt.locs[c.Source], m.FileName()+geistertb.ManifestSuffix, c.Manifest)
		if err != nil {
			fmt.Fprintf(stdout, "FAILED  manifest of %s: %v (in %s)\n", c.Name, err, where)
			tot.failed++
			tot.tables = append(tot.tables, res)
			continue
		}
		fmt.Fprintln(stdout, line)
		res.ok, res.manifest = true, m.FileName()+geistertb.ManifestSuffix
		tot.tables = append(tot.tables, res)
	}
	return tot, nil
}

// geisterForms are the names the Geister reader looks for material m's
// table under, in the order it looks.
func geisterForms(m geistertb.Material) []string {
	raw := m.FileName()
	legacy := strings.TrimSuffix(raw, "_obsblk.bin") + ".bin"
	return []string{raw + ".zst", raw + ".zstd", raw, legacy + ".zst", legacy + ".zstd", legacy}
}

// inLoc is " (in LOC)" for a known location, "" otherwise.
func inLoc(loc string) string {
	if loc == "" {
		return ""
	}
	return " (in " + loc + ")"
}

// redactAll redacts every location in locs.
func redactAll(locs []string) []string {
	out := make([]string, len(locs))
	for i, l := range locs {
		out[i] = source.RedactURL(l)
	}
	return out
}
