// Package host finds tbfs transport plugins, starts them on first use and
// routes source.Open to them for the URL schemes they serve.
//
// A plugin is an executable named tbfs-source-<name> in a plugin directory
// (the front ends' --plugin-dir, then each directory of $TBFS_PLUGIN_DIR).
// Load runs each plugin once to ask which URL schemes it serves and
// registers them with source.Register; from then on source.Open("ftp://…")
// reaches the ftp plugin. A plugin never replaces a scheme that is already
// registered, so it cannot take over file://, s3:// or http:// from the
// built-in transports.
//
// The host trusts a plugin with nothing it does not check: names are
// validated before they are sent, answers are checked against the request
// (a plugin cannot return more or other bytes than were asked for), and
// every call has a deadline. A plugin that crashes or stops answering
// makes the calls in flight fail with source.ErrTransient; the next use
// starts a new process, and Stats counts the restart.
package host

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/tbfs/tbfs/plugins"
	"github.com/tbfs/tbfs/source"
)

// EnvDir is the environment variable that lists plugin directories,
// separated like PATH.
const EnvDir = "TBFS_PLUGIN_DIR"

// Options configure a Host. The zero value is usable.
type Options struct {
	// Logger receives the host's messages and every plugin's log lines,
	// each under the plugin's name. Nil discards them.
	Logger hclog.Logger
	// Checksums maps plugin names to the SHA-256 their binary must have.
	// When it is not empty, only plugins listed in it are run, and only
	// when their binary matches (the --plugin-sha256 flag).
	Checksums Checksums
	// CallTimeout bounds one call to a plugin (default 30s). A call that
	// takes longer fails with source.ErrTransient. WithCallTimeout sets
	// another bound for the calls made with one context.
	CallTimeout time.Duration
	// HealthTimeout bounds the health check made after a call timed out
	// (default 5s); a plugin that fails it is stopped and restarted on
	// next use. A hung plugin thus fails a caller within CallTimeout +
	// HealthTimeout.
	HealthTimeout time.Duration
	// StartTimeout bounds the start of a plugin process (default 20s).
	StartTimeout time.Duration
}

func (o *Options) defaults() {
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = 30 * time.Second
	}
	if o.HealthTimeout <= 0 {
		o.HealthTimeout = 5 * time.Second
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 20 * time.Second
	}
}

type callTimeoutKey struct{}

// WithCallTimeout returns a context whose plugin calls (discovery, opens,
// reads, listings) are each bounded by d instead of Options.CallTimeout,
// for a caller that knows how long its calls may take. A call that takes
// longer fails as one past CallTimeout does.
func WithCallTimeout(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, callTimeoutKey{}, d)
}

// callTimeout is the bound of a call made with ctx: the one set by
// WithCallTimeout, else def.
func callTimeout(ctx context.Context, def time.Duration) time.Duration {
	if d, ok := ctx.Value(callTimeoutKey{}).(time.Duration); ok && d > 0 {
		return d
	}
	return def
}

// Host owns the plugins it found and their processes.
type Host struct {
	opts Options

	mu      sync.Mutex
	plugins []*Plugin
	infos   []Info
	closed  bool
}

// Info describes one plugin binary the host found.
type Info struct {
	// Name is the plugin's name, Path its binary.
	Name, Path string
	// Schemes are the URL schemes it serves.
	Schemes []string
	// Registered are the schemes routed to it by source.Open; the others
	// were already taken by a built-in transport or an earlier plugin.
	Registered []string
	// Err says why the plugin is not usable, nil when it is.
	Err error
	// Plugin is the plugin itself, nil when Err is set.
	Plugin *Plugin

	// again is set when discovery failed for a reason that may pass (a
	// timeout, a broken connection): the next Discover of the same binary
	// asks the plugin again.
	again bool
}

// New returns a Host with no plugins.
func New(opts Options) *Host {
	opts.defaults()
	return &Host{opts: opts}
}

