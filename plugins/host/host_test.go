package host_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"flag"
	"io"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"golang.org/x/sys/unix"

	"github.com/tbfs/tbfs/plugins/host"
	"github.com/tbfs/tbfs/plugins/internal/plugintest"
	"github.com/tbfs/tbfs/source"
)

// bins builds the test plugins (once per test binary, see
// plugintest.Main) into a directory and returns it.
func bins(t testing.TB) string {
	t.Helper()
	d := t.TempDir()
	plugintest.Build(t, d, "testdata/plugins/faulty", "tbfs-source-faulty")
	plugintest.Build(t, d, "testdata/plugins/bad", "bad")
	return d
}

func TestMain(m *testing.M) { plugintest.Main(m) }

// pluginDir makes a plugin directory holding links to the named built
// binaries (name → file in bins).
func pluginDir(t *testing.T, links map[string]string) string {
	t.Helper()
	src := bins(t)
	dir := t.TempDir()
	for name, bin := range links {
		if err := os.Symlink(filepath.Join(src, bin), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// logSink is a host logger whose lines a test can wait for.
type logSink struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	waits map[string]chan struct{}
}

func newLogSink() *logSink { return &logSink{waits: map[string]chan struct{}{}} }

func (l *logSink) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	for s, ch := range l.waits {
		if strings.Contains(l.buf.String(), s) {
			close(ch)
			delete(l.waits, s)
		}
	}
	return len(p), nil
}

// wait returns a channel closed once a line containing s was logged after
// the call.
func (l *logSink) wait(s string) <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Reset()
	ch := make(chan struct{})
	l.waits[s] = ch
	return ch
}

func (l *logSink) logger() hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: "host", Level: hclog.Debug, Output: l})
}

