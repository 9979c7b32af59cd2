package fusefs_test

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tbfs/tbfs/fusefs"
	"github.com/tbfs/tbfs/source"
)

// mountOptions returns the options field of dir's line in /proc/mounts.
func mountOptions(t *testing.T, dir string) []string {
	t.Helper()
	f, err := os.Open("/proc/mounts")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 3 && fields[1] == dir {
			return strings.Split(fields[3], ",")
		}
	}
	t.Fatalf("%s is not in /proc/mounts", dir)
	return nil
}

// tableFolder writes a table folder with two table files and the kind of
// files an operator may leave beside them: a private key, cloud
// credentials, notes. Only the names chesstb reads are tables.
func tableFolder(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := []struct {
		name string
		mode os.FileMode
	}{
		{"wdl/KQK.lzw", 0o644},
		{"dtz/KQK.lzdtz", 0o600},
		{"dtm/KRK.lzdtm", 0o640},
		{"private.key", 0o600},
		{".aws/credentials", 0o600},
		{"wdl/notes.txt", 0o644},
	}
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, pattern(1000, 1), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, f.mode); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestReadOnly: the mount is read-only for the kernel (/proc/mounts says
// ro) and every change fails with EROFS, whatever it is aimed at; the
// entries are all still there afterwards. The arbiter is the errno the
// kernel defines for a write to a read-only file system.
func TestReadOnly(t *testing.T) {
	src := openDir(t, tableFolder(t))
	dir, _ := mount(t, fusefs.Config{Tables: []source.Source{src}})
	if opts := mountOptions(t, dir); len(opts) == 0 || opts[0] != "ro" {
		t.Errorf("/proc/mounts options %v, want ro first", opts)
	}
	targets := []string{"README", ".stats", "chess", "dtm", "tables", "tables/wdl", "tables/wdl/KQK.lzw"}
	changes := []struct {
		what string
		do   func(p string) error
	}{
		{"unlink", func(p string) error { return syscall.Unlink(p) }},
		{"rmdir", func(p string) error { return syscall.Rmdir(p) }},
		{"rename", func(p string) error { return os.Rename(p, p+".moved") }},
		{"chmod", func(p string) error { return os.Chmod(p, 0o777) }},
		{"chown", func(p string) error { return os.Chown(p, 1, 1) }},
		{"truncate file", func(p string) error { return os.Truncate(p, 0) }},
		{"open for writing file", func(p string) error {
			f, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err == nil {
				f.Close()
			}
			return err
		}},
		{"create inside", func(p string) error {
			f, err := os.Create(filepath.Join(p, "new"))
			if err == nil {
				f.Close()
			}
			return err
		}},
		{"mkdir inside", func(p string) error { return os.Mkdir(filepath.Join(p, "new"), 0o755) }},
		{"symlink inside", func(p string) error { return os.Symlink("/etc/passwd", filepath.Join(p, "new")) }},
	}
	for _, target := range targets {
		p := filepath.Join(dir, target)
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatalf("stat %s: %v", target, err)
		}
		for _, c := range changes {
			// A directory is refused EISDIR before EROFS, rightly.
			if strings.HasSuffix(c.what, "inside") && !fi.IsDir() || strings.HasSuffix(c.what, "file") && fi.IsDir() {
				continue
			}
			if err := c.do(p); !errors.Is(err, syscall.EROFS) {
				t.Errorf("%s %s: %v, want EROFS", c.what, target, err)
			}
		}
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s gone after the refused changes: %v", target, err)
		}
	}
}

