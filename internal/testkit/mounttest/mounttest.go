// Package mounttest runs a mount command (tbfs mount) as a real process in
// tests, on a fresh mount point, and waits until it reports the mount
// ready. The kill and the detach-unmount are registered before the process
// starts, so a failing test leaves neither a mount nor a process behind.
package mounttest

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// Process is a running mount command.
type Process struct {
	// Cmd is the command; Dir its mount point; Stderr what it logged.
	Cmd    *exec.Cmd
	Dir    string
	Stderr *Log
	exited chan error
}

// Log collects what a process writes while a test may read it: the
// command's copying goroutine writes as the test formats a failure.
type Log struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// String returns everything written so far.
func (l *Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// Start runs `bin args... MOUNTPOINT` with env added to the environment,
// in a working directory outside the checkout, and returns once its first
// line of output says "mounted on MOUNTPOINT". It skips the test where
// FUSE is missing.
func Start(t *testing.T, bin string, env []string, args ...string) *Process {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		testenv.Missing(t, "/dev/fuse")
	}
	if os.Geteuid() != 0 {
		// Only root mounts directly; anyone else mounts through fuse3's
		// helper, which .ci/run installs.
		testenv.Tool(t, "fusermount3")
	}
	p := &Process{Dir: t.TempDir(), Stderr: new(Log), exited: make(chan error, 1)}
	t.Cleanup(func() {
		if p.Cmd != nil && p.Cmd.Process != nil {
			select {
			case err := <-p.exited:
				p.exited <- err
			default:
				p.Cmd.Process.Kill()
				<-p.exited
			}
		}
		if Mounted(t, p.Dir) {
			unix.Unmount(p.Dir, unix.MNT_DETACH)
		}
	})
	p.Cmd = exec.Command(bin, append(args, p.Dir)...)
	p.Cmd.Env = append(os.Environ(), env...)
	// Run outside the checkout, so nothing can depend on finding the
	// repository above the working directory.
	p.Cmd.Dir = t.TempDir()
	p.Cmd.Stderr = p.Stderr
	stdout, err := p.Cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		ready <- line
		io.Copy(io.Discard, stdout)
		p.exited <- p.Cmd.Wait()
	}()
	select {
	case line := <-ready:
		if !strings.Contains(line, "mounted on "+p.Dir) {
			<-p.exited
			t.Fatalf("%s did not mount: %q\n%s", bin, line, p.Stderr)
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("%s did not report a mount within 2 minutes\n%s", bin, p.Stderr)
	}
	return p
}

// Wait returns the process's exit status, failing the test if it does not
// exit within a minute.
func (p *Process) Wait(t *testing.T) int {
	t.Helper()
	select {
	case err := <-p.exited:
		p.exited <- err
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(time.Minute):
		t.Fatalf("%s did not exit within a minute\n%s", p.Cmd.Path, p.Stderr)
		return -1
	}
}

// Mounted reports whether dir is a mount point, from /proc/self/mountinfo.
func Mounted(t testing.TB, dir string) bool {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 4 && f[4] == dir {
			return true
		}
	}
	return false
}