func writeFile(t *testing.T, dir, name string, data []byte) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDiscover loads a directory with good and broken plugins: the good one
// is found with its scheme, each broken one is refused with a message that
// says why, and the rest of the directory is ignored.
func TestDiscover(t *testing.T) {
	dir := pluginDir(t, map[string]string{
		"tbfs-source-faulty":     "tbfs-source-faulty",
		"tbfs-source-badversion": "bad",
		"tbfs-source-badcookie":  "bad",
		"unrelated-binary":       "bad",
	})
	writeFile(t, dir, "tbfs-source-notexec", []byte("#!/bin/sh\n"))
	junk := filepath.Join(dir, "tbfs-source-junk")
	if err := os.WriteFile(junk, []byte("#!/bin/sh\necho this is not a plugin\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	h, err := host.Load(context.Background(), dir, host.Options{StartTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	want := map[string]string{ // name → "" for usable, else a word its error must contain
		"faulty":     "",
		"badversion": "protocol version",
		"badcookie":  "refused",
		"notexec":    "not executable",
		"junk":       "refused",
	}
	infos := h.Infos()
	if len(infos) != len(want) {
		t.Errorf("found %d plugins, want %d: %+v", len(infos), len(want), infos)
	}
	for _, info := range infos {
		w, ok := want[info.Name]
		switch {
		case !ok:
			t.Errorf("unexpected plugin %q", info.Name)
		case w == "" && info.Err != nil:
			t.Errorf("plugin %s: %v", info.Name, info.Err)
		case w == "" && (len(info.Schemes) != 1 || info.Schemes[0] != "faulty"):
			t.Errorf("plugin %s serves %v, want [faulty]", info.Name, info.Schemes)
		case w != "" && (info.Err == nil || !strings.Contains(info.Err.Error(), w)):
			t.Errorf("plugin %s: err = %v, want one mentioning %q", info.Name, info.Err, w)
		}
	}
	if p := h.Plugin("faulty"); p == nil || p.PID() != 0 {
		t.Errorf("faulty plugin should be found and not running before first use")
	}
	for _, info := range infos {
		line := info.String()
		if !strings.HasPrefix(line, info.Name+"\t") {
			t.Errorf("listing line %q does not start with the name", line)
		}
		if info.Name == "faulty" && !strings.Contains(line, "\tfaulty*\t") {
			t.Errorf("listing line %q does not show the registered scheme", line)
		}
	}
}

// TestBadVersionMessage: the refusal of a plugin of another protocol
// version names both versions.
func TestBadVersionMessage(t *testing.T) {
	dir := pluginDir(t, map[string]string{"tbfs-source-badversion": "bad"})
	h := host.New(host.Options{})
	defer h.Close()
	if err := h.Discover(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	infos := h.Infos()
	if len(infos) != 1 || infos[0].Err == nil {
		t.Fatalf("infos = %+v, want one refused plugin", infos)
	}
	msg := infos[0].Err.Error()
	for _, s := range []string{"ncompatible API version", "99", "protocol 1"} {
		if !strings.Contains(msg, s) {
			t.Errorf("refusal %q does not mention %q", msg, s)
		}
	}
	if !errors.Is(infos[0].Err, source.ErrPermanent) {
		t.Errorf("refusal is not permanent: %v", infos[0].Err)
	}
}

// faultyHost loads the faulty plugin with the given timeouts and opens a
// source on a directory holding "a.bin" and "hang/x".
func faultyHost(t *testing.T, opts host.Options) (*host.Plugin, source.Source, []byte) {
	t.Helper()
	dir := pluginDir(t, map[string]string{"tbfs-source-faulty": "tbfs-source-faulty"})
	data := t.TempDir()
	content := bytes.Repeat([]byte("tbfs plugin fault test\n"), 1000)
	writeFile(t, data, "a.bin", content)
	writeFile(t, data, "hang/x", content)
	h := host.New(opts)
	t.Cleanup(func() { h.Close() })
	if err := h.Discover(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	p := h.Plugin("faulty")
	if p == nil {
		t.Fatalf("faulty plugin not usable: %+v", h.Infos())
	}
	src, err := p.OpenURL(context.Background(), "faulty://"+data)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return p, src, content
}

func readAt(ctx context.Context, obj source.Object, n int, off int64) ([]byte, error) {
	buf := make([]byte, n)
	got, err := obj.ReadAt(ctx, buf, off, source.HintData)
	return buf[:got], err
}

// TestKillMidRead kills the plugin process by its PID while a read is in
// flight in it: the read fails with ErrTransient (because the connection
// broke, not because the deadline passed), the next use starts a new
// process, objects opened before the crash keep working, and the restart
// is counted.
func TestKillMidRead(t *testing.T) {
	logs := newLogSink()
	p, src, content := faultyHost(t, host.Options{Logger: logs.logger(), CallTimeout: 2 * time.Minute})
	ctx := context.Background()
	good, err := src.Open(ctx, "a.bin")
	if err != nil {
		t.Fatal(err)
	}
	defer good.Close()
	hang, err := src.Open(ctx, "hang/x")
	if err != nil {
		t.Fatal(err)
	}
	defer hang.Close()
	pid := p.PID()
	if pid == 0 {
		t.Fatal("no plugin process after open")
	}
	blocked := logs.wait("read blocked")
	done := make(chan error, 1)
	go func() {
		_, err := readAt(ctx, hang, 100, 0)
		done <- err
	}()
	// The plugin's log line, carried through the host's logger, says the
	// read has reached it.
	<-blocked
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err = <-done
	if !errors.Is(err, source.ErrTransient) {
		t.Fatalf("read in flight during the kill: err = %v, want ErrTransient", err)
	}
	if strings.Contains(err.Error(), "did not answer within") {
		t.Errorf("the crash was noticed only by the deadline: %v", err)
	}
	got, err := readAt(ctx, good, 50, 100)
	if err != nil {
		t.Fatalf("read after the crash: %v", err)
	}
	if !bytes.Equal(got, content[100:150]) {
		t.Error("read after the restart returned the wrong bytes")
	}
	if np := p.PID(); np == 0 || np == pid {
		t.Errorf("PID after restart = %d (was %d), want a new process", np, pid)
	}
	st := p.Stats()
	if st.Restarts != 1 || st.Failures != 1 {
		t.Errorf("stats after one crash: %+v, want 1 restart and 1 failure", st)
	}
}

// stop hangs the plugin process pid with SIGSTOP and returns once the
// kernel reports it stopped. kill(2) returns before every thread has
// stopped: a thread the signal did not pick keeps running until the group
// stop reaches it, and on a busy machine it may still answer a request.
// The test process started the plugin, so it may wait for the stop; WNOWAIT
// leaves the state for anyone else waiting.
func stop(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WSTOPPED|unix.WNOWAIT, nil)
		if err == nil {
			return
		}
		if err != unix.EINTR {
			t.Fatalf("waiting for plugin process %d to stop: %v", pid, err)
		}
	}
}

// TestHungPlugin stops the plugin process (SIGSTOP) so it answers nothing:
// a read fails with ErrTransient after the call deadline and the failed
// health check, the hung process is killed, and the next read runs on a new
// process.
func TestHungPlugin(t *testing.T) {
	p, src, content := faultyHost(t, host.Options{CallTimeout: time.Second, HealthTimeout: time.Second})
	ctx := context.Background()
	obj, err := src.Open(ctx, "a.bin")
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	pid := p.PID()
	stop(t, pid)
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	_, err = readAt(ctx, obj, 10, 0)
	if !errors.Is(err, source.ErrTransient) {
		t.Fatalf("read from a hung plugin: err = %v, want ErrTransient", err)
	}
	got, err := readAt(ctx, obj, 10, 5)
	if err != nil {
		t.Fatalf("read after the hang: %v", err)
	}
	if !bytes.Equal(got, content[5:15]) {
		t.Error("read after the restart returned the wrong bytes")
	}
	if st := p.Stats(); st.Restarts != 1 {
		t.Errorf("stats: %+v, want 1 restart", st)
	}
}

// TestCallerCancel: a caller's cancellation ends a read stuck in the plugin
// with the context's error, and does not count as a plugin failure.
func TestCallerCancel(t *testing.T) {
	logs := newLogSink()
	p, src, _ := faultyHost(t, host.Options{Logger: logs.logger()})
	ctx, cancel := context.WithCancel(context.Background())
	hang, err := src.Open(ctx, "hang/x")
	if err != nil {
		t.Fatal(err)
	}
	blocked := logs.wait("read blocked")
	done := make(chan error, 1)
	go func() {
		_, err := readAt(ctx, hang, 10, 0)
		done <- err
	}()
	<-blocked
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled read: err = %v, want context.Canceled", err)
	}
	if st := p.Stats(); st.Failures != 0 {
		t.Errorf("a cancelled read counted as a plugin failure: %+v", st)
	}
}

