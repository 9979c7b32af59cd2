package main

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// --version and the version subcommand print the main module's version as
// the Go toolchain recorded it in the binary (go version -m is the arbiter).
func TestVersion(t *testing.T) {
	out, err := exec.Command("go", "version", "-m", tbprobeBin).Output()
	if err != nil {
		t.Fatal(err)
	}
	var want string
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) >= 3 && f[0] == "mod" {
			want = f[2]
		}
	}
	if want == "" {
		t.Fatalf("go version -m shows no main module:\n%s", out)
	}
	for _, args := range [][]string{{"--version"}, {"version"}} {
		res := runBin(t, "", nil, args...)
		if res.code != 0 || !strings.HasPrefix(res.stdout, "tbprobe "+want) {
			t.Errorf("tbprobe %v: exit %d, stdout %q; want 0 and %q", args, res.code, res.stdout, "tbprobe "+want)
		}
	}
}

// A run naming a subcommand builds only that one (subcommandsFor), found
// by the name in the subcommands table: each entry's name must be the one
// its command answers to, and the table must hold every command the full
// tree has beside the probe and cli.Setup's (the arbiter is cobra's own
// lookup, root.Find, on the full tree).
func TestSubcommandsByName(t *testing.T) {
	full := newRootCmd(context.Background(), nil, io.Discard, io.Discard, subcommandsFor(nil)...)
	named := map[string]bool{}
	for _, s := range subcommands {
		named[s.name] = true
		got := subcommandsFor([]string{s.name, "-h"})
		if len(got) != 1 || got[0].Name() != s.name {
			t.Errorf("subcommandsFor(%q) = %d commands, want the one named %q", s.name, len(got), s.name)
		}
		if c, _, err := full.Find([]string{s.name}); err != nil || c.Name() != s.name {
			t.Errorf("the full tree finds %v (%v) for %q", c.Name(), err, s.name)
		}
	}
	for _, c := range full.Commands() {
		if !named[c.Name()] && c.Name() != "version" && c.Name() != "man" {
			t.Errorf("command %q is not in the subcommands table", c.Name())
		}
	}
	if got := subcommandsFor([]string{"version"}); len(got) != 0 {
		t.Errorf("subcommandsFor(version) builds %d commands, want none", len(got))
	}
}

