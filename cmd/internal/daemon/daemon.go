// Package daemon runs a command in the background and returns once it says
// it is ready, as `tbfs mount --daemon` does: the caller learns whether the
// mount succeeded from the exit status, and the mount outlives it.
//
// The parent re-runs its own executable with the same arguments (minus the
// daemon flag) in a new session, and gives it one extra file: a pipe on
// which the child writes "ready" or the reason it failed. The child's
// standard streams are not the parent's, so the child never dies writing to
// a terminal or pipe that went away.
package daemon

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// envFD names the file descriptor of the status pipe in the child.
const envFD = "TBFS_DAEMON_STATUS_FD"

const readyWord = "ready"

// Start runs the current executable with args in the background and waits
// until it reports ready (Ready(nil)) or fails. Its stdout and stderr go to
// logPath (appended, created 0600), or are discarded when logPath is "".
// It returns the child's PID.
func Start(args []string, logPath string) (int, error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	defer r.Close()
	out, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if logPath != "" {
		out, err = os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	}
	if err != nil {
		w.Close()
		return 0, fmt.Errorf("log file: %w", err)
	}
	defer out.Close()
	cmd := exec.Command(exe, args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.ExtraFiles = []*os.File{w} // fd 3
	cmd.Env = append(os.Environ(), envFD+"=3")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return 0, err
	}
	w.Close() // the child holds the only write end now
	line, rerr := bufio.NewReader(io.LimitReader(r, 64<<10)).ReadString('\n')
	line = strings.TrimSpace(line)
	if line == readyWord {
		pid := cmd.Process.Pid
		cmd.Process.Release()
		return pid, nil
	}
	// The child failed or died before it was ready: reap it.
	werr := cmd.Wait()
	switch {
	case line != "":
		return 0, errors.New(line)
	case werr != nil:
		return 0, fmt.Errorf("background process exited before it was ready: %v", werr)
	case rerr != nil && rerr != io.EOF:
		return 0, rerr
	}
	return 0, errors.New("background process exited before it was ready")
}

// IsChild reports whether this process was started by Start.
func IsChild() bool { return os.Getenv(envFD) != "" }

// Ready tells the parent that started this process that it is ready (err
// nil) or why it is not. Outside a daemon child it does nothing. Call it
// once.
func Ready(err error) {
	v := os.Getenv(envFD)
	if v == "" {
		return
	}
	os.Unsetenv(envFD)
	fd, perr := strconv.Atoi(v)
	if perr != nil {
		return
	}
	f := os.NewFile(uintptr(fd), "daemon-status")
	if f == nil {
		return
	}
	defer f.Close()
	msg := readyWord
	if err != nil {
		msg = strings.ReplaceAll(err.Error(), "\n", " ")
	}
	fmt.Fprintln(f, msg)
}
