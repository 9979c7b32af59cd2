package host

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/tbfs/tbfs/plugins"
	pluginpb "github.com/tbfs/tbfs/plugins/proto"
	"github.com/tbfs/tbfs/source"
)

// Stats are a plugin's counters.
type Stats struct {
	// Starts counts plugin processes started, the discovery run included.
	Starts int64
	// Restarts counts starts that replaced a process that had crashed or
	// stopped answering.
	Restarts int64
	// Failures counts processes found dead or stopped for not answering.
	Failures int64
	// Calls and CallErrors count RPCs and those that failed without an
	// answer (the plugin's own error answers are not call errors).
	Calls, CallErrors int64
}

// Plugin is one plugin binary and the process that runs it, started on
// first use and again after it fails.
type Plugin struct {
	name, path string
	opts       *Options
	logger     hclog.Logger
	checksum   []byte

	schemes []string

	mu         sync.Mutex
	proc       *process // the running process, nil when none runs
	rpc        *plugins.Client
	gen        uint64
	lastFailed bool // the last process failed; the next start is a restart
	closed     bool
	starting   *startRound    // the start in progress, if any
	stops      sync.WaitGroup // processes being stopped after a failure

	starts, restarts, failures, calls, callErrors atomic.Int64
}

var _ conn = (*Plugin)(nil)

// Name is the plugin's name: its binary's name without tbfs-source-.
func (p *Plugin) Name() string { return p.name }

// Path is the plugin binary's path.
func (p *Plugin) Path() string { return p.path }

// Schemes are the URL schemes the plugin said it serves.
func (p *Plugin) Schemes() []string { return slices.Clone(p.schemes) }

// Stats returns the plugin's counters.
func (p *Plugin) Stats() Stats {
	return Stats{
		Starts:     p.starts.Load(),
		Restarts:   p.restarts.Load(),
		Failures:   p.failures.Load(),
		Calls:      p.calls.Load(),
		CallErrors: p.callErrors.Load(),
	}
}

// PID is the process id of the running plugin process, or 0 when none
// runs.
func (p *Plugin) PID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.proc == nil || p.proc.client.Exited() || p.proc.cmd.Process == nil {
		return 0
	}
	return p.proc.cmd.Process.Pid
}

// Open opens a source for u, which must have one of the plugin's schemes.
// It has the signature of a source.Opener, which is how the host registers
// the plugin's schemes.
func (p *Plugin) Open(ctx context.Context, u *url.URL) (source.Source, error) {
	red := source.Redact(u)
	if !slices.Contains(p.schemes, u.Scheme) {
		return nil, &source.Error{Op: "open source", URL: red, Err: source.Invalid(
			"plugin %s does not serve scheme %q (it serves %v)", p.name, u.Scheme, p.schemes)}
	}
	return openRemote(ctx, p, u.String(), red)
}

// OpenURL parses rawURL and opens it with Open.
func (p *Plugin) OpenURL(ctx context.Context, rawURL string) (source.Source, error) {
	u, err := source.ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	return p.Open(ctx, u)
}

// process is one running plugin process and the directory that holds its
// gRPC socket.
type process struct {
	client  *plugin.Client
	cmd     *exec.Cmd
	sockDir string
}

// start runs a new plugin process and connects to it. The caller holds
// p.mu or owns p exclusively.
func (p *Plugin) start() (*process, *plugins.Client, error) {
	// Each process puts its socket in a directory of its own, removed once
	// the process is gone: a process killed for failing cannot remove its
	// socket itself, and left to go-plugin every such kill would leave one
	// behind in the system's temporary directory.
	sockDir, err := os.MkdirTemp("", "tbfs-plugin-")
	if err != nil {
		return nil, nil, &source.Error{Op: "start plugin", URL: p.path, Err: fmt.Errorf("plugin %s: socket directory: %w", p.name, err)}
	}
	cmd := exec.Command(p.path)
	cmd.Env = []string{plugin.EnvUnixSocketDir + "=" + sockDir}
	cfg := &plugin.ClientConfig{
		HandshakeConfig:  plugins.Handshake,
		Plugins:          plugin.PluginSet{plugins.PluginName: &plugins.Plugin{}},
		Cmd:              cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Logger:           p.logger,
		AutoMTLS:         true,
		StartTimeout:     p.opts.StartTimeout,
		GRPCDialOptions: []grpc.DialOption{
			grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(plugins.MaxMessageSize)),
			// Large flow-control windows let a batch answer of several
			// megabytes arrive without a window-update round trip every
			// 64 KiB; the plugin is a local process, so memory, not the
			// network, is what the window protects.
			grpc.WithInitialWindowSize(8 << 20),
			grpc.WithInitialConnWindowSize(32 << 20),
		},
	}
	if p.checksum != nil {
		cfg.SecureConfig = &plugin.SecureConfig{Checksum: p.checksum, Hash: sha256.New()}
	}
	proc := &process{client: plugin.NewClient(cfg), cmd: cmd, sockDir: sockDir}
	p.starts.Add(1)
	t0 := time.Now()
	proto, err := proc.client.Client()
	if err != nil {
		proc.kill()
		if time.Since(t0) >= p.opts.StartTimeout {
			// go-plugin gave up waiting for the handshake: the process
			// was slow (or the machine paused), which says nothing about
			// the plugin itself; the next use tries again.
			return nil, nil, &source.Error{Op: "start plugin", URL: p.path, Err: source.Transient(fmt.Errorf(
				"plugin %s did not complete its start within the start timeout of %v", p.name, p.opts.StartTimeout))}
		}
		if errors.Is(err, plugin.ErrChecksumsDoNotMatch) || errors.Is(err, plugin.ErrProcessNotFound) {
			return nil, nil, p.refused(err)
		}
		return nil, nil, p.mismatch(err)
	}
	raw, err := proto.Dispense(plugins.PluginName)
	if err != nil {
		proc.kill()
		return nil, nil, p.mismatch(err)
	}
	rpc, ok := raw.(*plugins.Client)
	if !ok {
		proc.kill()
		return nil, nil, p.mismatch(fmt.Errorf("dispensed %T, not a source client", raw))
	}
	return proc, rpc, nil
}

