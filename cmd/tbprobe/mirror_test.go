package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/cmd/internal/tables"
	"github.com/tbfs/tbfs/internal/testkit/chesstboracle"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/source/http/mirrortest"
	"github.com/tbfs/tbfs/source/listcache"
)

// TestIndexedMirrors: a folder of tables served by each real web server
// with its directory index pages on, and nothing else (no MANIFEST, no
// .tbsum), is listed from those pages: ls names every table file of the
// folder (the arbiter is the file system), and probes give the
// reference's values (oracle rows of the fixtures' materials) from one
// listing. A folder whose page is not an index leaves the mirror
// unlistable, and probes still answer, asking for each name. Published
// first, the same folder's Syzygy reads are checked against the .tbsum
// found through the mirror.
func TestIndexedMirrors(t *testing.T) {
	dir := publishFixture(t)
	var files []string
	for name := range snapshot(t, dir) {
		if isTableFile(name) && !geisterFileNames[name] {
			files = append(files, name)
		}
	}
	rows := chesstboracle.Read(t, testenv.Testdata(t, "chesstb", "oracle", "probe.tsv"))
	ctx := context.Background()
	for _, server := range mirrortest.Indexers {
		t.Run(string(server), func(t *testing.T) {
			base := mirrortest.ServeIndexed(t, server, dir)
			res := runBin(t, "", nil, "ls", "--tables", base)
			if res.code != 0 {
				t.Fatalf("ls: exit %d\n%s%s", res.code, res.stdout, res.stderr)
			}
			for _, f := range files {
				if !strings.Contains(res.stdout, " "+f+"\n") {
					t.Errorf("ls does not name %s:\n%s", f, res.stdout)
				}
			}
			probeListedMirror(t, ctx, base, rows, 11, 10)
		})
	}
	// A folder whose page is one of the site's own makes the mirror
	// unlistable: probes ask for each name instead, and still answer.
	page := filepath.Join(dir, "dtz", "index.html")
	if err := os.WriteFile(page, []byte("<title>DTZ tables</title>"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Run("unlistable", func(t *testing.T) {
		base := mirrortest.ServeIndexed(t, mirrortest.Nginx, dir)
		if res := runBin(t, "", nil, "ls", "--tables", base); res.code != 1 || !strings.Contains(res.stderr, "no index of folder dtz/") {
			t.Errorf("ls: exit %d, want 1 and why:\n%s", res.code, res.stderr)
		}
		tf := tableFlags{tables: []string{base}, cacheSize: 64 << 20, metadataTTL: tables.MetadataTTL(listcache.DefaultTTL)}
		ts, err := tf.open(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer ts.Close()
		for i, r := range rows {
			if !r.HasForm("shipped") || i%23 != 0 {
				continue
			}
			pos, err := chess.ParseFEN(r.FEN)
			if err != nil {
				t.Fatal(err)
			}
			wdl, dtz, _ := r.Want(t)
			got, err := ts.tb.Probe(ctx, &pos)
			if err != nil || got.WDL != wdl || dtz != nil && (!got.HasDTZ || got.DTZ != *dtz) {
				t.Errorf("%s: %+v, %v; want wdl %d dtz %v", r.Where, got, err, wdl, dtz)
			}
		}
	})
	if err := os.Remove(page); err != nil {
		t.Fatal(err)
	}
	if res := runBin(t, "", nil, "publish", dir); res.code != 0 {
		t.Fatalf("publish: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	base := mirrortest.ServeIndexed(t, mirrortest.Nginx, dir)
	res := runBin(t, "", nil, "info", "--tables", base, "KQvK")
	want := "reads of KQvK.rtbw: each page checked against the manifest KQvK.rtbw.tbsum"
	if res.code != 0 || !strings.Contains(res.stdout, want) {
		t.Errorf("info over the published mirror: exit %d, want %q:\n%s%s", res.code, want, res.stdout, res.stderr)
	}
}
