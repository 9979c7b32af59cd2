package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// procMountOptions returns the options of dir's line in /proc/mounts.
func procMountOptions(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile("/proc/mounts")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 3 && f[1] == dir {
			return f[3]
		}
	}
	return ""
}

// TestDaemon: --daemon returns once the mount answers, exit 0; the mount
// is read-only with the owner and modes asked for, answers the reference
// prober's value for the seed position, and goes away with tbfs unmount.
func TestDaemon(t *testing.T) {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		testenv.Missing(t, "/dev/fuse")
	}
	mnt := t.TempDir()
	var pid int
	t.Cleanup(func() {
		if mounted(t, mnt) {
			unix.Unmount(mnt, unix.MNT_DETACH)
		}
		if pid > 0 {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	cmd := exec.Command(binary(t), "mount", "--daemon", "--uid", "1234", "--gid", "5678", "--umask", "027",
		"--tables", testenv.Testdata(t, "chesstb"), mnt)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tbfs mount --daemon: %v\n%s%s", err, out, stderr.String())
	}
	m := regexp.MustCompile(`mounted on (.*) \(pid (\d+)\)`).FindSubmatch(out)
	if m == nil || string(m[1]) != mnt {
		t.Fatalf("tbfs mount --daemon printed %q", out)
	}
	pid, _ = strconv.Atoi(string(m[2]))
	// Ready means ready: no wait before the first read.
	b, err := os.ReadFile(filepath.Join(mnt, "wdl", seedFEN))
	if err != nil || string(b) != seedWDL {
		t.Fatalf("wdl/%s: %q, %v; want %q", seedFEN, b, err, seedWDL)
	}
	if opts := procMountOptions(t, mnt); !strings.HasPrefix(opts, "ro,") {
		t.Errorf("/proc/mounts options %q, want ro", opts)
	}
	fi, err := os.Stat(filepath.Join(mnt, "README"))
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != 1234 || st.Gid != 5678 || fi.Mode().Perm() != 0o440 {
		t.Errorf("README: uid %d gid %d mode %v; want 1234 5678 -r--r-----", st.Uid, st.Gid, fi.Mode().Perm())
	}
	if err := os.Remove(filepath.Join(mnt, "README")); !strings.Contains(errString(err), "read-only file system") {
		t.Errorf("rm README: %v, want read-only file system", err)
	}
	var errb bytes.Buffer
	if code := run([]string{"unmount", mnt}, new(bytes.Buffer), &errb); code != 0 {
		t.Fatalf("tbfs unmount: exit %d: %s", code, errb.String())
	}
	if mounted(t, mnt) {
		t.Errorf("%s still mounted after tbfs unmount", mnt)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestMountpointProblems: a missing mount point, a regular file, and a
// stale mount (its server killed) are refused with an error that names the
// problem, in the foreground and with --daemon, and no mount is left on
// the first two.
func TestMountpointProblems(t *testing.T) {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		testenv.Missing(t, "/dev/fuse")
	}
	base := t.TempDir()
	file := filepath.Join(base, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// A stale mount: the server dies without unmounting.
	stale, p := startMount(t, nil)
	p.Cmd.Process.Kill()
	p.Wait(t)
	cases := []struct {
		dir, want string
	}{
		{filepath.Join(base, "missing"), "does not exist"},
		{file, "is not a directory"},
		{stale, "stale FUSE mount"},
	}
	for _, c := range cases {
		for _, daemonFlag := range [][]string{nil, {"--daemon"}} {
			args := append(append([]string{"mount"}, daemonFlag...), c.dir)
			cmd := exec.Command(binary(t), args...)
			out, err := cmd.CombinedOutput()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), c.want) {
				t.Errorf("tbfs %v: %v, output %q; want exit 1 saying %q", args, err, out, c.want)
			}
		}
	}
	for _, p := range []string{file, filepath.Join(base, "missing")} {
		if mounted(t, p) {
			t.Errorf("%s mounted after a refused mount", p)
			unix.Unmount(p, unix.MNT_DETACH)
		}
	}
}

// TestUnknownSchemeNamesPlugin: a URL no built-in transport serves is
// refused with the plugin that would serve it and where to put it.
func TestUnknownSchemeNamesPlugin(t *testing.T) {
	t.Setenv("TBFS_PLUGIN_DIR", "")
	var out, errb bytes.Buffer
	code := run([]string{"mount", "--tables", "ftp://user:hunter2@127.0.0.1:1/tables/", t.TempDir()}, &out, &errb)
	msg := errb.String()
	for _, want := range []string{"tbfs-source-ftp", "--plugin-dir", "TBFS_PLUGIN_DIR", "plugins/ftp/cmd/tbfs-source-ftp"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q: %s", want, msg)
		}
	}
	if code != 1 || strings.Contains(msg, "hunter2") {
		t.Errorf("exit %d, message %q: want 1 and no password", code, msg)
	}
	first, _ := bufio.NewReader(strings.NewReader(msg)).ReadString('\n')
	if strings.Count(msg, "\n") > 1 {
		t.Errorf("error spans lines: %q", first)
	}
}
