package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tbfs/tbfs/cmd/internal/cli"
	"github.com/tbfs/tbfs/cmd/internal/tables"
	"github.com/tbfs/tbfs/format/chesstb"
	"github.com/tbfs/tbfs/format/geister"
	"github.com/tbfs/tbfs/format/syzygy"
	"github.com/tbfs/tbfs/source"
	srchttp "github.com/tbfs/tbfs/source/http"
)

// publishLong is publish's help text.
const publishLong = `Makes DIR, a local folder of tables, ready to serve as a mirror (over
HTTP, or copied into a bucket) in one pass: every table in it (chesstb,
Syzygy and Geister alike) is checked as verify and geister verify check
it, each one that verifies gets its integrity manifest beside it (the
table's name plus ` + chesstb.ManifestSuffix + `, what verify --manifest writes), and the
listing file ` + srchttp.DefaultManifest + ` at the top of DIR names every file a reader may open:
the tables that verified with their manifests, and every other file
(the generator's .info files, SHA256SUMS, a README). A reader of the
mirror then finds a missing table without asking for it and checks
every block it reads, instead of a whole file before its first answer.

A progress bar is drawn on a terminal; otherwise one line per table.
A table that does not verify (a corrupt block or checksum, a .info total
that differs, a Geister table its sums do not list or list with another
sum) is refused: a CORRUPT or FAILED line names the file and why, a
REFUSED line says it is left out of the listing with its manifest, and
the exit status is 1. The
listing never names a table without a manifest this run wrote or found
equal to the one it would write. A Geister table in the legacy layout,
which can have no manifest, is refused the same way. Table files probes
never read (one shadowed by another of the same material, a Geister raw
table beside its .zst, a table in a folder probes do not search) are left
out too, with a note.

Run again, publish checks every table again (a table damaged on disk
since is refused, not kept) and rewrites only what changed: the manifest
of a table that changed, the listing when a file came or went. When
nothing changed it writes nothing and says so.`

