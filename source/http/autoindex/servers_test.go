package autoindex_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/source"
	srchttp "github.com/tbfs/tbfs/source/http"
	"github.com/tbfs/tbfs/source/http/autoindex"
	"github.com/tbfs/tbfs/source/http/mirrortest"
	"github.com/tbfs/tbfs/source/sourcetest"
)

// trickyNames are files whose names index pages must escape, each a way a
// parser can go wrong: percent signs that are not escapes, entities, URL
// delimiters, a colon that would read as a scheme, non-ASCII letters, and a
// name longer than the column nginx and Apache cut display names at.
var trickyNames = []string{
	`a b&c<d>"e%41.rtbw`,
	`it's #x?y;z=1.txt`,
	`:colon.txt`,
	`x+y@z,~!$*().txt`,
	`ünïcødé 表.txt`,
	strings.Repeat("long", 20) + ".rtbz",
	`sub dir/inner%2Fnot a slash.txt`,
	`sub dir/deeper/KQvK.rtbw`,
	`empty folder/`,
}

// writeFixtureTree writes a mirror's worth of files into dir: a few
// chesstb tables in their kind folders, Syzygy tables at the root (both
// copied from the shared reference tables when they are there) and the
// tricky names.
func writeFixtureTree(t *testing.T, dir string) {
	t.Helper()
	if testenv.HasShared(t, "chesstb", "shipped") {
		shipped := testenv.Shared(t, "chesstb", "shipped")
		syz := testenv.Shared(t, "syzygy", "tables")
		for _, f := range []string{"wdl/KQK.lzw", "wdl/KRK.lzw", "dtz/KQK.lzdtz", "dtm/KQK.lzdtm"} {
			copyFile(t, filepath.Join(shipped, f), filepath.Join(dir, f))
		}
		for _, f := range []string{"KQvK.rtbw", "KQvK.rtbz"} {
			copyFile(t, filepath.Join(syz, f), filepath.Join(dir, f))
		}
	}
	for _, n := range trickyNames {
		p := filepath.Join(dir, filepath.FromSlash(n))
		if strings.HasSuffix(n, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("contents of "+n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// walkFiles is the arbiter of a listing: every regular file under dir, by
// slash-separated name, with its size.
func walkFiles(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out[filepath.ToSlash(rel)] = fi.Size()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRealServerPages: the index page each real server generates for each
// folder of the fixture tree parses to exactly that folder's entries, with
// folders marked (the arbiter is os.ReadDir of the folder the server
// serves).
func TestRealServerPages(t *testing.T) {
	dir := t.TempDir()
	writeFixtureTree(t, dir)
	for _, server := range mirrortest.Indexers {
		t.Run(string(server), func(t *testing.T) {
			base := mirrortest.ServeIndexed(t, server, dir)
			err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err != nil || !d.IsDir() {
					return err
				}
				rel, err := filepath.Rel(dir, p)
				if err != nil {
					return err
				}
				var want []autoindex.Entry
				des, err := os.ReadDir(p)
				if err != nil {
					return err
				}
				for _, de := range des {
					want = append(want, autoindex.Entry{Name: de.Name(), Dir: de.IsDir()})
				}
				slices.SortFunc(want, func(a, b autoindex.Entry) int { return strings.Compare(a.Name, b.Name) })
				u := folderURL(t, base, filepath.ToSlash(rel))
				got, err := autoindex.Parse(strings.NewReader(get(t, u)), u)
				if err != nil {
					t.Errorf("%s: %v", u, err)
					return nil
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s:\n got %+v\nwant %+v", u, got, want)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// folderURL is the URL of folder rel ("." for the root) under base.
func folderURL(t *testing.T, base, rel string) *url.URL {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	if rel != "." {
		for _, e := range strings.Split(rel, "/") {
			u = u.JoinPath(e)
		}
		u.Path += "/"
		if u.RawPath != "" {
			u.RawPath += "/"
		}
	}
	return u
}

func get(t *testing.T, u *url.URL) string {
	t.Helper()
	resp, err := http.Get(u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s, %v", u, resp.Status, err)
	}
	return string(b)
}

// TestRealServerList: the HTTP transport lists a mirror without a manifest
// from each real server's index pages: every file under the served folder
// (the arbiter is the file system), sizes left to the ranged GET (which
// gives the file's), one request a folder and the one manifest lookup.
func TestRealServerList(t *testing.T) {
	dir := t.TempDir()
	writeFixtureTree(t, dir)
	want := walkFiles(t, dir)
	folders := 0
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			folders++
		}
		return err
	})
	ctx := context.Background()
	for _, server := range mirrortest.Indexers {
		t.Run(string(server), func(t *testing.T) {
			src, slow := serveCounted(t, server, dir)
			entries, err := src.List(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			if c := slow.Counts(); c.Gets != folders+1 || c.Heads != 0 {
				t.Errorf("listing sent %+v; want %d GETs (the manifest and one a folder)", c, folders+1)
			}
			got := map[string]int64{}
			for _, e := range entries {
				if e.Size != -1 {
					t.Errorf("%s listed with size %d; an index page gives none", e.Name, e.Size)
				}
				got[e.Name] = e.Size
			}
			if len(got) != len(want) {
				t.Errorf("listed %d names, the folder holds %d files", len(got), len(want))
			}
			for name, size := range want {
				if _, ok := got[name]; !ok {
					t.Errorf("%q is not listed", name)
					continue
				}
				obj, err := src.Open(ctx, name)
				if err != nil {
					t.Errorf("open %q: %v", name, err)
					continue
				}
				if obj.Size() != size {
					t.Errorf("%q: size %d, the file has %d", name, obj.Size(), size)
				}
				obj.Close()
			}
			sub, err := src.List(ctx, "sub dir/")
			if err != nil || len(sub) != 2 {
				t.Errorf(`List("sub dir/") = %v, %v; want the two files under it`, sub, err)
			}
		})
	}
}

// TestRealServerConformance runs the transport's conformance suite against
// each real server, listing included. lighttpd is left out: as configured
// by default it serves a file for any name below it ("a.txt/x" answers
// with a.txt, the path info going to scripts; with
// static-file.disable-pathinfo it answers 403), which no client can tell
// from an object; a listing, which never holds such a name, is what keeps a
// probe from asking for one.
func TestRealServerConformance(t *testing.T) {
	for _, server := range mirrortest.Indexers {
		if server == mirrortest.Lighttpd {
			continue
		}
		t.Run(string(server), func(t *testing.T) {
			sourcetest.Run(t, func(t *testing.T, dir string) source.Source {
				src, err := srchttp.New(mirrortest.ServeIndexed(t, server, dir), srchttp.Options{})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := src.List(context.Background(), ""); err != nil {
					t.Errorf("List: %v, want the index pages read", err)
				}
				return src
			})
		})
	}
}

// TestRealServerManifestFirst: a mirror that publishes a manifest beside
// its index pages is listed from the manifest (the arbiter is the
// manifest's own contents: a subset of the files, which the index pages
// would not give) without reading any folder's page but the root's.
func TestRealServerManifestFirst(t *testing.T) {
	dir := t.TempDir()
	writeFixtureTree(t, dir)
	manifest := "# only two\n2 a.txt\n5 wdl/b.txt\n"
	if err := os.WriteFile(filepath.Join(dir, srchttp.DefaultManifest), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, server := range mirrortest.Indexers {
		t.Run(string(server), func(t *testing.T) {
			src, slow := serveCounted(t, server, dir)
			entries, err := src.List(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			want := []source.Entry{{Name: "a.txt", Size: 2}, {Name: "wdl/b.txt", Size: 5}}
			if !slices.Equal(entries, want) {
				t.Errorf("List = %v, want the manifest's %v", entries, want)
			}
			if c := slow.Counts(); c.Gets > 2 {
				t.Errorf("listing sent %d GETs; want the manifest's and at most the root's page", c.Gets)
			}
		})
	}
}

// TestRealServerNotAnIndex: a folder the server shows a page of the site's
// own for (an index.html) makes the mirror unlistable, as a missing index
// does, instead of listing the page's links as the folder's files; Open
// still finds every file by name.
func TestRealServerNotAnIndex(t *testing.T) {
	dir := t.TempDir()
	writeFixtureTree(t, dir)
	page := `<html><head><title>Our tables</title></head><body><a href="KQvK.rtbw">one table</a></body></html>`
	if err := os.WriteFile(filepath.Join(dir, "sub dir", "index.html"), []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, server := range []mirrortest.Indexer{mirrortest.Nginx, mirrortest.ApacheTable, mirrortest.Lighttpd} {
		t.Run(string(server), func(t *testing.T) {
			src, err := srchttp.New(mirrortest.ServeIndexed(t, server, dir), srchttp.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			_, err = src.List(ctx, "")
			if !errors.Is(err, source.ErrUnsupported) || !strings.Contains(err.Error(), "sub dir/") {
				t.Errorf("List: %v; want ErrUnsupported naming the folder", err)
			}
			obj, err := src.Open(ctx, "sub dir/deeper/KQvK.rtbw")
			if err != nil {
				t.Fatal(err)
			}
			obj.Close()
		})
	}
}

// TestCapturedPages parses the pages the real servers wrote for the
// fixture tree, kept as FuzzParse's seed corpus, so the parser is checked
// against every server's output where none is installed: each parses to
// the entries of the folder it was written for (the arbiter is os.ReadDir
// of the same tree, written again).
func TestCapturedPages(t *testing.T) {
	if !testenv.HasShared(t, "chesstb", "shipped") {
		t.Skip("the captured tree holds tables from ../shared")
	}
	dir := t.TempDir()
	writeFixtureTree(t, dir)
	folders := map[string]string{"root": ".", "subdir": "sub dir", "wdl": "wdl", "empty": "empty folder"}
	files, err := filepath.Glob(filepath.Join("testdata", "fuzz", "FuzzParse", "*-*"))
	if err != nil || len(files) < len(mirrortest.Indexers)*len(folders) {
		t.Fatalf("%d captured pages (%v), want %d", len(files), err, len(mirrortest.Indexers)*len(folders))
	}
	for _, f := range files {
		page, rawURL := readSeed(t, f)
		base := filepath.Base(f)
		folder := folders[base[strings.LastIndexByte(base, '-')+1:]]
		var want []autoindex.Entry
		des, err := os.ReadDir(filepath.Join(dir, filepath.FromSlash(folder)))
		if err != nil {
			t.Fatal(err)
		}
		for _, de := range des {
			want = append(want, autoindex.Entry{Name: de.Name(), Dir: de.IsDir()})
		}
		u, err := url.Parse(rawURL)
		if err != nil {
			t.Fatal(err)
		}
		got, err := autoindex.Parse(strings.NewReader(page), u)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: %+v, %v; want %+v", base, got, err, want)
		}
	}
}

// readSeed reads a fuzz corpus file of two strings.
func readSeed(t *testing.T, path string) (string, string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 3 || lines[0] != "go test fuzz v1" {
		t.Fatalf("%s: not a corpus file of two strings", path)
	}
	var vals [2]string
	for i, l := range lines[1:] {
		q, ok := strings.CutPrefix(l, "string(")
		if !ok {
			t.Fatalf("%s: line %q", path, l)
		}
		v, err := strconv.Unquote(strings.TrimSuffix(q, ")"))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		vals[i] = v
	}
	return vals[0], vals[1]
}

// TestRealServerLoop: a folder linking to its parent (a symbolic link the
// servers follow) makes an endless tree of index pages; the listing stops
// after a bounded number of requests with ErrUnsupported, so lookups fall
// back to asking for each name, rather than walking on.
func TestRealServerLoop(t *testing.T) {
	dir := t.TempDir()
	writeFixtureTree(t, dir)
	if err := os.Symlink("..", filepath.Join(dir, "sub dir", "up")); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, server := range []mirrortest.Indexer{mirrortest.Nginx, mirrortest.ApacheTable, mirrortest.Lighttpd} {
		t.Run(string(server), func(t *testing.T) {
			src, slow := serveCounted(t, server, dir)
			_, err := src.List(ctx, "")
			if !errors.Is(err, source.ErrUnsupported) {
				t.Fatalf("List: %v, want ErrUnsupported", err)
			}
			// Each level holds the root's folders again (under up/),
			// so without a bound the walk would not end.
			if c := slow.Counts(); c.Total() > 1100 {
				t.Errorf("the listing sent %d requests before it stopped", c.Total())
			}
		})
	}
}

// serveCounted serves dir through the real server and an HTTP source that
// reaches it by a request-counting proxy, closed when the test ends.
func serveCounted(t *testing.T, server mirrortest.Indexer, dir string) (*srchttp.Source, *mirrortest.Slow) {
	t.Helper()
	target := mirrortest.ServeIndexed(t, server, dir)
	proxy, slow := mirrortest.ProxySlow(t, strings.TrimSuffix(target, "/"), 0)
	src, err := srchttp.New(proxy+"/", srchttp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src, slow
}
