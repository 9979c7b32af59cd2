// Package tables opens the table locations a front end is given — the
// same URL forms, plugins and caches for tbprobe and tbfs — so the two can
// never disagree about what "--tables URL" means.
//
// An Opener loads the transport plugins once (--plugin-dir, then
// $TBFS_PLUGIN_DIR, with --plugin-sha256 pins) and opens each location as a
// source/stack; Embedded and EmbeddedGeister open the fixture tables built
// into the binary.
package tables

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/tbfs/tbfs/plugins"
	"github.com/tbfs/tbfs/plugins/host"
	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/fssource"
	"github.com/tbfs/tbfs/source/metrics"
	"github.com/tbfs/tbfs/source/stack"
	"github.com/tbfs/tbfs/testdata"
)

// Options say how locations are opened.
type Options struct {
	// Stack configures the wrappers of every location (memory cache, disk
	// cache, listing cache, retries, request limit).
	Stack stack.Options
	// PluginDir is --plugin-dir; the directories of $TBFS_PLUGIN_DIR are
	// searched after it.
	PluginDir string
	// PluginChecksums are the --plugin-sha256 pins: when any is given,
	// only pinned plugins run, and only when their binary matches.
	PluginChecksums host.Checksums
	// PluginLogger receives the plugin host's and the plugins' messages;
	// nil discards them.
	PluginLogger hclog.Logger
}

// Opener opens locations. It owns the plugin host, which the sources
// opened through plugins need: close those before the Opener.
type Opener struct {
	opts Options
	dirs []string
	host *host.Host
}

// NewOpener loads the plugins of every plugin directory. A directory that
// cannot be read, or that is refused (a symbolic link, unless every plugin
// is pinned), is an error; a plugin that is unusable is not, and the error
// for a URL of its scheme will say why.
func NewOpener(ctx context.Context, opts Options) (*Opener, error) {
	if opts.Stack.MaxRequests < 0 {
		return nil, fmt.Errorf("--max-requests %d: want a positive number", opts.Stack.MaxRequests)
	}
	o := &Opener{opts: opts, dirs: host.Dirs(opts.PluginDir)}
	if len(o.dirs) == 0 {
		return o, nil
	}
	h, err := host.Load(ctx, opts.PluginDir, host.Options{Logger: opts.PluginLogger, Checksums: opts.PluginChecksums})
	if err != nil {
		h.Close()
		return nil, fmt.Errorf("plugins: %w", err)
	}
	o.host = h
	return o, nil
}

// Host is the plugin host, nil when no plugin directory was given.
func (o *Opener) Host() *host.Host { return o.host }

// PluginDirs are the directories searched for plugins, in order.
func (o *Opener) PluginDirs() []string { return slices.Clone(o.dirs) }

// Close stops the plugins.
func (o *Opener) Close() error {
	if o.host == nil {
		return nil
	}
	return o.host.Close()
}

// Location is one opened table location.
type Location struct {
	// URL names it with any credentials redacted, for listings and logs.
	URL string
	*stack.Stack
}

// Set is the locations of one --tables (or --geister) list, in search
// order.
type Set []*Location

// Open opens every URL in order. A failure closes what was opened and
// names the URL, redacted.
func (o *Opener) Open(ctx context.Context, urls []string) (Set, error) {
	var set Set
	for _, raw := range urls {
		st, err := stack.Open(ctx, raw, o.opts.Stack)
		if err != nil {
			set.Close()
			return nil, fmt.Errorf("tables %s: %w", Redact(raw), o.explain(raw, err))
		}
		set = append(set, &Location{URL: Redact(raw), Stack: st})
	}
	return set, nil
}

// Embedded opens the chess fixture tables built into the binary, one
// location per root with the wrappers of a local directory: the
// repository's testdata/chesstb (packs included), then testdata/syzygy, the
// order of "--tables testdata/chesstb --tables testdata/syzygy", so a
// prober over them answers from both formats.
func (o *Opener) Embedded() (Set, error) {
	var set Set
	add := func(name string, sub fs.FS, err error) error {
		if err != nil {
			set.Close()
			return fmt.Errorf("%s: %w", name, err)
		}
		set = append(set, &Location{URL: name, Stack: stack.Wrap(fssource.New(sub, name), false, o.opts.Stack)})
		return nil
	}
	for _, dir := range testdata.ChessTBRoots {
		sub, err := testdata.ChessTBRoot(dir)
		if err := add("embedded:testdata/"+dir, sub, err); err != nil {
			return nil, err
		}
	}
	sub, err := testdata.SyzygyRoot()
	if err := add(testdata.SyzygyName, sub, err); err != nil {
		return nil, err
	}
	return set, nil
}

