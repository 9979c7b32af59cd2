package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The man pages are written here rather than by cobra/doc: its Markdown
// step (go-md2man on blackfriday) links a Markdown parser whose package
// initialisation costs every run of both binaries ~0.7 ms, for a page
// that is written once per build. Our help texts are plain text, not
// Markdown: paragraphs separated by blank lines, indented lines kept as
// they are, which is also what -h shows.

// WriteMan writes root's man pages into dir: one page per available
// command, named as cobra/doc names them (tbprobe-geister-build.1).
func WriteMan(root *cobra.Command, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return writeManTree(root, dir, "tbfs "+root.Version)
}

func writeManTree(cmd *cobra.Command, dir, source string) error {
	for _, c := range cmd.Commands() {
		if !c.IsAvailableCommand() || c.IsAdditionalHelpTopicCommand() {
			continue
		}
		if err := writeManTree(c, dir, source); err != nil {
			return err
		}
	}
	cmd.InitDefaultHelpFlag() // cobra adds -h only to the command it runs
	page := strings.ReplaceAll(cmd.CommandPath(), " ", "-") + ".1"
	return os.WriteFile(filepath.Join(dir, page), []byte(manPage(cmd, source)), 0o644)
}

// manPage renders cmd as a man(7) page of section 1.
func manPage(cmd *cobra.Command, source string) string {
	var b strings.Builder
	name := strings.ReplaceAll(cmd.CommandPath(), " ", "-")
	fmt.Fprintf(&b, ".nh\n.TH \"%s\" \"1\" \"\" \"%s\" \"\"\n", roffEscape(strings.ToUpper(cmd.Root().Name())), roffEscape(source))
	fmt.Fprintf(&b, ".SH NAME\n%s \\- %s\n", roffEscape(name), roffEscape(cmd.Short))
	fmt.Fprintf(&b, ".SH SYNOPSIS\n\\fB%s\\fR\n", roffLine(cmd.UseLine()))
	long := cmd.Long
	if long == "" {
		long = cmd.Short
	}
	b.WriteString(".SH DESCRIPTION\n")
	manText(&b, long)
	manFlags(&b, "OPTIONS", cmd.NonInheritedFlags())
	manFlags(&b, "OPTIONS INHERITED FROM PARENT COMMANDS", cmd.InheritedFlags())
	if cmd.Example != "" {
		b.WriteString(".SH EXAMPLES\n")
		manText(&b, cmd.Example)
	}
	var see []string
	if cmd.HasParent() {
		see = append(see, strings.ReplaceAll(cmd.Parent().CommandPath(), " ", "-"))
	}
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() && !c.IsAdditionalHelpTopicCommand() {
			see = append(see, strings.ReplaceAll(c.CommandPath(), " ", "-"))
		}
	}
	if len(see) > 0 {
		b.WriteString(".SH SEE ALSO\n")
		for i, s := range see {
			sep := ",\n"
			if i == len(see)-1 {
				sep = "\n"
			}
			fmt.Fprintf(&b, ".BR %s (1)%s", roffEscape(s), sep)
		}
	}
	return b.String()
}

// manText writes plain help text: a blank line starts a paragraph, and a
// run of indented lines (tables, examples) is kept as written.
func manText(b *strings.Builder, text string) {
	verbatim := false
	for _, ln := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		indented := strings.HasPrefix(ln, " ") || strings.HasPrefix(ln, "\t")
		switch {
		case strings.TrimSpace(ln) == "":
			if verbatim {
				b.WriteString(".fi\n")
				verbatim = false
			}
			b.WriteString(".PP\n")
			continue
		case indented && !verbatim:
			b.WriteString(".nf\n")
			verbatim = true
		case !indented && verbatim:
			b.WriteString(".fi\n")
			verbatim = false
		}
		b.WriteString(roffLine(ln))
		b.WriteByte('\n')
	}
	if verbatim {
		b.WriteString(".fi\n")
	}
}

// manFlags writes the visible flags of fs as a tagged list under title.
func manFlags(b *strings.Builder, title string, fs *pflag.FlagSet) {
	first := true
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Deprecated != "" {
			return
		}
		if first {
			fmt.Fprintf(b, ".SH %s\n", title)
			first = false
		}
		varname, usage := pflag.UnquoteUsage(f)
		tag := `\fB\-\-` + roffEscape(f.Name) + `\fR`
		if f.Shorthand != "" && f.ShorthandDeprecated == "" {
			tag = `\fB\-` + roffEscape(f.Shorthand) + `\fR, ` + tag
		}
		if varname != "" {
			tag += ` \fI` + roffEscape(varname) + `\fR`
		}
		if def := flagDefault(f); def != "" {
			usage += " (default " + def + ")"
		}
		fmt.Fprintf(b, ".TP\n%s\n%s\n", tag, roffLine(usage))
	})
}

// flagDefault is f's default as pflag's usage shows it, "" for none.
func flagDefault(f *pflag.Flag) string {
	switch f.DefValue {
	case "", "0", "false", "[]", "0s":
		return ""
	}
	if f.Value.Type() == "string" {
		return fmt.Sprintf("%q", f.DefValue)
	}
	return f.DefValue
}

// roffEscape makes s literal text inside a roff line.
func roffEscape(s string) string {
	return strings.NewReplacer(`\`, `\e`, "-", `\-`).Replace(s)
}

// roffLine makes s a literal text line: a line starting with a dot or an
// apostrophe would be read as a request.
func roffLine(s string) string {
	s = roffEscape(s)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}