// Dirs lists the plugin directories to search: flagDir (from --plugin-dir)
// when set, then those of $TBFS_PLUGIN_DIR.
func Dirs(flagDir string) []string {
	var dirs []string
	if flagDir != "" {
		dirs = append(dirs, flagDir)
	}
	for _, d := range filepath.SplitList(os.Getenv(EnvDir)) {
		if d != "" && !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// Load is what a front end calls at start: it finds the plugins in
// Dirs(flagDir), asks each for its schemes and registers them. A plugin
// that fails is reported in Infos and logged, and does not stop the
// others; an unreadable plugin directory is an error.
func Load(ctx context.Context, flagDir string, opts Options) (*Host, error) {
	h := New(opts)
	var errs []error
	for _, d := range Dirs(flagDir) {
		if err := h.Discover(ctx, d); err != nil {
			errs = append(errs, err)
		}
	}
	h.Register()
	return h, errors.Join(errs...)
}

// Discover adds the plugins in dir: every regular, executable file named
// tbfs-source-<name>. A name already found in an earlier directory is
// skipped. Each plugin runs once, to say which schemes it serves; one
// whose discovery failed for a reason that may pass (it timed out, was
// cancelled or lost its connection) is asked again by the next Discover of
// its directory, while a refused one (wrong protocol, checksum or answer)
// stays refused.
//
// As Vault does, a plugin directory that is a symbolic link, and a binary
// that users other than its owner may write, are refused unless pinned:
// either could let someone else swap the code the host runs. A plugin whose
// name has a checksum in Options.Checksums is pinned (its binary must match
// it byte for byte anyway), and a symlinked directory is searched only when
// every plugin run from it is pinned.
func (h *Host) Discover(ctx context.Context, dir string) error {
	lfi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("plugin directory: %w", err)
	}
	if lfi.Mode()&os.ModeSymlink != 0 && len(h.opts.Checksums) == 0 {
		return fmt.Errorf("plugin directory %s is a symbolic link: refused, as whoever controls the link chooses the code run (name the real directory, or pin each plugin with --plugin-sha256 NAME=HEX)", dir)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("plugin directory: %w", err)
	}
	for _, e := range ents {
		name, ok := strings.CutPrefix(e.Name(), plugins.BinaryPrefix)
		if !ok || name == "" {
			continue
		}
		path := filepath.Join(dir, e.Name())
		info := Info{Name: name, Path: path}
		fi, err := os.Stat(path)
		switch {
		case err != nil:
			info.Err = err
		case !fi.Mode().IsRegular():
			continue
		case fi.Mode().Perm()&0o111 == 0:
			info.Err = fmt.Errorf("plugin %s: %s is not executable", name, path)
		case fi.Mode().Perm()&0o022 != 0 && h.opts.Checksums[name] == nil:
			info.Err = fmt.Errorf("plugin %s: %s is writable by its group or by everyone (mode %04o): refused, as another user could replace the code run (chmod go-w it, or pin it with --plugin-sha256 %s=HEX)",
				name, path, fi.Mode().Perm(), name)
		}
		at, retry := h.known(name, path)
		if at >= 0 && !retry {
			h.opts.Logger.Debug("plugin shadowed by an earlier directory", "plugin", name, "path", path)
			continue
		}
		if info.Err == nil {
			info.Plugin, info.Err = h.probe(ctx, name, path)
			if info.Err == nil {
				info.Schemes = info.Plugin.Schemes()
			}
			info.again = info.Err != nil && !errors.Is(info.Err, source.ErrPermanent)
		}
		if info.Err != nil {
			h.opts.Logger.Error("plugin not usable", "plugin", name, "path", path, "error", info.Err)
			info.Plugin = nil
		}
		h.mu.Lock()
		if at >= 0 {
			h.infos[at] = info
		} else {
			h.infos = append(h.infos, info)
		}
		if info.Plugin != nil {
			h.plugins = append(h.plugins, info.Plugin)
		}
		h.mu.Unlock()
	}
	return nil
}

// known returns the index in h.infos of the plugin called name, or -1,
// and whether it is the binary at path, to be asked again.
func (h *Host) known(name, path string) (int, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for k, i := range h.infos {
		if i.Name == name {
			return k, i.again && i.Path == path
		}
	}
	return -1, false
}

// probe makes the Plugin for a binary and asks it for its schemes.
func (h *Host) probe(ctx context.Context, name, path string) (*Plugin, error) {
	p := &Plugin{
		name:   name,
		path:   path,
		opts:   &h.opts,
		logger: h.opts.Logger.Named(name),
	}
	if len(h.opts.Checksums) > 0 {
		sum, ok := h.opts.Checksums[name]
		if !ok {
			return nil, fmt.Errorf("plugin %s has no configured SHA-256 and checksums are required", name)
		}
		p.checksum = sum
	}
	if err := p.discover(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

// routes maps URL schemes to the live plugin serving them. source.Register
// cannot unregister, so each scheme is registered once with an opener that
// looks its plugin up here; a closed host removes its routes, and a later
// host may claim them.
var routes = struct {
	sync.Mutex
	live       map[string]*Plugin
	registered map[string]bool
}{live: map[string]*Plugin{}, registered: map[string]bool{}}

// Register routes each plugin's schemes to it through source.Open, except
// schemes another transport already serves (a built-in one, or a plugin of
// this or another live host), and records which were routed in Infos.
func (h *Host) Register() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	routes.Lock()
	defer routes.Unlock()
	builtin := map[string]bool{}
	for _, s := range source.Schemes() {
		if !routes.registered[s] {
			builtin[s] = true
		}
	}
	for i := range h.infos {
		info := &h.infos[i]
		if info.Plugin == nil {
			continue
		}
		for _, s := range info.Schemes {
			if slices.Contains(info.Registered, s) {
				continue
			}
			if builtin[s] || routes.live[s] != nil {
				h.opts.Logger.Warn("URL scheme already served; plugin not registered for it", "plugin", info.Name, "scheme", s)
				continue
			}
			routes.live[s] = info.Plugin
			if !routes.registered[s] {
				routes.registered[s] = true
				source.Register(s, routeOpener(s))
			}
			info.Registered = append(info.Registered, s)
		}
	}
}

// routeOpener opens URLs of scheme with the plugin that serves it now.
func routeOpener(scheme string) source.Opener {
	return func(ctx context.Context, u *url.URL) (source.Source, error) {
		routes.Lock()
		p := routes.live[scheme]
		routes.Unlock()
		if p == nil {
			return nil, &source.Error{Op: "open source", URL: source.Redact(u), Err: fmt.Errorf(
				"the plugin host that served scheme %q was closed: %w", scheme, source.ErrClosed)}
		}
		return p.Open(ctx, u)
	}
}

// Infos lists the plugins found, in discovery order: what `tbprobe ls
// --plugins` prints.
func (h *Host) Infos() []Info {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]Info, len(h.infos))
	for i, info := range h.infos {
		info.Schemes = slices.Clone(info.Schemes)
		info.Registered = slices.Clone(info.Registered)
		out[i] = info
	}
	return out
}

