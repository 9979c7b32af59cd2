package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestWriteMan writes the pages of a small tree and reads them back the
// way man(1) does, through groff: one page per visible command, named by
// its command path (cobra/doc's names, which the README's man DIR
// promises), groff accepts every page without a warning, and the text a
// reader sees is the help text as written — a line starting with a dot or
// holding a backslash stays text, indented lines keep their indentation,
// visible flags are listed with their defaults, hidden ones are not.
func TestWriteMan(t *testing.T) {
	root := &cobra.Command{Use: "prog", Short: "Do things"}
	root.PersistentFlags().String("tables", "/srv/tb", "table `DIR`")
	sub := &cobra.Command{
		Use:   "sub [flags] FILE",
		Short: "Sub-command",
		Long: "First paragraph with a back\\slash.\n" +
			".starts with a dot\n\n" +
			"  indented   line kept\n" +
			"  second    indented line\n\n" +
			"Last paragraph.",
		Run: func(*cobra.Command, []string) {},
	}
	sub.Flags().Int("count", 3, "how many")
	sub.Flags().Bool("secret", false, "not for users")
	if err := sub.Flags().MarkHidden("secret"); err != nil {
		t.Fatal(err)
	}
	hidden := &cobra.Command{Use: "internal", Hidden: true, Run: func(*cobra.Command, []string) {}}
	root.AddCommand(sub, hidden)
	Setup(root)

	dir := t.TempDir()
	if err := WriteMan(root, dir); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	// Setup adds version and man; cobra adds completion (and its shells)
	// when the tree is executed, not here.
	want := []string{"prog-man.1", "prog-sub.1", "prog-version.1", "prog.1"}
	if !slices.Equal(names, want) {
		t.Fatalf("pages %v, want %v", names, want)
	}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(b), ".nh\n.TH \"PROG\" \"1\"") || !strings.Contains(string(b), ".SH NAME\n") {
			t.Errorf("%s: not a section 1 man page:\n%.200s", n, b)
		}
	}

	groff, err := exec.LookPath("groff")
	if err != nil {
		t.Skip("groff not installed: the pages' rendering is not checked")
	}
	var out, errs bytes.Buffer
	c := exec.Command(groff, "-man", "-Tutf8", "-ww", "-P-cbou", filepath.Join(dir, "prog-sub.1"))
	c.Stdout, c.Stderr = &out, &errs
	if err := c.Run(); err != nil || errs.Len() > 0 {
		t.Fatalf("groff: %v: %s", err, errs.String())
	}
	text := out.String()
	for _, s := range []string{
		"prog-sub - Sub-command",
		"prog sub [flags] FILE",
		`First paragraph with a back\slash.`,
		".starts with a dot",
		"  indented   line kept\n",
		"  second    indented line\n",
		"Last paragraph.",
		"--count",
		"how many (default 3)",
		"-h, --help",
		"--tables DIR",
		`table DIR (default "/srv/tb")`,
		"prog(1)",
	} {
		if !strings.Contains(text, s) {
			t.Errorf("rendered page lacks %q:\n%s", s, text)
		}
	}
	if strings.Contains(text, "secret") {
		t.Errorf("rendered page shows a hidden flag:\n%s", text)
	}
}