// newPublishCmd is "tbprobe publish DIR".
func newPublishCmd() *cobra.Command {
	cacheSize := cli.Size(chesstb.DefaultBlockCacheBytes)
	cmd := &cobra.Command{
		Use:   "publish [flags] DIR",
		Short: "Verify a folder of tables, write their manifests and its " + srchttp.DefaultManifest + " listing",
		Long:  publishLong,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return cli.UsageError(cmd, "give exactly one DIR")
			}
			return cli.Exit(runPublish(cmd.Context(), args[0], int64(cacheSize), cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
	cmd.Flags().Var(&cacheSize, "cache-size", "`SIZE` of memory for decoded blocks (e.g. 64MiB, 1.5G; binary units)")
	return cmd
}

// publisher writes a folder's manifests, only where they differ from
// what is there.
type publisher struct {
	dir           string
	written, kept int
}

// save writes manifest b as name under the folder unless the file there
// already holds exactly b.
func (p *publisher) save(_, name string, b []byte) (string, error) {
	file := filepath.Join(p.dir, filepath.FromSlash(name))
	if old, err := os.ReadFile(file); err == nil && bytes.Equal(old, b) {
		p.kept++
		return "kept    " + file + " (unchanged)", nil
	}
	written, err := saveManifest(p.dir, name, "", b)
	if err != nil {
		return "", err
	}
	p.written++
	return "wrote   " + written, nil
}

// runPublish publishes folder arg (a path or a file:// URL) and returns
// the exit status.
func runPublish(ctx context.Context, arg string, cacheSize int64, stdout, stderr io.Writer) int {
	fail := func(err error) int {
		fmt.Fprintf(stderr, "tbprobe publish: %v\n", err)
		return 1
	}
	dir, ok := localDir(arg)
	if !ok {
		return fail(fmt.Errorf("%s is not a local folder: publish writes into the folder, then copy it to the mirror", source.RedactURL(arg)))
	}
	if fi, err := os.Stat(dir); err != nil {
		return fail(err)
	} else if !fi.IsDir() {
		return fail(fmt.Errorf("%s is not a folder", dir))
	}
	pub := &publisher{dir: dir}
	save := &manifestSaver{ready: func(string) error { return nil }, save: pub.save}

	// Manifests are computed from the tables alone: one already there
	// must not stand in the way.
	tf := tableFlags{tables: []string{dir}, cacheSize: cli.Size(cacheSize), noManifests: true}
	ts, err := tf.open(ctx)
	if err != nil {
		return fail(err)
	}
	defer ts.Close()
	chess, err := findTables(ctx, ts)
	if err != nil {
		return fail(err)
	}
	syz, err := findSyzygyTables(ctx, ts)
	if err != nil {
		return fail(err)
	}
	tot := checkChessTables(ctx, ts, chess, syz, save, stdout, stderr)
	checked := tot.tables

	gt, err := openGeister(ctx, []string{dir}, tables.ManifestDir{}, geister.Options{NoManifests: true})
	if err != nil {
		return fail(err)
	}
	defer gt.Close()
	candidates, err := gt.Candidates(ctx)
	if err != nil {
		return fail(err)
	}
	gtot, err := checkGeisterTables(ctx, gt, candidates, false, save, stdout, stderr)
	if err != nil {
		return fail(err)
	}
	checked = append(checked, gtot.tables...)
	if ctx.Err() != nil {
		return fail(ctx.Err())
	}

	// The folder is listed now, so the listing holds the manifests just
	// written (a local folder is listed afresh on every call).
	all, err := source.List(ctx, ts.set[0], "")
	if err != nil {
		return fail(err)
	}
	present := map[string]bool{}
	for _, e := range all {
		present[e.Name] = true
	}
	published := map[string]bool{}
	refused := map[string]bool{}
	var nPublished, nRefused int
	for _, c := range checked {
		if c.ok {
			published[c.name], published[c.manifest] = true, true
			nPublished++
			continue
		}
		nRefused++
		name := c.name
		for _, f := range c.forms {
			if refused[f] = true; present[f] && !present[name] {
				name = f // a table refused as it was opened is named by its form
			}
		}
		refused[c.name] = true
		fmt.Fprintf(stdout, "REFUSED %s: left out of the listing, with any manifest of it\n", name)
	}
	var listed []source.Entry
	others := 0
	for _, e := range all {
		switch {
		case published[e.Name]:
			listed = append(listed, e)
		case e.Name == srchttp.DefaultManifest || isLeftover(e.Name):
		case refused[e.Name]:
		case isTableFile(e.Name):
			fmt.Fprintf(stdout, "note    %s: probes never read this file (another of the same table comes first, or it lies in a folder they do not search): left out of the listing\n", e.Name)
		case strings.HasSuffix(e.Name, chesstb.ManifestSuffix):
			if !refused[strings.TrimSuffix(e.Name, chesstb.ManifestSuffix)] && !refusedGeister(refused, e.Name) {
				fmt.Fprintf(stdout, "note    %s: the manifest of no table published here: left out of the listing\n", e.Name)
			}
		default:
			listed = append(listed, e)
			others++
		}
	}
	var buf bytes.Buffer
	if err := srchttp.WriteManifest(&buf, listed); err != nil {
		return fail(err)
	}
	listing := filepath.Join(dir, srchttp.DefaultManifest)
	listingWritten := false
	if old, err := os.ReadFile(listing); err != nil || !bytes.Equal(old, buf.Bytes()) {
		if _, err := saveManifest(dir, srchttp.DefaultManifest, "", buf.Bytes()); err != nil {
			return fail(fmt.Errorf("writing the listing: %w", err))
		}
		listingWritten = true
		fmt.Fprintf(stdout, "wrote   %s (%d files: %d tables, their manifests, %d others)\n", listing, len(listed), nPublished, others)
	} else {
		fmt.Fprintf(stdout, "kept    %s (unchanged)\n", listing)
	}
	fmt.Fprintf(stdout, "%d tables published (%d manifests written, %d unchanged), %d refused\n", nPublished, pub.written, pub.kept, nRefused)
	if pub.written == 0 && !listingWritten {
		fmt.Fprintln(stdout, "nothing changed: every manifest and the listing were up to date")
	}
	if nRefused > 0 || tot.bad > 0 || tot.failed > 0 || tot.mismatches > 0 || gtot.bad > 0 || gtot.failed > 0 {
		return 1
	}
	return 0
}

// isLeftover reports a file a write of publish's own left behind when it
// was interrupted (written aside, then renamed).
func isLeftover(name string) bool {
	return name == srchttp.DefaultManifest+".tmp" || strings.HasSuffix(name, chesstb.ManifestSuffix+".tmp")
}

// isTableFile reports a name of a table file of any format, wherever it
// lies.
func isTableFile(name string) bool {
	base := path.Base(name)
	if _, _, ok := chesstb.ParseTableName(base); ok {
		return true
	}
	if _, _, ok := syzygy.ParseTableName(base); ok {
		return true
	}
	return geisterFileNames[base]
}

// geisterFileNames are the names a Geister table file can have.
var geisterFileNames = func() map[string]bool {
	out := map[string]bool{}
	for _, m := range geister.Materials() {
		for _, n := range geisterForms(m) {
			out[n] = true
		}
	}
	return out
}()

// refusedGeister reports a Geister frame manifest (named by the raw file)
// of a table that was refused in its compressed form.
func refusedGeister(refused map[string]bool, manifest string) bool {
	raw := strings.TrimSuffix(manifest, geister.ManifestSuffix)
	return refused[raw] || refused[raw+".zst"] || refused[raw+".zstd"]
}