// Plugin returns the usable plugin of that name, or nil.
func (h *Host) Plugin(name string) *Plugin {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, p := range h.plugins {
		if p.name == name {
			return p
		}
	}
	return nil
}

// Close stops every plugin process. Sources opened through the plugins
// fail with source.ErrClosed afterwards, and so do their registered
// schemes.
func (h *Host) Close() error {
	h.mu.Lock()
	ps := h.plugins
	h.closed = true
	h.mu.Unlock()
	routes.Lock()
	for s, p := range routes.live {
		if slices.Contains(ps, p) {
			delete(routes.live, s)
		}
	}
	routes.Unlock()
	var wg sync.WaitGroup
	for _, p := range ps {
		wg.Go(p.close)
	}
	wg.Wait()
	return nil
}

// Checksums maps plugin names to SHA-256 digests. It is a flag.Value and a
// pflag.Value, so a front end can take repeated --plugin-sha256 name=hex
// flags with fs.Var(&opts.Checksums, "plugin-sha256", "…").
type Checksums map[string][]byte

// String lists the checksums as name=hex, sorted by name.
func (c Checksums) String() string {
	names := make([]string, 0, len(c))
	for n := range c {
		names = append(names, n)
	}
	slices.Sort(names)
	for i, n := range names {
		names[i] = n + "=" + hex.EncodeToString(c[n])
	}
	return strings.Join(names, ",")
}

// Type names the value's form in a pflag (cobra) usage line.
func (c *Checksums) Type() string { return "NAME=HEX" }

// Set adds one name=hex checksum; the map is made on first use.
func (c *Checksums) Set(s string) error {
	name, sum, err := ParseChecksum(s)
	if err != nil {
		return err
	}
	if *c == nil {
		*c = Checksums{}
	}
	(*c)[name] = sum
	return nil
}

// String formats the plugin for a listing such as `tbprobe ls --plugins`:
// name, binary, schemes (those routed by source.Open marked with *), and
// the reason it is unusable, if it is.
func (i Info) String() string {
	if i.Err != nil {
		return fmt.Sprintf("%s\t%s\tunusable: %v", i.Name, i.Path, i.Err)
	}
	schemes := make([]string, len(i.Schemes))
	for k, s := range i.Schemes {
		schemes[k] = s
		if slices.Contains(i.Registered, s) {
			schemes[k] += "*"
		}
	}
	st := i.Plugin.Stats()
	return fmt.Sprintf("%s\t%s\t%s\tstarts=%d restarts=%d failures=%d",
		i.Name, i.Path, strings.Join(schemes, ","), st.Starts, st.Restarts, st.Failures)
}

// ParseChecksum parses a --plugin-sha256 value, "name=hex digest".
func ParseChecksum(s string) (name string, sum []byte, err error) {
	name, hx, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return "", nil, fmt.Errorf("plugin checksum %q: want name=sha256-hex", s)
	}
	sum, err = hex.DecodeString(hx)
	if err != nil || len(sum) != 32 {
		return "", nil, fmt.Errorf("plugin checksum %q: want 64 hex digits of a SHA-256", s)
	}
	return name, sum, nil
}