// TestChecksum: with --plugin-sha256 a plugin runs only if its binary has
// the configured SHA-256; the arbiter is crypto/sha256 of the file.
func TestChecksum(t *testing.T) {
	dir := pluginDir(t, map[string]string{"tbfs-source-faulty": "tbfs-source-faulty"})
	b, err := os.ReadFile(filepath.Join(dir, "tbfs-source-faulty"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	wrong := sum
	wrong[0] ^= 1
	cases := []struct {
		what      string
		checksums map[string][]byte
		refusal   string // "" when the plugin must be usable
	}{
		{"matching", map[string][]byte{"faulty": sum[:]}, ""},
		{"not matching", map[string][]byte{"faulty": wrong[:]}, "SHA-256 does not match"},
		{"missing while required", map[string][]byte{"other": sum[:]}, "no configured SHA-256"},
	}
	for _, c := range cases {
		t.Run(c.what, func(t *testing.T) {
			h := host.New(host.Options{Checksums: c.checksums})
			defer h.Close()
			if err := h.Discover(context.Background(), dir); err != nil {
				t.Fatal(err)
			}
			info := h.Infos()[0]
			if c.refusal == "" {
				if info.Err != nil {
					t.Errorf("plugin refused: %v", info.Err)
				}
				return
			}
			if info.Err == nil || !strings.Contains(info.Err.Error(), c.refusal) {
				t.Errorf("err = %v, want a refusal mentioning %q", info.Err, c.refusal)
			}
		})
	}
	name, got, err := host.ParseChecksum("faulty=" + hex.EncodeToString(sum[:]))
	if err != nil || name != "faulty" || !bytes.Equal(got, sum[:]) {
		t.Errorf("ParseChecksum = %q, %x, %v", name, got, err)
	}
	for _, bad := range []string{"faulty", "=abcd", "faulty=xyz", "faulty=abcd"} {
		if _, _, err := host.ParseChecksum(bad); err == nil {
			t.Errorf("ParseChecksum(%q) accepted", bad)
		}
	}
	var flagValue host.Checksums
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.Var(&flagValue, "plugin-sha256", "")
	arg := "faulty=" + hex.EncodeToString(sum[:])
	if err := fs.Parse([]string{"--plugin-sha256", arg}); err != nil {
		t.Fatal(err)
	}
	if flagValue.String() != arg {
		t.Errorf("flag value %q, want %q", flagValue.String(), arg)
	}
}

// TestRegisterAndClose: Load routes the plugin's scheme through
// source.Open, never takes over a scheme that is already registered, and
// after Close the plugin's sources fail with ErrClosed.
func TestRegisterAndClose(t *testing.T) {
	dir := pluginDir(t, map[string]string{"tbfs-source-faulty": "tbfs-source-faulty"})
	data := t.TempDir()
	writeFile(t, data, "a.bin", []byte("hello"))
	t.Setenv(host.EnvDir, "")
	h, err := host.Load(context.Background(), dir, host.Options{})
	if err != nil {
		t.Fatal(err)
	}
	src, err := source.Open(context.Background(), "faulty://"+data)
	if err != nil {
		t.Fatalf("source.Open through the plugin: %v", err)
	}
	obj, err := src.Open(context.Background(), "a.bin")
	if err != nil {
		t.Fatal(err)
	}
	got, err := source.ReadAll(context.Background(), obj, source.HintHeader)
	if err != nil || string(got) != "hello" {
		t.Errorf("ReadAll = %q, %v", got, err)
	}
	// A second host finds the scheme taken and leaves it alone.
	h2, err := host.Load(context.Background(), dir, host.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if reg := h2.Infos()[0].Registered; len(reg) != 0 {
		t.Errorf("second host registered %v over the first", reg)
	}
	h2.Close()
	h.Close()
	if _, err := obj.ReadAt(context.Background(), make([]byte, 1), 0, source.HintData); !errors.Is(err, source.ErrClosed) {
		t.Errorf("read after Host.Close: err = %v, want ErrClosed", err)
	}
	if _, err := source.Open(context.Background(), "faulty://"+data); !errors.Is(err, source.ErrClosed) {
		t.Errorf("source.Open after Host.Close: err = %v, want ErrClosed", err)
	}
}

// TestLargeRead reads an object larger than one call's batch limit in one
// ReadAt through a real plugin process: the host splits it into ranges and
// calls, and the bytes arrive whole and in order. The arbiter is the file.
func TestLargeRead(t *testing.T) {
	dir := pluginDir(t, map[string]string{"tbfs-source-faulty": "tbfs-source-faulty"})
	data := t.TempDir()
	// Pseudo-random bytes, so a misplaced range cannot compare equal.
	blob := make([]byte, 34<<20+3)
	r := mrand.New(mrand.NewPCG(7, 7))
	for i := 0; i+8 <= len(blob); i += 8 {
		binary.LittleEndian.PutUint64(blob[i:], r.Uint64())
	}
	writeFile(t, data, "big", blob)
	h := host.New(host.Options{})
	defer h.Close()
	if err := h.Discover(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	src, err := h.Plugin("faulty").OpenURL(context.Background(), "faulty://"+data)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	obj, err := src.Open(context.Background(), "big")
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	got, err := readAt(context.Background(), obj, len(blob)+10, 0)
	if err != io.EOF {
		t.Errorf("read past the end: err = %v, want io.EOF", err)
	}
	if !bytes.Equal(got, blob) {
		t.Errorf("read %d bytes, want the %d of the file, equal", len(got), len(blob))
	}
}

// TestStartTimeout: a binary that never completes the handshake fails
// once StartTimeout has passed, not waited for.
func TestStartTimeout(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "tbfs-source-silent")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nexec sleep 120\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	h := host.New(host.Options{StartTimeout: time.Second})
	defer h.Close()
	if err := h.Discover(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	infos := h.Infos()
	if len(infos) != 1 || infos[0].Err == nil || !strings.Contains(infos[0].Err.Error(), "timeout") {
		t.Fatalf("infos = %+v, want the silent plugin refused for a timeout", infos)
	}
	// A slow start says nothing about the plugin's protocol, and may pass.
	if err := infos[0].Err; !errors.Is(err, source.ErrTransient) || strings.Contains(err.Error(), "protocol") {
		t.Errorf("start timeout: %v, want a transient error not blaming the protocol", err)
	}
}

// TestSlowCallKeepsHealthyPlugin: a call that outlives its deadline in a
// plugin that still answers health checks fails with ErrTransient, but the
// process is kept: one stuck read must not cost every other caller their
// plugin. Only the stuck read has the short deadline: the other calls keep
// the default, so a slow test machine cannot make them time out too.
func TestSlowCallKeepsHealthyPlugin(t *testing.T) {
	p, src, content := faultyHost(t, host.Options{HealthTimeout: 5 * time.Second})
	ctx := context.Background()
	hang, err := src.Open(ctx, "hang/x")
	if err != nil {
		t.Fatal(err)
	}
	defer hang.Close()
	pid := p.PID()
	_, err = readAt(host.WithCallTimeout(ctx, 500*time.Millisecond), hang, 10, 0)
	if !errors.Is(err, source.ErrTransient) || !strings.Contains(err.Error(), "did not answer within") {
		t.Fatalf("stuck read: err = %v, want ErrTransient for the deadline", err)
	}
	good, err := src.Open(ctx, "a.bin")
	if err != nil {
		t.Fatal(err)
	}
	defer good.Close()
	got, err := readAt(ctx, good, 10, 0)
	if err != nil || !bytes.Equal(got, content[:10]) {
		t.Fatalf("read after the stuck one: %q, %v", got, err)
	}
	if np, st := p.PID(), p.Stats(); np != pid || st.Failures != 0 || st.Restarts != 0 {
		t.Errorf("healthy plugin was replaced: pid %d → %d, stats %+v", pid, np, st)
	}
}

// TestDiscoveryInterrupted: a discovery whose schemes call times out or is
// cancelled is reported as that, naming the plugin (and the timeout), not
// as a refusal for another protocol version; the plugin is not refused for
// good, and the next Discover of its directory asks it again.
func TestDiscoveryInterrupted(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		want []string // in the error
		is   error
	}{
		// A bound of 1ns has passed before the call is sent: the plugin
		// cannot answer in time, however fast it is.
		{"timeout", host.WithCallTimeout(context.Background(), time.Nanosecond), []string{"plugin faulty", "discovery timed out", "within 1ns"}, source.ErrTransient},
		{"cancelled", cancelled, []string{"plugin faulty", "discovery"}, context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := pluginDir(t, map[string]string{"tbfs-source-faulty": "tbfs-source-faulty"})
			h := host.New(host.Options{})
			defer h.Close()
			if err := h.Discover(tc.ctx, dir); err != nil {
				t.Fatal(err)
			}
			infos := h.Infos()
			if len(infos) != 1 || infos[0].Err == nil || h.Plugin("faulty") != nil {
				t.Fatalf("infos = %+v, want one plugin not usable yet", infos)
			}
			err := infos[0].Err
			msg := err.Error()
			t.Logf("discovery error: %s", msg)
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not mention %q", msg, w)
				}
			}
			if !errors.Is(err, tc.is) || errors.Is(err, source.ErrPermanent) || strings.Contains(msg, "protocol") {
				t.Errorf("error %q: want %v, not a permanent or protocol refusal", msg, tc.is)
			}
			if err := h.Discover(context.Background(), dir); err != nil {
				t.Fatal(err)
			}
			infos = h.Infos()
			if len(infos) != 1 || infos[0].Err != nil || h.Plugin("faulty") == nil {
				t.Fatalf("after a second Discover: infos = %+v, want the plugin usable", infos)
			}
			if got := infos[0].Schemes; len(got) != 1 || got[0] != "faulty" {
				t.Errorf("schemes %v, want [faulty]", got)
			}
			if st := h.Plugin("faulty").Stats(); st.Starts != 1 {
				t.Errorf("stats %+v: want the one start of the second discovery", st)
			}
		})
	}
}

