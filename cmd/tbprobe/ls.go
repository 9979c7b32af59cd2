package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/tbfs/tbfs/cmd/internal/cli"
	"github.com/tbfs/tbfs/format/chesstb"
	"github.com/tbfs/tbfs/plugins/host"
	"github.com/tbfs/tbfs/source"
)

// tableEntry is one table file found in the sources: the one chesstb reads
// for its kind and material (the first source holding it).
type tableEntry struct {
	kind     chesstb.Kind
	material string
	name     string // object name within its source
	src      string // the source's URL
}

// findTables lists every table file the tablebase would read, sorted by
// material then kind. A source that cannot list is an error naming it.
func findTables(ctx context.Context, ts *tableSet) ([]tableEntry, error) {
	type key struct {
		k chesstb.Kind
		m string
	}
	seen := map[key]bool{}
	var out []tableEntry
	err := eachListing(ctx, ts, func(url string, entries []source.Entry) {
		// A table is read from its kind's folder first, then the root.
		sort.SliceStable(entries, func(a, b int) bool {
			return strings.Contains(entries[a].Name, "/") && !strings.Contains(entries[b].Name, "/")
		})
		for _, e := range entries {
			k, mat, ok := chesstb.ParseTableName(e.Name)
			if !ok {
				continue
			}
			base := e.Name[strings.LastIndexByte(e.Name, '/')+1:]
			if e.Name != base && e.Name != strings.ToLower(k.String())+"/"+base {
				continue // chesstb looks only in the kind's folder and the root
			}
			if seen[key{k, mat}] {
				continue
			}
			seen[key{k, mat}] = true
			out = append(out, tableEntry{kind: k, material: mat, name: e.Name, src: url})
		}
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(a, b int) bool {
		return materialKindLess(out[a].material, out[b].material, int(out[a].kind), int(out[b].kind))
	})
	return out, nil
}

// formText says how a table ships, frame by frame.
func formText(info *chesstb.TableInfo) string {
	var parts []string
	for c, f := range info.Frames {
		s := f.Form
		if f.LossOnly {
			s += " loss-only"
		}
		if f.Relaxed {
			s += " relaxed"
		}
		parts = append(parts, [2]string{"white ", "black "}[c]+s)
	}
	return strings.Join(parts, ", ")
}

// newLsCmd is "tbprobe ls": one line per table file, or the plugins.
func newLsCmd() *cobra.Command {
	var tf tableFlags
	var plugins bool
	cmd := &cobra.Command{
		Use:   "ls [flags]",
		Short: "List the materials and table kinds available",
		Long: `Lists the materials and table kinds available, with sizes and how each
frame ships (stored, singular, dropped, mirrored; loss-only, relaxed), then
the Syzygy tables (.rtbw, .rtbz; form "syzygy").
With --plugins, lists the transport plugins found instead.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "tbprobe ls: unexpected argument %q\n", args[0])
				return cli.Exit(2)
			}
			return cli.Exit(runLs(cmd.Context(), &tf, plugins, cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
	tf.register(cmd.Flags())
	cmd.Flags().BoolVar(&plugins, "plugins", false, "list the transport plugins found in --plugin-dir and $"+host.EnvDir)
	return cmd
}

// runLs lists the tables (or plugins) and returns the exit status.
func runLs(ctx context.Context, tf *tableFlags, plugins bool, stdout, stderr io.Writer) int {
	if plugins {
		return listPlugins(ctx, tf.pluginDir, tf.pluginChecksums, stdout, stderr)
	}
	ts, err := tf.open(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "tbprobe ls: %v\n", err)
		return 1
	}
	defer ts.Close()
	tables, err := findTables(ctx, ts)
	if err != nil {
		fmt.Fprintf(stderr, "tbprobe ls: %v\n", err)
		return 1
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	defer tw.Flush()
	fmt.Fprintln(tw, "MATERIAL\tKIND\tSIZE\tFORM\tFILE")
	failed := false
	for _, e := range tables {
		info, err := ts.tb.TableInfo(ctx, e.kind, e.material)
		if err != nil {
			failed = true
			fmt.Fprintf(tw, "%s\t%s\t-\terror: %v\t%s\n", e.material, e.kind, err, e.name)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e.material, e.kind, cli.FormatSize(info.Size), formText(&info), e.name)
	}
	syz, err := findSyzygyTables(ctx, ts)
	if err != nil {
		fmt.Fprintf(stderr, "tbprobe ls: %v\n", err)
		return 1
	}
	for _, e := range syz {
		size, err := sizeOf(ctx, ts, e)
		if err != nil {
			failed = true
			fmt.Fprintf(tw, "%s\t%s\t-\terror: %v\t%s\n", e.material, strings.ToUpper(e.kind.String()), err, e.name)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\tsyzygy\t%s\n", e.material, strings.ToUpper(e.kind.String()), cli.FormatSize(size), e.name)
	}
	if failed {
		return 1
	}
	return 0
}

// listPlugins prints what the plugin host found.
func listPlugins(ctx context.Context, dir string, pins host.Checksums, stdout, stderr io.Writer) int {
	dirs := host.Dirs(dir)
	if len(dirs) == 0 {
		fmt.Fprintf(stdout, "no plugin directory: give --plugin-dir or set $%s\n", host.EnvDir)
		return 0
	}
	h, err := host.Load(ctx, dir, host.Options{Checksums: pins})
	if err != nil {
		fmt.Fprintf(stderr, "tbprobe ls: %v\n", err)
		return 1
	}
	defer h.Close()
	h.Register()
	infos := h.Infos()
	if len(infos) == 0 {
		fmt.Fprintf(stdout, "no plugins in %s\n", strings.Join(dirs, ", "))
		return 0
	}
	code := 0
	for _, i := range infos {
		fmt.Fprintln(stdout, i.String())
		if i.Err != nil {
			code = 1
		}
	}
	return code
}

// newInfoCmd is "tbprobe info MATERIAL...": the header facts of each
// kind's table of one material.
func newInfoCmd() *cobra.Command {
	var tf tableFlags
	cmd := &cobra.Command{
		Use:   "info [flags] MATERIAL...",
		Short: "Print the header facts of a material's tables",
		Long:  "Prints what the header of each table of a material says (KQKR, or KQvKR), which Syzygy files hold it, and how their reads are checked: against a block manifest page by page, or by the whole-file checksum (with the reason no manifest is used).",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cli.UsageError(cmd, "give at least one MATERIAL")
			}
			return cli.Exit(runInfo(cmd.Context(), &tf, args, cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
	tf.register(cmd.Flags())
	return cmd
}

// runInfo prints each material's tables and returns the exit status.
func runInfo(ctx context.Context, tf *tableFlags, materials []string, stdout, stderr io.Writer) int {
	ts, err := tf.open(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "tbprobe info: %v\n", err)
		return 1
	}
	defer ts.Close()
	code := 0
	for _, arg := range materials {
		mat := strings.Replace(strings.ToUpper(arg), "V", "", 1)
		found := 0
		fmt.Fprintf(stdout, "%s\n", mat)
		for k := chesstb.KindWDL; k <= chesstb.KindDTM50; k++ {
			info, err := ts.tb.TableInfo(ctx, k, mat)
			if errors.Is(err, chesstb.ErrNoTable) {
				fmt.Fprintf(stdout, "  %-5s  no table\n", k)
				continue
			}
			if err != nil {
				fmt.Fprintf(stderr, "tbprobe info: %s %s: %v\n", mat, k, err)
				code = 1
				continue
			}
			found++
			writeInfo(stdout, &info)
		}
		n, err := writeSyzygyInfo(ctx, ts, mat, stdout)
		if err != nil {
			fmt.Fprintf(stderr, "tbprobe info: %s: %v\n", mat, err)
			code = 1
		}
		found += n
		if found == 0 {
			fmt.Fprintf(stderr, "tbprobe info: no table for %s\n", mat)
			code = 1
		}
	}
	return code
}

// writeInfo prints one table's header facts.
func writeInfo(w io.Writer, info *chesstb.TableInfo) {
	fmt.Fprintf(w, "  %-5s  %s, %s (%d bytes), %d stored colour(s)\n", info.Kind, info.File, cli.FormatSize(info.Size), info.Size, info.Colors)
	for c, f := range info.Frames {
		fmt.Fprintf(w, "         %s to move: %s", [2]string{"white", "black"}[c], f.Form)
		if f.LossOnly {
			fmt.Fprint(w, ", loss-only")
		}
		if f.Relaxed {
			fmt.Fprint(w, ", relaxed")
		}
		if f.Form == "stored" {
			fmt.Fprintf(w, ", %d blocks (%d empty), %d compressed bytes at %d", f.Blocks, f.SkippedBlocks, f.DataBytes, f.DataOffset)
			if f.Ranks > 0 {
				fmt.Fprintf(w, ", %d ranks in %d-byte cells", f.Ranks, f.EntryBytes)
			}
		}
		fmt.Fprintln(w)
	}
}
