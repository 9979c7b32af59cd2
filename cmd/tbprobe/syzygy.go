package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/tbfs/tbfs/cmd/internal/cli"
	"github.com/tbfs/tbfs/format/syzygy"
	"github.com/tbfs/tbfs/source"
)

// syzygyEntry is one Syzygy table file found in the sources: the one the
// Syzygy reader reads for its kind and material (the first source holding
// it, at the source's root).
type syzygyEntry struct {
	kind     syzygy.Kind
	material string // Syzygy's spelling, "KQvKR"
	name     string
	size     int64
	src      string
}

// findSyzygyTables lists every Syzygy table file the reader would read,
// sorted by material then kind.
func findSyzygyTables(ctx context.Context, ts *tableSet) ([]syzygyEntry, error) {
	type key struct {
		k syzygy.Kind
		m string
	}
	seen := map[key]bool{}
	var out []syzygyEntry
	err := eachListing(ctx, ts, func(url string, entries []source.Entry) {
		for _, e := range entries {
			k, mat, ok := syzygy.ParseTableName(e.Name)
			if !ok || seen[key{k, mat}] {
				continue
			}
			seen[key{k, mat}] = true
			out = append(out, syzygyEntry{kind: k, material: mat, name: e.Name, size: e.Size, src: url})
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

// sizeOf is e's size: the listing's, or where the listing gives none (a
// mirror's index pages), what opening the file says.
func sizeOf(ctx context.Context, ts *tableSet, e syzygyEntry) (int64, error) {
	if e.size >= 0 {
		return e.size, nil
	}
	for _, loc := range ts.set {
		if loc.URL != e.src {
			continue
		}
		obj, err := loc.Open(ctx, e.name)
		if err != nil {
			return 0, err
		}
		defer obj.Close()
		return obj.Size(), nil
	}
	return 0, fmt.Errorf("%s: no location %s", e.name, e.src)
}

// eachListing lists every table location in search order and hands each
// listing to fn; a location that cannot list is an error naming it.
func eachListing(ctx context.Context, ts *tableSet, fn func(url string, entries []source.Entry)) error {
	for _, loc := range ts.set {
		entries, err := source.List(ctx, loc, "")
		if err != nil {
			return fmt.Errorf("listing tables %s: %w", loc.URL, err)
		}
		fn(loc.URL, entries)
	}
	return nil
}

// materialKindLess orders table listings: fewer men first, then by
// material name, then by kind.
func materialKindLess(ma, mb string, ka, kb int) bool {
	if ma != mb {
		if len(ma) != len(mb) {
			return len(ma) < len(mb)
		}
		return ma < mb
	}
	return ka < kb
}

// chesstbSpelling is a Syzygy material in chesstb's spelling ("KQvKR" to
// "KQKR"), the key the material arguments of ls, info and verify use.
func chesstbSpelling(material string) string { return strings.Replace(material, "v", "", 1) }

// writeSyzygyInfo prints the Syzygy files of a material (chesstb's
// spelling) and returns how many there are.
func writeSyzygyInfo(ctx context.Context, ts *tableSet, material string, w io.Writer) (int, error) {
	syz, err := findSyzygyTables(ctx, ts)
	if err != nil {
		return 0, err
	}
	n := 0
	var kinds []syzygy.Kind
	for _, e := range syz {
		if chesstbSpelling(e.material) != material {
			continue
		}
		size, err := sizeOf(ctx, ts, e)
		if err != nil {
			return n, err
		}
		fmt.Fprintf(w, "  %-5s  %s, %s (%d bytes), Syzygy (in %s)\n", strings.ToUpper(e.kind.String()), e.name, cli.FormatSize(size), size, e.src)
		if !slices.Contains(kinds, e.kind) {
			kinds = append(kinds, e.kind)
			if err := writeSyzygyIntegrity(ctx, ts, e.kind, e.material, w); err != nil {
				return n, err
			}
		}
		n++
	}
	return n, nil
}

// writeSyzygyIntegrity prints how the reader checks the reads of the kind
// table of material (Syzygy's spelling): through a manifest, or by the
// whole-file checksum, with the reason a manifest was not used.
func writeSyzygyIntegrity(ctx context.Context, ts *tableSet, kind syzygy.Kind, material string, w io.Writer) error {
	if ts.probe.Syzygy == nil {
		return nil
	}
	in, err := ts.probe.Syzygy.Integrity(ctx, kind, material)
	if err != nil {
		return err
	}
	if in.Manifest != "" {
		fmt.Fprintf(w, "         reads of %s: each page checked against the manifest %s\n", in.File, in.Manifest)
		return nil
	}
	fmt.Fprintf(w, "         reads of %s: whole-file checksum before the first answer (no manifest used: %v)\n", in.File, in.Ignored)
	return nil
}
