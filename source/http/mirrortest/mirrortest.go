// Package mirrortest serves a local directory over HTTP on 127.0.0.1 for
// tests, with Range, HEAD and optionally a manifest, so tests of any layer can
// read tables through the HTTP transport:
//
//	url := mirrortest.Serve(t, dir)        // http://127.0.0.1:PORT/
//	src, err := source.Open(ctx, url)      // with source/http registered
//
// Directories are not served (404), names are checked with source.CheckName,
// and files are opened through an os.Root, so nothing outside dir is ever
// sent. The server stops when the test ends.
package mirrortest

import (
	"bytes"
	"io/fs"
	"net/http"
	nethttptest "net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tbfs/tbfs/source"
	srchttp "github.com/tbfs/tbfs/source/http"
)

// Serve starts a server for dir on a free loopback port and returns its base
// URL, ending in a slash. The server is closed by t.Cleanup.
func Serve(t testing.TB, dir string) string {
	t.Helper()
	srv := nethttptest.NewServer(Handler(t, dir))
	t.Cleanup(srv.Close)
	return srv.URL + "/"
}

// Handler returns the handler Serve uses, for tests that put a misbehaving
// layer in front of it.
func Handler(t testing.TB, dir string) http.Handler {
	t.Helper()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatalf("mirrortest: %v", err)
	}
	t.Cleanup(func() { root.Close() })
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.Error(w, "read-only", http.StatusMethodNotAllowed)
			return
		}
		name := strings.TrimPrefix(r.URL.Path, "/")
		if source.CheckName(name) != nil {
			http.Error(w, "bad name", http.StatusBadRequest)
			return
		}
		f, err := root.Open(name)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil || !fi.Mode().IsRegular() {
			http.NotFound(w, r)
			return
		}
		// ServeContent answers Range, HEAD and conditional requests.
		http.ServeContent(w, r, name, fi.ModTime(), f)
	})
}

// WriteManifest writes dir's manifest file (srchttp.DefaultManifest) listing
// every regular file under dir, so the HTTP transport can List it.
func WriteManifest(t testing.TB, dir string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, srchttp.DefaultManifest), manifest(t, dir), 0o644); err != nil {
		t.Fatalf("mirrortest: %v", err)
	}
}

// WithManifest answers requests for srchttp.DefaultManifest with a manifest
// of dir made now, and passes every other request to h: a read-only dir
// (the shared tables) served as a listable mirror.
func WithManifest(t testing.TB, dir string, h http.Handler) http.Handler {
	t.Helper()
	data := manifest(t, dir)
	mod := time.Now()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.TrimPrefix(r.URL.Path, "/") != srchttp.DefaultManifest {
			h.ServeHTTP(w, r)
			return
		}
		http.ServeContent(w, r, srchttp.DefaultManifest, mod, bytes.NewReader(data))
	})
}

// manifest lists every regular file under dir but the manifest itself.
func manifest(t testing.TB, dir string) []byte {
	t.Helper()
	var entries []source.Entry
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(rel)
		if name == srchttp.DefaultManifest {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		entries = append(entries, source.Entry{Name: name, Size: fi.Size()})
		return nil
	})
	if err != nil {
		t.Fatalf("mirrortest: walking %s: %v", dir, err)
	}
	var b bytes.Buffer
	if err := srchttp.WriteManifest(&b, entries); err != nil {
		t.Fatalf("mirrortest: %v", err)
	}
	return b.Bytes()
}