// TestCallerDeadlineDuringStart: a caller whose context ends while the
// plugin process is still starting gets the context's error then, not
// after StartTimeout. The plugin here is a script that runs the real plugin
// for discovery and then never completes a handshake again.
func TestCallerDeadlineDuringStart(t *testing.T) {
	bin := filepath.Join(bins(t), "tbfs-source-faulty")
	dir := t.TempDir()
	marker := filepath.Join(dir, "started-once")
	script := "#!/bin/sh\nif [ -e " + marker + " ]; then exec sleep 60; fi\ntouch " + marker + "\nexec " + bin + "\n"
	if err := os.WriteFile(filepath.Join(dir, "tbfs-source-faulty"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	h := host.New(host.Options{StartTimeout: 3 * time.Second})
	defer h.Close()
	if err := h.Discover(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	p := h.Plugin("faulty")
	if p == nil {
		t.Fatalf("plugin not usable: %+v", h.Infos())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := p.OpenURL(ctx, "faulty://"+t.TempDir())
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("open during a start that never ends: err = %v, want the caller's deadline", err)
	}
}

// TestCloseHungPlugin: Host.Close returns even when the plugin process is
// hung (SIGSTOP) and cannot shut down by itself, and the process is gone.
func TestCloseHungPlugin(t *testing.T) {
	dir := pluginDir(t, map[string]string{"tbfs-source-faulty": "tbfs-source-faulty"})
	h := host.New(host.Options{HealthTimeout: 500 * time.Millisecond})
	if err := h.Discover(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	p := h.Plugin("faulty")
	src, err := p.OpenURL(context.Background(), "faulty://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	pid := p.PID()
	stop(t, pid)
	h.Close()
	// Signal 0 checks for existence; a killed and reaped child is gone.
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("plugin process %d still exists after Close (kill 0: %v)", pid, err)
	}
}

// TestUnsafePlugins: as Vault does, a plugin binary that its group or
// everyone may write, and a plugin directory that is a symbolic link, are
// refused unless pinned by a checksum; the arbiter is the file's mode bits
// (os.Chmod) and crypto/sha256 of its content.
func TestUnsafePlugins(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(bins(t), "tbfs-source-faulty"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	pinned := host.Checksums{"faulty": sum[:]}
	withMode := func(t *testing.T, mode os.FileMode) string {
		dir := t.TempDir()
		p := filepath.Join(dir, "tbfs-source-faulty")
		if err := os.WriteFile(p, b, 0o700); err != nil {
			t.Fatal(err)
		}
		// Chmod, unlike WriteFile, is not narrowed by the umask.
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	cases := []struct {
		what      string
		mode      os.FileMode
		checksums host.Checksums
		refusal   string // "" when the plugin must be usable
	}{
		{"owner-only", 0o700, nil, ""},
		{"read and run by all", 0o755, nil, ""},
		{"group-writable", 0o775, nil, "writable by its group or by everyone"},
		{"world-writable", 0o757, nil, "writable by its group or by everyone"},
		{"world-writable but pinned", 0o777, pinned, ""},
	}
	for _, c := range cases {
		t.Run(c.what, func(t *testing.T) {
			dir := withMode(t, c.mode)
			h := host.New(host.Options{Checksums: c.checksums})
			defer h.Close()
			if err := h.Discover(context.Background(), dir); err != nil {
				t.Fatal(err)
			}
			info := h.Infos()[0]
			switch {
			case c.refusal == "" && info.Err != nil:
				t.Errorf("plugin refused: %v", info.Err)
			case c.refusal != "" && (info.Err == nil || !strings.Contains(info.Err.Error(), c.refusal)):
				t.Errorf("err = %v, want a refusal mentioning %q", info.Err, c.refusal)
			}
		})
	}
	t.Run("symlinked directory", func(t *testing.T) {
		link := filepath.Join(t.TempDir(), "plugins")
		if err := os.Symlink(withMode(t, 0o755), link); err != nil {
			t.Fatal(err)
		}
		h := host.New(host.Options{})
		defer h.Close()
		err := h.Discover(context.Background(), link)
		if err == nil || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("Discover(symlink) = %v, want a refusal naming the symbolic link", err)
		}
		if len(h.Infos()) != 0 {
			t.Errorf("plugins found through a refused directory: %+v", h.Infos())
		}
		hp := host.New(host.Options{Checksums: pinned})
		defer hp.Close()
		if err := hp.Discover(context.Background(), link); err != nil {
			t.Fatalf("Discover(symlink) with every plugin pinned: %v", err)
		}
		if infos := hp.Infos(); len(infos) != 1 || infos[0].Err != nil {
			t.Errorf("pinned plugin through a symlinked directory: %+v", infos)
		}
	})
}

// TestNoSocketLeftBehind: a plugin process killed for failing cannot remove
// its own socket. After a crash, the restart it causes and Close, the host
// has left nothing in the temporary directory: no socket, no directory.
func TestNoSocketLeftBehind(t *testing.T) {
	dir := pluginDir(t, map[string]string{"tbfs-source-faulty": "tbfs-source-faulty"})
	data := t.TempDir()
	content := bytes.Repeat([]byte("socket hygiene\n"), 100)
	writeFile(t, data, "a.bin", content)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)

	h := host.New(host.Options{})
	if err := h.Discover(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	p := h.Plugin("faulty")
	if p == nil {
		t.Fatalf("faulty plugin not usable: %+v", h.Infos())
	}
	ctx := context.Background()
	src, err := p.OpenURL(ctx, "faulty://"+data)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := src.Open(ctx, "a.bin")
	if err != nil {
		t.Fatal(err)
	}
	pid := p.PID()
	if pid == 0 {
		t.Fatal("no plugin process after open")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The first read may meet the dead connection; one after it runs on a
	// restarted process.
	_, _ = readAt(ctx, obj, 10, 0)
	if got, err := readAt(ctx, obj, 10, 0); err != nil || !bytes.Equal(got, content[:10]) {
		t.Fatalf("read after the restart: %q, %v", got, err)
	}
	if st := p.Stats(); st.Restarts != 1 {
		t.Fatalf("stats %+v, want one restart", st)
	}
	obj.Close()
	src.Close()
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	left, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range left {
		t.Errorf("left in the temporary directory after Close: %s", e.Name())
	}
}
