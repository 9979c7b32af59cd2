package http_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/tbfs/tbfs/plugins/host"
	"github.com/tbfs/tbfs/plugins/internal/plugintest"
	"github.com/tbfs/tbfs/source"
	srchttp "github.com/tbfs/tbfs/source/http"
	"github.com/tbfs/tbfs/source/http/mirrortest"
	"github.com/tbfs/tbfs/source/sourcetest"
)

func loadPlugin(t *testing.T) *host.Plugin {
	t.Helper()
	return plugintest.Load(t, "plugins/http/cmd/tbfs-source-http", "http", host.Options{})
}

// TestPluginConformance runs the transport suite through the plugin binary
// tbfs-source-http against a real HTTP server on loopback, with and
// without a manifest.
func TestPluginConformance(t *testing.T) {
	p := loadPlugin(t)
	for _, manifest := range []bool{true, false} {
		t.Run(fmt.Sprintf("manifest=%v", manifest), func(t *testing.T) {
			sourcetest.Run(t, func(t *testing.T, dir string) source.Source {
				if manifest {
					mirrortest.WriteManifest(t, dir)
				}
				src, err := p.OpenURL(context.Background(), mirrortest.Serve(t, dir))
				if err != nil {
					t.Fatal(err)
				}
				return src
			})
		})
	}
}

// kind names the first source error kind err matches, for comparing two
// transports' failures.
func kind(err error) string {
	for _, k := range []error{io.EOF, source.ErrNotFound, source.ErrInvalid, source.ErrTransient,
		source.ErrPermanent, source.ErrUnsupported, source.ErrClosed} {
		if errors.Is(err, k) {
			return k.Error()
		}
	}
	if err != nil {
		return "other: " + err.Error()
	}
	return "nil"
}

// bothTransports opens the server at base through the built-in HTTP
// transport and through the plugin p; both close with the test.
func bothTransports(t *testing.T, p *host.Plugin, base string) (builtin, plug source.Source) {
	t.Helper()
	builtin, err := srchttp.New(base, srchttp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { builtin.Close() })
	plug, err = p.OpenURL(context.Background(), base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { plug.Close() })
	return builtin, plug
}

// TestSameAsBuiltIn: the built-in transport and its plugin form give the
// same bytes, lengths, error kinds and listings for the same requests on
// the same server. The arbiter is the built-in transport, itself held to
// the fixtures by the conformance suite.
func TestSameAsBuiltIn(t *testing.T) {
	p := loadPlugin(t)
	dir := t.TempDir()
	sourcetest.WriteFixtures(t, dir)
	mirrortest.WriteManifest(t, dir)
	builtin, plug := bothTransports(t, p, mirrortest.Serve(t, dir))
	ctx := context.Background()

	names := []string{"missing", "dir", "../x"}
	for _, f := range sourcetest.Fixtures() {
		names = append(names, f.Name)
	}
	r := rand.New(rand.NewPCG(8, 8))
	for _, name := range names {
		a, errA := builtin.Open(ctx, name)
		b, errB := plug.Open(ctx, name)
		if kind(errA) != kind(errB) {
			t.Errorf("Open(%q): built-in %v, plugin %v", name, errA, errB)
		}
		if errA != nil || errB != nil {
			continue
		}
		if a.Size() != b.Size() {
			t.Errorf("%s: size %d built in, %d as plugin", name, a.Size(), b.Size())
		}
		// The server names every file's version by Last-Modified; the
		// plugin must pass on what the built-in transport saw.
		if va, vb := source.VersionOf(a), source.VersionOf(b); va == "" || va != vb {
			t.Errorf("%s: version %q built in, %q as plugin", name, va, vb)
		}
		size := a.Size()
		for i := 0; i < 40; i++ {
			off := r.Int64N(size + 2)
			n := r.IntN(70000)
			bufA, bufB := make([]byte, n), make([]byte, n)
			nA, eA := a.ReadAt(ctx, bufA, off, source.HintData)
			nB, eB := b.ReadAt(ctx, bufB, off, source.HintData)
			// io.ReaderAt lets a read that ends exactly at the end say
			// nil or io.EOF; the two may differ only there.
			exact := off+int64(n) == size && n > 0
			if nA != nB || !bytes.Equal(bufA[:nA], bufB[:nB]) || (kind(eA) != kind(eB) && !exact) {
				t.Errorf("%s ReadAt(off %d, n %d): built-in %d, %v; plugin %d, %v", name, off, n, nA, eA, nB, eB)
			}
		}
		a.Close()
		b.Close()
	}
	for _, prefix := range []string{"", "dir/", "big", "none/"} {
		la, errA := source.List(ctx, builtin, prefix)
		lb, errB := source.List(ctx, plug, prefix)
		if kind(errA) != kind(errB) || !slices.Equal(la, lb) {
			t.Errorf("List(%q): built-in %v, %v; plugin %v, %v", prefix, la, errA, lb, errB)
		}
	}
}

// TestReplacedObject: a file replaced on the server by another of the same
// size after it was opened must fail the next read that needs a request (one
// past the first bytes, which Open fetched with the old version) as
// source.ErrChanged through the plugin, as it does through the built-in
// transport (the arbiter), never return bytes of the new file under the old
// version.
func TestReplacedObject(t *testing.T) {
	p := loadPlugin(t)
	dir := t.TempDir()
	name := filepath.Join(dir, "table.bin")
	old := bytes.Repeat([]byte("old!"), 64<<10) // 256 KiB: past what Open fetches
	if err := os.WriteFile(name, old, 0o644); err != nil {
		t.Fatal(err)
	}
	builtin, plug := bothTransports(t, p, mirrortest.Serve(t, dir))
	ctx := context.Background()
	var objs []source.Object
	for _, src := range []source.Source{builtin, plug} {
		o, err := src.Open(ctx, "table.bin")
		if err != nil {
			t.Fatal(err)
		}
		defer o.Close()
		buf := make([]byte, 8)
		if _, err := o.ReadAt(ctx, buf, 0, source.HintData); err != nil || !bytes.Equal(buf, old[:8]) {
			t.Fatalf("first read: %q, %v", buf, err)
		}
		objs = append(objs, o)
	}
	// Same size, other bytes, a later modification time: a new version.
	if err := os.WriteFile(name, bytes.Repeat([]byte("new!"), 64<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(name, later, later); err != nil {
		t.Fatal(err)
	}
	for i, o := range objs {
		buf := make([]byte, 8)
		n, err := o.ReadAt(ctx, buf, 200_000, source.HintData)
		if !errors.Is(err, source.ErrChanged) || !errors.Is(err, source.ErrPermanent) {
			t.Errorf("transport %d: read after replacement: %d bytes %q, %v; want ErrChanged", i, n, buf[:n], err)
		}
	}
}
