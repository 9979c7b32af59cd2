package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// tbprobeBin is the binary built once for every end-to-end test.
var tbprobeBin string

// TestMain builds tbprobe once, so the end-to-end tests run the program a
// user runs: flags, exit status and output streams included.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tbprobe-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	tbprobeBin = filepath.Join(dir, "tbprobe")
	build := exec.Command("go", "build", "-o", tbprobeBin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0") // as README.md installs it
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building tbprobe:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// runResult is what one run of the binary produced.
type runResult struct {
	stdout, stderr string
	code           int
}

// runBin runs the built tbprobe with args and stdin in a fresh directory
// outside the repository, so the embedded fixture tables must answer by
// themselves.
func runBin(t *testing.T, stdin string, env []string, args ...string) runResult {
	t.Helper()
	cmd := exec.Command(tbprobeBin, args...)
	cmd.Dir = t.TempDir()
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("running tbprobe %q: %v", args, err)
		}
		code = ee.ExitCode()
	}
	return runResult{stdout: out.String(), stderr: errb.String(), code: code}
}