// Every command's -h goes to standard output, exits 0 and names every one
// of the command's flags (the arbiter is the flag set itself).
func TestHelpEveryCommand(t *testing.T) {
	root := newRootCmd(context.Background(), nil, io.Discard, io.Discard, subcommandsFor(nil)...)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden {
			return
		}
		path := strings.Fields(c.CommandPath())[1:]
		res := runBin(t, "", nil, append(path, "-h")...)
		if res.code != 0 || res.stderr != "" {
			t.Errorf("tbprobe %v -h: exit %d, stderr %q; want 0 and nothing", path, res.code, res.stderr)
		}
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if !strings.Contains(res.stdout, "--"+f.Name) {
				t.Errorf("tbprobe %v -h does not describe --%s:\n%s", path, f.Name, res.stdout)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// Sizes print in binary units in help texts, as the flag's default.
func TestHelpHumanDefaults(t *testing.T) {
	res := runBin(t, "", nil, "-h")
	if !strings.Contains(res.stdout, "(default 64MiB)") || strings.Contains(res.stdout, "67108864") {
		t.Errorf("tbprobe -h does not print the cache default as 64MiB:\n%s", res.stdout)
	}
}

// The completion scripts generate for each shell, each in its own syntax.
func TestCompletion(t *testing.T) {
	for shell, marker := range map[string]string{
		"bash": "complete -o default -F __start_tbprobe tbprobe",
		"zsh":  "#compdef tbprobe",
		"fish": "complete -c tbprobe",
	} {
		res := runBin(t, "", nil, "completion", shell)
		if res.code != 0 || !strings.Contains(res.stdout, marker) {
			t.Errorf("tbprobe completion %s: exit %d, no %q in %d bytes; stderr %s", shell, res.code, marker, len(res.stdout), res.stderr)
		}
	}
}

// "tbprobe man DIR" writes a man page per command, each a troff page with
// a NAME section; every command that opens tables lists --manifests.
func TestManPages(t *testing.T) {
	dir := t.TempDir()
	res := runBin(t, "", nil, "man", dir)
	if res.code != 0 {
		t.Fatalf("tbprobe man: exit %d: %s", res.code, res.stderr)
	}
	const manifests = `\fB\-\-manifests\fR`
	for page, want := range map[string]string{
		"tbprobe.1": manifests, "tbprobe-serve.1": manifests, "tbprobe-geister.1": manifests,
		"tbprobe-geister-build.1": "", "tbprobe-geister-play.1": manifests, "tbprobe-geister-verify.1": manifests,
		"tbprobe-completion-bash.1": "",
	} {
		b, err := os.ReadFile(filepath.Join(dir, page))
		if err != nil {
			t.Errorf("man page %s: %v", page, err)
			continue
		}
		if !strings.Contains(string(b), ".SH NAME") || !strings.HasPrefix(string(b), ".nh\n.TH") {
			t.Errorf("man page %s is not a troff page:\n%.300s", page, b)
		}
		if !strings.Contains(string(b), want) {
			t.Errorf("man page %s does not list %s", page, want)
		}
	}
}

// Usage mistakes exit 2 with the reason on standard error; a FEN with no
// subcommand is still probed.
func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"--nope"}, {"serve", "--listen"}, {"--cache-size", "lots", "8/8/8/5k2/8/8/1Q6/K7 w - - 0 1"}, {"ls", "extra"}} {
		res := runBin(t, "", nil, args...)
		if res.code != 2 || res.stderr == "" || res.stdout != "" {
			t.Errorf("tbprobe %q: exit %d, stdout %q, stderr %q; want 2 and a reason on stderr", args, res.code, res.stdout, res.stderr)
		}
	}
	res := runBin(t, "", nil, "8/8/8/5k2/8/8/1Q6/K7 w - - 0 1", "--json")
	if res.code != 0 || !strings.Contains(res.stdout, `"wdl":2`) {
		t.Errorf("tbprobe FEN --json: exit %d, %s %s", res.code, res.stdout, res.stderr)
	}
}

// Flags written with one dash, as the Go flag package took them before
// the move to cobra, still work (scripts written then), while a FEN, a
// negative number and anything after "--" are left as they are.
func TestSingleDashLongFlags(t *testing.T) {
	res := runBin(t, "", nil, "-json", "-hmc=0", "-parallel", "1", "8/8/8/5k2/8/8/1Q6/K7 w - - 0 1")
	if res.code != 0 || !strings.Contains(res.stdout, `"wdl":2`) {
		t.Errorf("tbprobe -json -hmc=0 -parallel 1 FEN: exit %d, %s %s", res.code, res.stdout, res.stderr)
	}
	res = runBin(t, "", nil, "mate", "-max", "1", "-json", "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1")
	if res.code != 0 || !strings.Contains(res.stdout, `"result":"mate"`) {
		t.Errorf("tbprobe mate -max 1 -json: exit %d, %s %s", res.code, res.stdout, res.stderr)
	}
	if res := runBin(t, "", nil, "--hmc", "-1", "8/8/8/5k2/8/8/1Q6/K7 w - - 0 1"); res.code != 0 {
		t.Errorf("--hmc -1: exit %d, %s", res.code, res.stderr)
	}
}

// The systemd unit in docs/systemd starts a command line serve accepts:
// its ExecStart names the serve command and flags that exist, with values
// they parse.
func TestSystemdUnitCommandLine(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "systemd", "tbprobe.service"))
	if err != nil {
		t.Fatal(err)
	}
	var argv []string
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "ExecStart="); ok {
			argv = strings.Fields(rest)[1:]
		}
	}
	if len(argv) == 0 {
		t.Fatal("no ExecStart in tbprobe.service")
	}
	root := newRootCmd(context.Background(), nil, io.Discard, io.Discard, subcommandsFor(nil)...)
	cmd, rest, err := root.Find(argv)
	if err != nil || cmd.Name() != "serve" {
		t.Fatalf("ExecStart %q runs %v (%v), want serve", argv, cmd.Name(), err)
	}
	if err := cmd.ParseFlags(rest); err != nil || cmd.Flags().NArg() != 0 {
		t.Errorf("serve does not accept %q: %v", rest, err)
	}
}