// refused is the permanent error for a plugin that will not be usable
// however often it is asked: its binary or its answers are wrong.
func (p *Plugin) refused(err error) error {
	why := err.Error()
	switch {
	case errors.Is(err, plugin.ErrChecksumsDoNotMatch):
		why = "its SHA-256 does not match the configured checksum"
	case errors.Is(err, plugin.ErrProcessNotFound):
		why = "its process vanished"
	}
	return &source.Error{Op: "start plugin", URL: p.path, Err: source.Permanent(fmt.Errorf(
		"plugin %s refused: %s", p.name, why))}
}

// mismatch is refused for a plugin that does not speak this host's
// protocol: its handshake failed, or it lacks a call of the protocol.
func (p *Plugin) mismatch(err error) error {
	return &source.Error{Op: "start plugin", URL: p.path, Err: source.Permanent(fmt.Errorf(
		"plugin %s refused: %w (this host speaks tbfs plugin protocol %d over gRPC; a plugin must be built with plugins/sdk of the same protocol version)",
		p.name, err, plugins.ProtocolVersion))}
}

// startRound is one start of a plugin process that callers wait for.
type startRound struct {
	done chan struct{}
	err  error
}

// client returns the running process's client, starting a process if none
// runs (or the last one exited). A start runs on its own and is shared by
// every caller that needs it; a caller whose ctx ends first returns the
// context's error and leaves the start to finish for the next caller.
func (p *Plugin) client(ctx context.Context) (*plugins.Client, uint64, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, 0, source.ErrClosed
	}
	if p.proc != nil && !p.proc.client.Exited() {
		defer p.mu.Unlock()
		return p.rpc, p.gen, nil
	}
	if p.proc != nil {
		// The process exited by itself.
		p.stopLocked("exited")
	}
	if err := ctx.Err(); err != nil {
		p.mu.Unlock()
		return nil, 0, err
	}
	round := p.starting
	if round == nil {
		round = &startRound{done: make(chan struct{})}
		p.starting = round
		go p.runStart(round)
	}
	p.mu.Unlock()
	select {
	case <-round.done:
	case <-ctx.Done():
		return nil, 0, ctx.Err()
	}
	if round.err != nil {
		return nil, 0, round.err
	}
	// Started; take the new process (or whatever replaced it since).
	return p.client(ctx)
}

// runStart starts a process for round and publishes it.
func (p *Plugin) runStart(round *startRound) {
	proc, rpc, err := p.start()
	p.mu.Lock()
	p.starting = nil
	switch {
	case err != nil:
		round.err = err
	case p.closed:
		round.err = source.ErrClosed
		defer proc.stop(p.opts.HealthTimeout)
	default:
		if p.lastFailed {
			p.restarts.Add(1)
			p.lastFailed = false
			p.logger.Info("plugin restarted", "restarts", p.restarts.Load())
		}
		p.gen++
		p.proc, p.rpc = proc, rpc
	}
	p.mu.Unlock()
	close(round.done)
}

// running returns the running process's client without starting one.
func (p *Plugin) running() (*plugins.Client, uint64, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.proc == nil || p.proc.client.Exited() {
		return nil, 0, false
	}
	return p.rpc, p.gen, true
}

func (p *Plugin) timeout() time.Duration { return p.opts.CallTimeout }

func (p *Plugin) countCall(failed bool) {
	p.calls.Add(1)
	if failed {
		p.callErrors.Add(1)
	}
}