// TestTablesOnlyTables: tables/ lists and serves the names the chess reader
// recognises and nothing else beside them, with read bits no wider than
// the source file's own (0600 gives 0400).
func TestTablesOnlyTables(t *testing.T) {
	dir, _ := mount(t, fusefs.Config{Tables: []source.Source{openDir(t, tableFolder(t))}})
	wantMode := map[string]os.FileMode{
		"wdl/KQK.lzw":   0o444,
		"dtz/KQK.lzdtz": 0o400,
		"dtm/KRK.lzdtm": 0o440,
	}
	for name, mode := range wantMode {
		fi, err := os.Stat(filepath.Join(dir, "tables", name))
		if err != nil {
			t.Errorf("tables/%s: %v", name, err)
			continue
		}
		if fi.Mode().Perm() != mode {
			t.Errorf("tables/%s mode %v, want %v", name, fi.Mode().Perm(), mode)
		}
	}
	for _, hidden := range []string{"private.key", ".aws", ".aws/credentials", "wdl/notes.txt"} {
		if _, err := os.Stat(filepath.Join(dir, "tables", hidden)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("tables/%s: %v, want not found", hidden, err)
		}
	}
	ents, err := os.ReadDir(filepath.Join(dir, "tables"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "dtm dtz wdl" {
		t.Errorf("tables/ lists %v, want [dtm dtz wdl]", names)
	}
}

// TestOwnerAndUmask: --uid, --gid and --umask set what every entry shows,
// and the umask only ever narrows the modes.
func TestOwnerAndUmask(t *testing.T) {
	dir, _ := mount(t, fusefs.Config{
		Tables: []source.Source{openDir(t, tableFolder(t))},
		Owner:  &fusefs.Owner{UID: 1234, GID: 5678},
		Umask:  0o027,
	})
	want := map[string]os.FileMode{
		"README":               0o440,
		".stats":               0o440,
		"chess":                os.ModeDir | 0o550,
		"tables/wdl":           os.ModeDir | 0o550,
		"tables/wdl/KQK.lzw":   0o440,
		"tables/dtz/KQK.lzdtz": 0o400,
	}
	for name, mode := range want {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		st := fi.Sys().(*syscall.Stat_t)
		if fi.Mode() != mode || st.Uid != 1234 || st.Gid != 5678 {
			t.Errorf("%s: mode %v uid %d gid %d, want %v 1234 5678", name, fi.Mode(), st.Uid, st.Gid, mode)
		}
	}
}

// TestAllowOtherReadOnly: with allow_other, another user (nobody) can read
// what the modes let everyone read, cannot read a table whose source is
// private to its owner, and cannot remove anything. It needs root, to run
// a command as nobody.
func TestAllowOtherReadOnly(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to act as another user")
	}
	dir := mountAllowOther(t, fusefs.Config{Tables: []source.Source{openDir(t, tableFolder(t))}})
	asNobody := func(args ...string) error {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.CombinedOutput()
		if err != nil {
			return errors.New(strings.TrimSpace(string(out)))
		}
		return nil
	}
	if err := asNobody("cat", filepath.Join(dir, "README")); err != nil {
		t.Errorf("nobody cannot read README: %v", err)
	}
	if err := asNobody("cat", filepath.Join(dir, "tables/dtz/KQK.lzdtz")); err == nil || !strings.Contains(err.Error(), "Permission denied") {
		t.Errorf("nobody reading a 0600 table: %v, want permission denied", err)
	}
	for _, p := range []string{"README", ".stats", "tables/wdl/KQK.lzw"} {
		if err := asNobody("rm", "-f", filepath.Join(dir, p)); err == nil || !strings.Contains(err.Error(), "Read-only file system") {
			t.Errorf("nobody removing %s: %v, want read-only file system", p, err)
		}
	}
	if err := asNobody("rmdir", filepath.Join(dir, "dtm")); err == nil || !strings.Contains(err.Error(), "Read-only file system") {
		t.Errorf("nobody removing dtm: %v, want read-only file system", err)
	}
}

// TestMountpointErrors: a missing mount point, a regular file and a
// directory with a mount on it are refused with an error naming the
// problem, and nothing is left mounted.
func TestMountpointErrors(t *testing.T) {
	base := t.TempDir()
	file := filepath.Join(base, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	busy, _ := mount(t, fusefs.Config{})
	cases := []struct {
		dir, want string
	}{
		{filepath.Join(base, "missing"), "does not exist"},
		{file, "is not a directory"},
		{busy, "already has a file system mounted"},
	}
	for _, c := range cases {
		_, err := fusefs.Mount(c.dir, fusefs.New(fusefs.Config{}), fusefs.MountOptions{})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.dir) {
			t.Errorf("Mount(%s) = %v, want an error naming it and saying %q", c.dir, err, c.want)
		}
	}
	for _, p := range []string{filepath.Join(base, "missing"), file} {
		if m, err := fusefs.IsMounted(p); err != nil || m {
			t.Errorf("%s mounted after a refused mount (%v)", p, err)
		}
	}
}
