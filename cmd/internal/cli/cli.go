// Package cli holds the command-line conventions both binaries share, on
// spf13/cobra: exit statuses (0 done, 1 failed, 2 usage error), help on
// standard output, --version from the build info, shell completion, man
// pages, and the one parser of byte sizes every size flag uses.
package cli

import (
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// exitError carries a command's exit status through cobra's error return.
// The command has already said what went wrong.
type exitError int

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// Exit returns the error a RunE function returns to make the program exit
// with code; nil for 0.
func Exit(code int) error {
	if code == 0 {
		return nil
	}
	return exitError(code)
}

// Version is the program's version as the Go toolchain stamped it into the
// binary: the main module's version (a tag, or a pseudo-version derived from
// the VCS revision) and the Go release that built it.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	if v == "" || v == "(devel)" {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				v = "(devel) " + s.Value
			}
		}
	}
	return v + " " + bi.GoVersion
}

// Setup makes root behave as the project's programs do: --version and a
// version subcommand, help on standard output and lower-case "usage:",
// flag mistakes reported as usage errors, a "man DIR" subcommand writing
// the man pages, and (from cobra) "completion bash|zsh|fish|powershell".
// Execute runs it.
func Setup(root *cobra.Command) {
	root.Version = Version()
	root.SetVersionTemplate("{{.Name}} {{.Version}}\n")
	root.SilenceErrors = true
	root.SilenceUsage = true
	root.DisableAutoGenTag = true
	root.SetUsageTemplate(strings.Replace(root.UsageTemplate(), "Usage:", "usage:", 1))
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return err })
	root.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "Print the version (as --version does)",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintf(cmd.OutOrStdout(), "%s %s\n", root.Name(), root.Version)
		},
	})
	root.AddCommand(&cobra.Command{
		Use:   "man DIR",
		Short: "Write the man pages, one per command, into DIR",
		Long: "Writes a troff man page (section 1) for the program and for each of its\n" +
			"commands into DIR, creating it. The build runs this; the pages are what\n" +
			"-h prints, formatted for man(1).",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := WriteMan(root, args[0]); err != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "%s man: %v\n", root.Name(), err)
				return Exit(1)
			}
			return nil
		},
	})
}

// Execute runs root with args and returns the exit status: the status a
// command chose (Exit), or 2 after a usage error cobra or a flag found
// (unknown command or flag, bad flag value, wrong argument count), which
// is printed to standard error with a pointer to -h.
func Execute(root *cobra.Command, args []string) int {
	root.SetArgs(singleDashLongFlags(root, args))
	cmd, err := root.ExecuteC()
	if err == nil {
		return 0
	}
	var code exitError
	if errors.As(err, &code) {
		return int(code)
	}
	if cmd == nil {
		cmd = root
	}
	fmt.Fprintf(root.ErrOrStderr(), "%s: %v\nRun '%s -h' for usage.\n", cmd.CommandPath(), err, cmd.CommandPath())
	return 2
}

// singleDashLongFlags rewrites "-name" and "-name=value" to "--name..."
// where name is a long flag of some command in root's tree: the Go flag
// package, which both binaries used before cobra, takes either form, and
// scripts written then keep working. Arguments after "--", and words that
// name no flag (FENs, boards, negative numbers), are left alone.
func singleDashLongFlags(root *cobra.Command, args []string) []string {
	var long map[string]bool
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) { long[f.Name] = true })
		c.PersistentFlags().VisitAll(func(f *pflag.Flag) { long[f.Name] = true })
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	out := make([]string, len(args))
	for i, a := range args {
		if a == "--" {
			copy(out[i:], args[i:])
			break
		}
		out[i] = a
		if len(a) > 2 && a[0] == '-' && a[1] != '-' {
			name, _, _ := strings.Cut(a[1:], "=")
			if long == nil && len(name) > 1 {
				// Walking the tree costs more than the rest of a
				// short run; most command lines have no such word.
				long = map[string]bool{}
				walk(root)
			}
			if len(name) > 1 && long[name] {
				out[i] = "-" + a
			}
		}
	}
	return out
}

// UsageError prints msg and cmd's usage to standard error and returns the
// error for a usage mistake (exit status 2).
func UsageError(cmd *cobra.Command, format string, a ...any) error {
	w := cmd.ErrOrStderr()
	fmt.Fprintf(w, "%s: %s\n", cmd.CommandPath(), fmt.Sprintf(format, a...))
	fmt.Fprint(w, cmd.UsageString())
	return Exit(2)
}
