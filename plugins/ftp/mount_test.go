package ftp_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/tbfs/tbfs/internal/testkit/chesstboracle"
	"github.com/tbfs/tbfs/internal/testkit/mounttest"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/plugins/internal/ftptest"
	"github.com/tbfs/tbfs/plugins/internal/plugintest"
)

// tbfsMount is a running `tbfs mount` over the FTP plugin.
type tbfsMount struct{ *mounttest.Process }

// startTbfs builds tbfs and the FTP plugin, runs `tbfs mount --plugin-dir
// D args... MNT` and returns once it reports the mount ready.
// With pin, the plugin runs pinned to its SHA-256 (--plugin-sha256).
func startTbfs(t *testing.T, pin bool, args ...string) *tbfsMount {
	t.Helper()
	pluginDir := t.TempDir()
	plugin := plugintest.Build(t, pluginDir, "plugins/ftp/cmd/tbfs-source-ftp", "tbfs-source-ftp")
	bin := plugintest.Build(t, t.TempDir(), "cmd/tbfs", "tbfs")
	if pin {
		args = append([]string{"--plugin-sha256", "ftp=" + fileSHA256(t, plugin)}, args...)
	}
	args = append([]string{"mount", "--plugin-dir", pluginDir}, args...)
	return &tbfsMount{mounttest.Start(t, bin, []string{"TBFS_PLUGIN_DIR="}, args...)}
}

// fileSHA256 is the hex SHA-256 of a file's content (crypto/sha256, the
// arbiter of a pin).
func fileSHA256(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TestMountPluginPinMismatch: a plugin whose binary does not have the
// pinned SHA-256 is never run, and the mount fails naming the mismatch,
// with nothing mounted.
func TestMountPluginPinMismatch(t *testing.T) {
	pluginDir := t.TempDir()
	plugin := plugintest.Build(t, pluginDir, "plugins/ftp/cmd/tbfs-source-ftp", "tbfs-source-ftp")
	bin := plugintest.Build(t, t.TempDir(), "cmd/tbfs", "tbfs")
	sum := []byte(fileSHA256(t, plugin))
	if sum[0] == '0' {
		sum[0] = '1'
	} else {
		sum[0] = '0'
	}
	mnt := t.TempDir()
	t.Cleanup(func() { unix.Unmount(mnt, unix.MNT_DETACH) })
	cmd := exec.Command(bin, "mount", "--plugin-dir", pluginDir, "--plugin-sha256", "ftp="+string(sum),
		"--tables", ftptest.URL(ftptest.Serve(t, testenv.Testdata(t, "chesstb"))), mnt)
	cmd.Env = append(os.Environ(), "TBFS_PLUGIN_DIR=")
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "SHA-256 does not match") {
		t.Fatalf("tbfs mount with a wrong pin: %v, output %q; want exit 1 naming the mismatch", err, out)
	}
	if strings.Contains(string(out), ftptest.Password) {
		t.Errorf("output shows the FTP password: %s", out)
	}
}

// pluginPID finds the running FTP plugin among the mount's children.
func (m *tbfsMount) pluginPID(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so split after
		// its closing parenthesis.
		rest := string(stat[bytes.LastIndexByte(stat, ')')+1:])
		f := strings.Fields(rest)
		if len(f) < 2 || f[1] != strconv.Itoa(m.Cmd.Process.Pid) || f[0] == "Z" {
			// A killed plugin not yet reaped is no running one.
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if bytes.Contains(cmdline, []byte("tbfs-source-ftp")) {
			return pid
		}
	}
	t.Fatalf("no running tbfs-source-ftp child of tbfs (pid %d)\n%s", m.Cmd.Process.Pid, m.Stderr)
	return 0
}