// EmbeddedGeister opens the Geister fixture table built into the binary
// (the repository's testdata/geister: the total-4 material), with the
// wrappers of a local directory.
func (o *Opener) EmbeddedGeister() (Set, error) {
	sub, err := testdata.GeisterRoot()
	if err != nil {
		return nil, fmt.Errorf("embedded Geister tables: %w", err)
	}
	return Set{{URL: testdata.GeisterName, Stack: stack.Wrap(fssource.New(sub, testdata.GeisterName), false, o.opts.Stack)}}, nil
}

// Sources returns the locations as sources, in order.
func (s Set) Sources() []source.Source {
	out := make([]source.Source, len(s))
	for i, l := range s {
		out[i] = l.Stack
	}
	return out
}

// URLs returns the locations' redacted URLs, in order.
func (s Set) URLs() []string {
	out := make([]string, len(s))
	for i, l := range s {
		out[i] = l.URL
	}
	return out
}

// CacheBudget sums the memory cache budgets of every location (remote ones
// keep fetched blocks; local ones have no cache).
func (s Set) CacheBudget() int64 {
	var sum int64
	for _, l := range s {
		sum += l.CacheBudget()
	}
	return sum
}

// Stats sums the counters of every location.
func (s Set) Stats() metrics.Stats {
	var sum metrics.Stats
	for _, l := range s {
		st := l.Stats()
		sum.Opens += st.Opens
		sum.Requests += st.Requests
		sum.Bytes += st.Bytes
		sum.Lists += st.Lists
		sum.Errors += st.Errors
		sum.Hits += st.Hits
		sum.Misses += st.Misses
		sum.Joins += st.Joins
		sum.Evictions += st.Evictions
		sum.Retries += st.Retries
	}
	return sum
}

// Close closes every location.
func (s Set) Close() error {
	var errs []error
	for _, l := range s {
		errs = append(errs, l.Close())
	}
	return errors.Join(errs...)
}

// Redact hides credentials in a table URL before it is shown anywhere
// (source.RedactURL, the one redaction). A local path, which holds none, is
// shown as given.
func Redact(raw string) string { return source.RedactURL(raw) }

// knownPlugins are the plugins this repository builds, by the scheme they
// serve, with the package their binary is built from.
var knownPlugins = map[string]string{
	"ftp": "plugins/ftp/cmd/tbfs-source-ftp",
}

// explain adds to an open failure for a scheme no transport serves which
// plugin would serve it and where the plugin must be, or why the plugin
// that was found cannot run.
func (o *Opener) explain(raw string, err error) error {
	u, perr := source.ParseURL(raw)
	if perr != nil || slices.Contains(source.Schemes(), u.Scheme) {
		return err
	}
	binary := plugins.BinaryPrefix + u.Scheme
	if o.host != nil {
		for _, info := range o.host.Infos() {
			if info.Err != nil && (info.Name == u.Scheme || slices.Contains(info.Schemes, u.Scheme)) {
				return fmt.Errorf("%w; the plugin %s that would serve it is not usable: %v", err, info.Path, info.Err)
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "scheme %q is served by a transport plugin, %s", u.Scheme, binary)
	if pkg, ok := knownPlugins[u.Scheme]; ok {
		fmt.Fprintf(&b, " (go build ./%s)", pkg)
	}
	b.WriteString(": put it in the directory given by --plugin-dir or in one listed in $" + host.EnvDir)
	if len(o.dirs) == 0 {
		b.WriteString(" (neither is set)")
	} else {
		fmt.Fprintf(&b, " (searched: %s)", strings.Join(o.dirs, ", "))
	}
	return fmt.Errorf("%w; %s", err, b.String())
}
