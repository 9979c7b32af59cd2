package tables_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/cmd/internal/tables"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// TestOpen opens a directory and the embedded fixtures; both list the
// same KQK WDL table (the fixtures are the repository's testdata/chesstb),
// and the embedded set's last location holds testdata/syzygy's KQvK.
func TestOpen(t *testing.T) {
	ctx := context.Background()
	t.Setenv("TBFS_PLUGIN_DIR", "")
	o, err := tables.NewOpener(ctx, tables.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	dir := testenv.Testdata(t, "chesstb")
	set, err := o.Open(ctx, []string{dir})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	emb, err := o.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	defer emb.Close()
	for _, s := range []tables.Set{set, emb} {
		obj, err := s[0].Open(ctx, "wdl/KQK.lzw")
		if err != nil {
			t.Fatalf("%s: %v", s[0].URL, err)
		}
		fi, err := os.Stat(filepath.Join(dir, "wdl", "KQK.lzw"))
		if err != nil || obj.Size() != fi.Size() {
			t.Errorf("%s: wdl/KQK.lzw has %d bytes, the file %v (%v)", s[0].URL, obj.Size(), fi.Size(), err)
		}
		obj.Close()
	}
	if got := set.URLs(); len(got) != 1 || got[0] != dir {
		t.Errorf("URLs = %v, want [%s]", got, dir)
	}
	// The embedded set ends with the Syzygy fixtures, after the chesstb
	// roots, as --tables would name them.
	last := emb[len(emb)-1]
	obj, err := last.Open(ctx, "KQvK.rtbw")
	if err != nil {
		t.Fatalf("%s: %v", last.URL, err)
	}
	defer obj.Close()
	fi, err := os.Stat(testenv.Testdata(t, "syzygy", "KQvK.rtbw"))
	if err != nil || obj.Size() != fi.Size() || len(emb) < 2 {
		t.Errorf("%s (of %d locations): KQvK.rtbw has %d bytes, the file %v (%v)", last.URL, len(emb), obj.Size(), fi.Size(), err)
	}
}

// TestUnknownScheme: a scheme no transport serves names the plugin binary
// that would serve it and where it must be, hides the password, and with a
// plugin directory says which directories were searched.
func TestUnknownScheme(t *testing.T) {
	ctx := context.Background()
	t.Setenv("TBFS_PLUGIN_DIR", "")
	for _, c := range []struct {
		dir  string
		want []string
	}{
		{"", []string{"tbfs-source-rsync", "--plugin-dir", "$TBFS_PLUGIN_DIR", "neither is set"}},
		{t.TempDir(), []string{"tbfs-source-rsync", "searched: "}},
	} {
		o, err := tables.NewOpener(ctx, tables.Options{PluginDir: c.dir})
		if err != nil {
			t.Fatal(err)
		}
		_, err = o.Open(ctx, []string{"rsync://me:pa55word@127.0.0.1/tables"})
		o.Close()
		if err == nil {
			t.Fatal("rsync:// opened")
		}
		msg := err.Error()
		for _, w := range append(c.want, c.dir) {
			if !strings.Contains(msg, w) {
				t.Errorf("error %q lacks %q", msg, w)
			}
		}
		if strings.Contains(msg, "pa55word") {
			t.Errorf("error shows the password: %s", msg)
		}
	}
	// A built-in scheme's failure is left as it is.
	o, _ := tables.NewOpener(ctx, tables.Options{})
	defer o.Close()
	_, err := o.Open(ctx, []string{filepath.Join(t.TempDir(), "missing")})
	if err == nil || strings.Contains(err.Error(), "plugin") {
		t.Errorf("missing directory: %v, want an error that is not about plugins", err)
	}
}

// TestRefusedPluginDir: a plugin directory that is a symbolic link stops
// the opener with an error naming it.
func TestRefusedPluginDir(t *testing.T) {
	t.Setenv("TBFS_PLUGIN_DIR", "")
	link := filepath.Join(t.TempDir(), "plugins")
	if err := os.Symlink(t.TempDir(), link); err != nil {
		t.Fatal(err)
	}
	_, err := tables.NewOpener(context.Background(), tables.Options{PluginDir: link})
	if err == nil || !strings.Contains(err.Error(), "symbolic link") || !strings.Contains(err.Error(), link) {
		t.Errorf("NewOpener(symlinked dir) = %v", err)
	}
}