// failed handles a call to generation gen that got no answer. A call that
// timed out may only have been slow: the process is stopped only if it
// does not answer a health check either. Any other failure of the
// connection means the process is gone or unusable.
func (p *Plugin) failed(gen uint64, timedOut bool) {
	p.mu.Lock()
	if p.gen != gen || p.proc == nil {
		p.mu.Unlock()
		return
	}
	rpc := p.rpc
	p.mu.Unlock()
	if timedOut {
		ctx, cancel := context.WithTimeout(context.Background(), p.opts.HealthTimeout)
		_, err := rpc.Health.Check(ctx, &grpc_health_v1.HealthCheckRequest{Service: plugin.GRPCServiceName})
		cancel()
		if err == nil {
			return
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gen == gen && p.proc != nil {
		if timedOut {
			p.stopLocked("not answering")
		} else {
			p.stopLocked("connection failed")
		}
	}
}

// stopLocked forgets the current process after a failure and makes sure it
// is gone. It kills by PID first: go-plugin's own Kill asks the process to
// shut down and would wait on a hung one.
func (p *Plugin) stopLocked(why string) {
	proc := p.proc
	p.proc, p.rpc = nil, nil
	p.lastFailed = true
	p.failures.Add(1)
	p.logger.Warn("plugin process failed", "reason", why)
	p.stops.Add(1)
	go func() {
		defer p.stops.Done()
		proc.kill()
	}()
}

// close stops the plugin process, if one runs, and refuses further use.
func (p *Plugin) close() {
	p.mu.Lock()
	proc := p.proc
	p.proc, p.rpc = nil, nil
	p.closed = true
	round := p.starting
	p.mu.Unlock()
	if round != nil {
		// A start in progress ends within StartTimeout and, seeing the
		// plugin closed, stops its process; wait so none outlives Close.
		<-round.done
	}
	if proc != nil {
		proc.stop(p.opts.HealthTimeout)
	}
	// Processes killed after failures are gone, and their sockets with them.
	p.stops.Wait()
}

// stop ends the process: gracefully if it answers within grace, so it can
// close its own connections, else by SIGKILL. go-plugin's Kill alone would
// wait forever on a process that is hung.
func (proc *process) stop(grace time.Duration) {
	defer proc.removeSocketDir()
	done := make(chan struct{})
	go func() {
		proc.client.Kill()
		close(done)
	}()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-done:
		return
	case <-t.C:
	}
	proc.signalKill()
	<-done
}

// kill ends the process at once, without asking it to shut down.
func (proc *process) kill() {
	defer proc.removeSocketDir()
	if !proc.client.Exited() {
		proc.signalKill()
	}
	proc.client.Kill()
}

func (proc *process) signalKill() {
	if proc.cmd.Process != nil {
		_ = proc.cmd.Process.Signal(syscall.SIGKILL)
	}
}

// removeSocketDir removes the process's socket directory once the process
// is gone; a socket it left there goes with it.
func (proc *process) removeSocketDir() { _ = os.RemoveAll(proc.sockDir) }

// discover starts the plugin once to ask which schemes it serves, then
// stops it; the plugin runs again on first use.
func (p *Plugin) discover(ctx context.Context) error {
	proc, rpc, err := p.start()
	if err != nil {
		return err
	}
	defer proc.stop(p.opts.HealthTimeout)
	d := callTimeout(ctx, p.opts.CallTimeout)
	cctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	resp, err := rpc.Schemes(cctx, &pluginpb.SchemesRequest{})
	if err != nil {
		return p.discoveryFailed(ctx, cctx, d, err)
	}
	var schemes []string
	for _, s := range resp.GetSchemes() {
		if !validScheme(s) {
			return p.refused(fmt.Errorf("it claims the invalid URL scheme %q", s))
		}
		if !slices.Contains(schemes, s) {
			schemes = append(schemes, s)
		}
	}
	if len(schemes) == 0 {
		return p.refused(errors.New("it serves no URL scheme"))
	}
	p.schemes = schemes
	return nil
}

// discoveryFailed says why the schemes call made under cctx (bounded by d
// within the caller's ctx) got no answer. Only a plugin without the call
// breaks the protocol; a timeout, a cancellation or a broken connection is
// a failure of this attempt, not a verdict on the plugin, and the next
// Discover asks it again.
func (p *Plugin) discoveryFailed(ctx, cctx context.Context, d time.Duration, err error) error {
	fail := func(err error) error { return &source.Error{Op: "discover plugin", URL: p.path, Err: err} }
	switch {
	case ctx.Err() != nil:
		return fail(fmt.Errorf("plugin %s: discovery of its URL schemes stopped: %w", p.name, ctx.Err()))
	case cctx.Err() != nil || status.Code(err) == codes.DeadlineExceeded:
		return fail(source.Transient(fmt.Errorf("plugin %s: discovery timed out: no answer to the URL schemes call within %v", p.name, d)))
	case status.Code(err) == codes.Unimplemented:
		return p.mismatch(fmt.Errorf("asking for its URL schemes: %w", err))
	}
	return fail(source.Transient(fmt.Errorf("plugin %s: discovery of its URL schemes failed: %w", p.name, err)))
}

// validScheme accepts lower-case RFC 3986 schemes.
func validScheme(s string) bool {
	if s == "" || len(s) > 32 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}
