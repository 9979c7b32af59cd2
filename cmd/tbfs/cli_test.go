package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// --version prints the main module's version from the build info; -h of
// every command goes to standard output with exit 0; completion and man
// pages generate.
func TestCommandLine(t *testing.T) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		t.Fatal("no build info")
	}
	man := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string // in standard output
	}{
		{[]string{"--version"}, "tbfs " + bi.Main.Version},
		{[]string{"version"}, "tbfs " + bi.Main.Version},
		{[]string{"-h"}, "usage:"},
		{[]string{"mount", "-h"}, "--cache-dir-size SIZE"},
		{[]string{"mount", "-h"}, "(default 1GiB)"},
		{[]string{"unmount", "-h"}, "unmount MOUNTPOINT"},
		{[]string{"completion", "bash"}, "__start_tbfs"},
		{[]string{"completion", "zsh"}, "#compdef tbfs"},
		{[]string{"completion", "fish"}, "complete -c tbfs"},
		{[]string{"man", man}, ""},
	} {
		var out, errb bytes.Buffer
		code := run(tc.args, &out, &errb)
		if code != 0 || errb.Len() != 0 || !strings.Contains(out.String(), tc.want) {
			t.Errorf("tbfs %v: exit %d, stderr %q, %q not in stdout %q", tc.args, code, errb.String(), tc.want, out.String())
		}
	}
	for _, page := range []string{"tbfs.1", "tbfs-mount.1", "tbfs-unmount.1"} {
		if b, err := os.ReadFile(filepath.Join(man, page)); err != nil || !bytes.Contains(b, []byte(".SH NAME")) {
			t.Errorf("man page %s: %v", page, err)
		}
	}
}
