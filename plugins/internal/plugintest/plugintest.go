// Package plugintest builds plugin binaries for tests: real executables,
// run as real subprocesses by the host.
package plugintest

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/tbfs/tbfs/internal/testenv"
	"github.com/tbfs/tbfs/plugins"
	"github.com/tbfs/tbfs/plugins/host"
)

// Build compiles the main package at pkgDir (relative to the repository
// root, such as "plugins/ftp/cmd/tbfs-source-ftp") into dir/binName and
// returns the binary's path. The build is bounded in time.
func Build(t testing.TB, dir, pkgDir, binName string) string {
	t.Helper()
	out := filepath.Join(dir, binName)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./"+pkgDir)
	cmd.Dir = testenv.RepoRoot(t)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkgDir, err, b)
	}
	return out
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
