// Package plugintest builds plugin binaries for tests: real executables,
// run as real subprocesses by the host.
package plugintest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/plugins"
	"github.com/tbfs/tbfs/plugins/host"
)

var (
	mu       sync.Mutex
	cacheDir string            // set by Main; binaries built once per test binary
	built    map[string]string // pkgDir → binary in cacheDir
)

// Main runs the tests of a package with a build cache: each plugin is
// built once per test binary instead of once per test, and the binaries are
// removed when the tests end. Call it from TestMain.
func Main(m *testing.M) {
	d, err := os.MkdirTemp("", "tbfs-plugintest-")
	if err == nil {
		mu.Lock()
		cacheDir, built = d, map[string]string{}
		mu.Unlock()
	}
	code := m.Run()
	if d != "" {
		os.RemoveAll(d)
	}
	os.Exit(code)
}

// Build compiles the main package at pkgDir (relative to the repository
// root, such as "plugins/ftp/cmd/tbfs-source-ftp") and places it at
// dir/binName, returning that path. The build is bounded in time; with Main
// it happens once per package and later calls link to the first binary.
func Build(t testing.TB, dir, pkgDir, binName string) string {
	t.Helper()
	out := filepath.Join(dir, binName)
	mu.Lock()
	defer mu.Unlock()
	if cacheDir == "" {
		compile(t, pkgDir, out)
		return out
	}
	bin, ok := built[pkgDir]
	if !ok {
		bin = filepath.Join(cacheDir, strings.ReplaceAll(pkgDir, "/", "_"))
		compile(t, pkgDir, bin)
		built[pkgDir] = bin
	}
	if err := os.Symlink(bin, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func compile(t testing.TB, pkgDir, out string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./"+pkgDir)
	cmd.Dir = testenv.RepoRoot(t)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkgDir, err, b)
	}
	// The host refuses group- or world-writable plugins; a permissive
	// umask must not make every test binary one.
	if err := os.Chmod(out, 0o755); err != nil {
		t.Fatal(err)
	}
}

// Load builds the plugin main package at pkgDir as dir/tbfs-source-<name>
// in a fresh plugin directory, discovers it with a new host (closed when the
// test ends) and returns the plugin, not yet running.
func Load(t testing.TB, pkgDir, name string, opts host.Options) *host.Plugin {
	t.Helper()
	dir := t.TempDir()
	Build(t, dir, pkgDir, plugins.BinaryPrefix+name)
	h := host.New(opts)
	t.Cleanup(func() { h.Close() })
	if err := h.Discover(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	p := h.Plugin(name)
	if p == nil {
		t.Fatalf("plugin %s not usable: %+v", name, h.Infos())
	}
	return p
}