// checkRows reads each row's wdl/ and dtm/ files (and dtz/ where the mount
// has one) and compares them with the reference prober's values; it
// returns the number of mismatches.
func (m *tbfsMount) checkRows(t *testing.T, rows []chesstboracle.Row) int {
	t.Helper()
	bad := 0
	for _, r := range rows {
		wdl, dtz, dtm := r.Want(t)
		want := map[string]*int{"wdl": &wdl, "dtm": dtm, "dtz": dtz}
		for _, view := range []string{"wdl", "dtm", "dtz"} {
			b, err := os.ReadFile(filepath.Join(m.Dir, view, r.FEN))
			w := want[view]
			switch {
			case view == "dtz" && errors.Is(err, os.ErrNotExist):
				// Some DTZ values live only in a DTC pack the plain
				// probe does not read; absence is no wrong value.
			case err != nil:
				bad++
				t.Errorf("%s %s/%s: %v", r.Where, view, r.FEN, err)
			case w == nil && view == "dtm":
				// The reference has no DTM here; ours must then be no mate.
				if strings.TrimSpace(string(b)) != "0" {
					bad++
					t.Errorf("%s dtm/%s = %q where the reference has none", r.Where, r.FEN, b)
				}
			case w == nil:
				bad++
				t.Errorf("%s %s/%s = %q where the reference has none", r.Where, view, r.FEN, b)
			case strings.TrimSpace(string(b)) != strconv.Itoa(*w):
				bad++
				t.Errorf("%s %s/%s = %q, reference %d", r.Where, view, r.FEN, b, *w)
			}
		}
	}
	return bad
}

// TestMountOverFTPPlugin mounts the fixture tables served by a real FTP
// server on loopback through the tbfs-source-ftp plugin, has a reader hold
// the largest fixture table open and read its start, kills the plugin with
// SIGKILL, and checks that the rest of the held file and the oracle rows
// still read right: the host restarts the plugin, as it does under tbprobe.
// Expected values are the reference prober's
// (testdata/chesstb/oracle/probe.tsv) and the table file's own bytes.
func TestMountOverFTPPlugin(t *testing.T) {
	dir := testenv.Testdata(t, "chesstb")
	var rows []chesstboracle.Row
	for _, r := range chesstboracle.Read(t, filepath.Join(dir, "oracle", "probe.tsv")) {
		if r.HasForm("shipped") {
			rows = append(rows, r)
		}
	}
	// Every row goes through the plugin with a 1 MiB cache, a few FTP
	// transfers each: an even spread of 300 (100 under -race or -short)
	// keeps the test within half a minute; the in-process sweeps
	// (TestChesstbOracleFixture) read every row through the same plugin.
	n := 300
	if raceEnabled || testing.Short() {
		n = 100
	}
	rows = chesstboracle.Sample(rows, n, true)
	if len(rows) == 0 {
		t.Fatal("no oracle rows")
	}
	m := startTbfs(t, true, "--tables", ftptest.URL(ftptest.Serve(t, dir)), "--cache-size", "1MiB")

	// A reader holds the largest fixture table open and reads its first
	// page before the kill, before any row is probed: tbfs has then read
	// that page and what the kernel read ahead of it (128 KiB by default),
	// so most of the 420 KiB rest must come through a new plugin process
	// after the kill.
	const table = "dtm/KQKR.lzdtm"
	want, err := os.ReadFile(filepath.Join(dir, table))
	if err != nil {
		t.Fatal(err)
	}
	if len(want) < 256<<10 {
		t.Fatalf("%s has %d bytes: too few to need reads after the kill", table, len(want))
	}
	f, err := os.Open(filepath.Join(m.Dir, "tables", table))
	if err != nil {
		t.Fatalf("%v\n%s", err, m.Stderr)
	}
	defer f.Close()
	head := make([]byte, 4096)
	if _, err := io.ReadFull(f, head); err != nil || !bytes.Equal(head, want[:len(head)]) {
		t.Fatalf("tables/%s start: %v", table, err)
	}
	pid := m.pluginPID(t)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(f)
	if err != nil || !bytes.Equal(append(head, rest...), want) {
		t.Fatalf("tables/%s after the plugin was killed: %d bytes, %v\n%s", table, len(head)+len(rest), err, m.Stderr)
	}
	// The host starts a plugin only when a read needs one: a new process
	// shows that the rest of the held file was read through it.
	if again := m.pluginPID(t); again == pid {
		t.Errorf("plugin pid %d unchanged after SIGKILL", pid)
	}
	bad := m.checkRows(t, rows)
	t.Logf("tables/%s read across a plugin kill (%d bytes before, %d after); %d oracle rows read through the mount after, %d mismatches",
		table, len(head), len(rest), len(rows), bad)
	m.Cmd.Process.Signal(syscall.SIGTERM)
	if code := m.Wait(t); code != 0 {
		t.Errorf("tbfs exit %d after SIGTERM\n%s", code, m.Stderr)
	}
}
