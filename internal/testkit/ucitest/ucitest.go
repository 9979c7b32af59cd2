// Package ucitest gives tests real UCI engine processes: the deliberately
// broken engine of internal/testkit/brokenuci, built for the test, and Stockfish
// where it is installed (always under CI, where .ci/run installs it).
package ucitest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// BrokenEngine builds internal/testkit/brokenuci into a temporary directory and
// returns the executable's path.
func BrokenEngine(t testing.TB) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	out := filepath.Join(t.TempDir(), "brokenuci")
	cmd := exec.Command(goTool, "build", "-o", out, "github.com/tbfs/tbfs/internal/testkit/brokenuci")
	cmd.Dir = testenv.RepoRoot(t)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the broken engine: %v\n%s", err, b)
	}
	return out
}

// Wrapper writes a shell script that runs engine with args, for front
// ends that take only an executable's path.
func Wrapper(t testing.TB, engine string, args ...string) string {
	t.Helper()
	script := "#!/bin/sh\nexec '" + engine + "'"
	for _, a := range args {
		script += " '" + a + "'"
	}
	p := filepath.Join(t.TempDir(), "engine.sh")
	if err := os.WriteFile(p, []byte(script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// Stockfish returns the path of Debian's stockfish (on PATH, or in
// /usr/games where the package puts it); the test is skipped when it is
// missing, and fails under CI.
func Stockfish(t testing.TB) string {
	t.Helper()
	if p, err := exec.LookPath("stockfish"); err == nil {
		return p
	}
	const debian = "/usr/games/stockfish"
	if _, err := os.Stat(debian); err == nil {
		return debian
	}
	testenv.Missing(t, "program stockfish (Debian package stockfish)")
	return ""
}
