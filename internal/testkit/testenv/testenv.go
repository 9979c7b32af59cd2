// Package testenv locates the files tests need: the repository root, the
// committed fixtures under testdata/, and the reference data in ../shared
// that CI always provides beside the clone.
package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	rootOnce sync.Once
	root     string
)

// RepoRoot returns the directory that holds go.mod, found by walking up from
// the working directory (go test runs tests in their package directory).
func RepoRoot(t testing.TB) string {
	t.Helper()
	rootOnce.Do(func() {
		dir, err := os.Getwd()
		if err != nil {
			return
		}
		for {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				root = dir
				return
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				return
			}
			dir = parent
		}
	})
	if root == "" {
		t.Fatal("testenv: no go.mod above the working directory")
	}
	return root
}

// Testdata returns the path of elem under the repository's testdata/.
func Testdata(t testing.TB, elem ...string) string {
	t.Helper()
	return filepath.Join(append([]string{RepoRoot(t), "testdata"}, elem...)...)
}

// InCI reports whether the tests run under CI, where every optional
// dependency (shared data, servers) must be present.
func InCI() bool { return os.Getenv("CI") != "" }

// Shared returns the path of elem under the reference data folder
// (../shared beside the repository, or $TBFS_SHARED). When it is missing the
// test is skipped on a developer machine and fails under CI, where it is
// always provided.
func Shared(t testing.TB, elem ...string) string {
	t.Helper()
	p := sharedPath(t, elem...)
	if _, err := os.Stat(p); err != nil {
		Missing(t, "reference data "+p)
	}
	return p
}

// HasShared reports whether the reference data elem is present, or must be
// (under CI, where a later Shared call then fails the test). Tests that add
// the shared data to what they would check anyway ask this first, so a
// fresh clone still runs their committed-fixture part.
func HasShared(t testing.TB, elem ...string) bool {
	t.Helper()
	_, err := os.Stat(sharedPath(t, elem...))
	return err == nil || InCI()
}

// sharedPath is elem under $TBFS_SHARED, or under ../shared beside the
// repository when that is unset.
func sharedPath(t testing.TB, elem ...string) string {
	t.Helper()
	base := os.Getenv("TBFS_SHARED")
	if base == "" {
		base = filepath.Join(RepoRoot(t), "..", "shared")
	}
	return filepath.Join(append([]string{base}, elem...)...)
}

// Tool returns the path of an external program the test needs (a server
// such as versitygw), failing under CI and skipping elsewhere when it is not
// installed. .ci/run installs every such tool. Besides PATH it looks in
// ~/go/bin (go install) and /usr/sbin (where Debian puts web servers, off
// an ordinary user's PATH).
func Tool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		for _, dir := range []string{filepath.Join(os.Getenv("HOME"), "go", "bin"), "/usr/sbin"} {
			alt := filepath.Join(dir, name)
			if fi, serr := os.Stat(alt); serr == nil && fi.Mode().IsRegular() {
				return alt
			}
		}
		Missing(t, "program "+name)
	}
	return p
}

// Missing skips the test outside CI and fails it under CI, naming what is
// missing.
func Missing(t testing.TB, what string) {
	t.Helper()
	if InCI() {
		t.Fatalf("%s is missing; CI must provide it", what)
	}
	t.Skipf("%s is missing (set CI=1 to make this a failure)", what)
}
