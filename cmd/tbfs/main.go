// Command tbfs mounts chess endgame tablebases as a read-only file system:
//
//	tbfs mount [--tables URL]... [--cache-size N] [--cache-dir DIR [--metadata-ttl D]] [--max-requests N] [--allow-other] [--debug] MOUNTPOINT
//	tbfs unmount MOUNTPOINT
//
// after which `cat "MOUNTPOINT/chess/8/8/8/5k2/8/8/1Q6/K7 w - - 0 1"` prints
// what the tables say about the position, from any program, with the tables
// left where they are (a directory, s3://bucket/prefix, http(s)://...). The
// mount runs in the foreground and unmounts cleanly on SIGINT or SIGTERM.
// README at the mount's root describes the tree.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tbfs/tbfs/cmd/tbfs/internal/diskcache"
	"github.com/tbfs/tbfs/format/chesstb"
	"github.com/tbfs/tbfs/format/geister"
	"github.com/tbfs/tbfs/fusefs"
	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/breaker"
	"github.com/tbfs/tbfs/source/cache"
	"github.com/tbfs/tbfs/source/fssource"
	"github.com/tbfs/tbfs/source/limit"
	"github.com/tbfs/tbfs/source/listcache"
	"github.com/tbfs/tbfs/source/metrics"
	"github.com/tbfs/tbfs/source/retry"
	"github.com/tbfs/tbfs/testdata"

	// Every built-in transport: file, http(s), s3.
	_ "github.com/tbfs/tbfs/source/all"
)

const usage = `usage:
  tbfs mount [--tables URL]... [--geister URL]... [--cache-size BYTES]
             [--cache-dir DIR [--cache-dir-size BYTES]] [--metadata-ttl DURATION]
             [--max-requests N] [--allow-other] [--debug] MOUNTPOINT
  tbfs unmount MOUNTPOINT

--tables is repeatable (a directory, file://, s3://bucket/prefix, http(s)://);
tables are searched in the order given. Without --tables the fixture tables
built into the binary (the repository's testdata/chesstb, packs included) are
mounted, from any working directory.

--metadata-ttl is how long what a remote location said about a table (its
size and version, or that it does not exist) is trusted without asking
again: with --cache-dir a remount whose reads are on disk sends no request
within it. A table replaced on the server is never mixed with its old
version; after the TTL it is served as the new one.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// Exit statuses: 0 success, 1 failure, 2 usage error.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "mount":
		return runMount(args[1:], stdout, stderr)
	case "unmount", "umount":
		return runUnmount(args[1:], stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "tbfs: unknown command %q\n%s", args[0], usage)
	return 2
}

// listFlag collects a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

// sizeFlag is a byte count with an optional K, M or G suffix (powers of
// 1024).
type sizeFlag int64

func (s *sizeFlag) String() string { return strconv.FormatInt(int64(*s), 10) }
func (s *sizeFlag) Set(v string) error {
	n, err := parseSize(v)
	if err != nil {
		return err
	}
	*s = sizeFlag(n)
	return nil
}

func parseSize(v string) (int64, error) {
	mult := int64(1)
	t := strings.ToUpper(strings.TrimSuffix(strings.TrimSuffix(v, "B"), "i"))
	switch {
	case strings.HasSuffix(t, "K"):
		mult, t = 1<<10, strings.TrimSuffix(t, "K")
	case strings.HasSuffix(t, "M"):
		mult, t = 1<<20, strings.TrimSuffix(t, "M")
	case strings.HasSuffix(t, "G"):
		mult, t = 1<<30, strings.TrimSuffix(t, "G")
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("bad size %q (want a positive number of bytes, optionally with K, M or G)", v)
	}
	return n * mult, nil
}

// mountConfig is what the mount command was asked for.
type mountConfig struct {
	tables       []string
	geister      []string
	cacheSize    int64
	cacheDir     string
	cacheDirSize int64
	allowOther   bool
	debug        bool
	mountpoint   string
	metadataTTL  time.Duration
	maxRequests  int
}

func parseMount(args []string, stderr io.Writer) (mountConfig, error) {
	var cfg mountConfig
	var tables, geisterTables listFlag
	size := sizeFlag(chesstb.DefaultBlockCacheBytes)
	diskSize := sizeFlag(1 << 30)
	fl := flag.NewFlagSet("tbfs mount", flag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.Var(&geisterTables, "geister", "where Geister tables are (repeatable); adds geister/ to the mount")
	fl.Var(&tables, "tables", "where the tables are: a directory, s3://bucket/prefix, http(s)://... (repeatable; searched in order)")
	fl.Var(&size, "cache-size", "bytes of table data kept in memory, for decoded blocks and again for fetched remote blocks (K, M, G suffixes)")
	fl.StringVar(&cfg.cacheDir, "cache-dir", "", "keep blocks fetched from remote tables in this directory, across remounts")
	fl.Var(&diskSize, "cache-dir-size", "bytes --cache-dir may hold (K, M, G suffixes)")
	fl.DurationVar(&cfg.metadataTTL, "metadata-ttl", 5*time.Minute, "how long a remote table's size and version, or its absence, are trusted without asking again")
	fl.IntVar(&cfg.maxRequests, "max-requests", limit.DefaultRequests, "requests in flight at once to each remote table location")
	fl.BoolVar(&cfg.allowOther, "allow-other", false, "let other users read the mount")
	fl.BoolVar(&cfg.debug, "debug", false, "log every refused path with the reason, and FUSE traffic")
	fl.Usage = func() { fmt.Fprint(stderr, usage) }
	if err := fl.Parse(args); err != nil {
		return cfg, err
	}
	if fl.NArg() != 1 {
		return cfg, fmt.Errorf("mount takes one MOUNTPOINT, got %d arguments", fl.NArg())
	}
	if cfg.metadataTTL < 0 {
		return cfg, fmt.Errorf("--metadata-ttl %v: must not be negative", cfg.metadataTTL)
	}
	if cfg.maxRequests <= 0 {
		return cfg, fmt.Errorf("--max-requests %d: want a positive number", cfg.maxRequests)
	}
	cfg.geister = geisterTables
	cfg.tables, cfg.cacheSize, cfg.cacheDirSize, cfg.mountpoint = tables, int64(size), int64(diskSize), fl.Arg(0)
	return cfg, nil
}

func runMount(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseMount(args, stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stderr, "tbfs: %v\n", err)
		}
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := serve(ctx, cfg, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "tbfs: %v\n", err)
		return 1
	}
	return 0
}

// tableSource is one --tables location with its wrappers, in the order of
// package source/stack (memory cache → listing cache → retry → limit →
// metrics → transport) and, with --cache-dir, a disk cache between the
// memory cache and the listing cache: memory hits cost nothing, disk hits
// (and, within --metadata-ttl, opens the disk remembers) no request, and the
// metrics count exactly the requests the transport made.
type tableSource struct {
	url      string
	top      source.Source
	raw      source.Source
	counters *metrics.Counters
	mem      *cache.Source
	disk     *diskcache.Source
}

// openTables opens every table URL. Local directories are memory-mapped
// already and get neither cache.
func openTables(ctx context.Context, urls []string, cfg mountConfig) ([]*tableSource, error) {
	var out []*tableSource
	for _, raw := range urls {
		ts, err := openTable(ctx, raw, cfg)
		if err != nil {
			closeAll(out)
			return nil, fmt.Errorf("tables %s: %w", redact(raw), err)
		}
		out = append(out, ts)
	}
	return out, nil
}

// embeddedTables opens the fixture tables built into the binary, one source
// per root in testdata.ChessTBRoots, with the wrappers a local directory gets
// (metrics and retry, no cache: the bytes are in memory already).
func embeddedTables() ([]*tableSource, error) {
	var out []*tableSource
	for _, dir := range testdata.ChessTBRoots {
		sub, err := testdata.ChessTBRoot(dir)
		if err != nil {
			closeAll(out)
			return nil, fmt.Errorf("embedded tables %s: %w", dir, err)
		}
		raw := fssource.New(sub, "embedded:testdata/"+dir)
		ts := &tableSource{url: "embedded:testdata/" + dir, raw: raw, counters: new(metrics.Counters)}
		ts.top = retry.Wrap(metrics.Wrap(raw, ts.counters), retry.Policy{Counters: ts.counters})
		out = append(out, ts)
	}
	return out, nil
}

func openTable(ctx context.Context, rawURL string, cfg mountConfig) (*tableSource, error) {
	u, err := source.ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	raw, err := source.Open(ctx, rawURL)
	if err != nil {
		return nil, err
	}
	ts := &tableSource{url: redact(rawURL), raw: raw, counters: new(metrics.Counters)}
	ts.top = retry.Wrap(metrics.Wrap(raw, ts.counters), retry.Policy{Counters: ts.counters})
	if u.Scheme == "file" {
		return ts, nil
	}
	// A remote source fails fast once dead (source/breaker), as in source/stack.
	fast := breaker.Wrap(metrics.Wrap(raw, ts.counters), breaker.Options{URL: ts.url})
	ts.top = retry.Wrap(limit.Wrap(fast, cfg.maxRequests), retry.Policy{Counters: ts.counters})
	if cfg.metadataTTL > 0 {
		ts.top = listcache.Wrap(ts.top, listcache.Options{TTL: cfg.metadataTTL})
	}
	if cfg.cacheDir != "" {
		ts.disk, err = diskcache.Wrap(ts.top, diskcache.Options{
			Dir: cfg.cacheDir, Budget: cfg.cacheDirSize, BlockSize: cache.DefaultBlockSize, Location: ts.url,
			MetadataTTL: cfg.metadataTTL,
		})
		if err != nil {
			raw.Close()
			return nil, err
		}
		ts.top = ts.disk
	}
	ts.mem = cache.Wrap(ts.top, cache.Options{Budget: cfg.cacheSize, Counters: ts.counters})
	ts.top = ts.mem
	return ts, nil
}

func closeAll(tss []*tableSource) error {
	var errs []error
	for _, ts := range tss {
		errs = append(errs, ts.top.Close())
	}
	return errors.Join(errs...)
}

// transportStats is one table location's counters as .stats shows them.
type transportStats struct {
	URL             string `json:"url"`
	CachedBytes     int64  `json:"cached_bytes"`
	DiskCachedBytes int64  `json:"disk_cached_bytes"`
	metrics.Stats
}

// serve mounts and answers until ctx ends (a signal) or the mount goes away
// (tbfs unmount, fusermount -u), then unmounts and releases everything.
func serve(ctx context.Context, cfg mountConfig, stdout, stderr io.Writer) error {
	level := slog.LevelInfo
	if cfg.debug {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	var sts []*tableSource
	var err error
	if len(cfg.tables) == 0 {
		sts, err = embeddedTables()
	} else {
		sts, err = openTables(ctx, cfg.tables, cfg)
	}
	if err != nil {
		return err
	}
	defer closeAll(sts)
	gsts, err := openTables(ctx, cfg.geister, cfg)
	if err != nil {
		return err
	}
	defer closeAll(gsts)
	srcs := make([]source.Source, len(sts))
	for i, st := range sts {
		srcs[i] = st.top
	}
	missingTTL := cfg.metadataTTL
	if missingTTL == 0 {
		missingTTL = time.Nanosecond // --metadata-ttl 0: ask every time
	}
	tb, err := chesstb.Open(chesstb.Options{BlockCacheBytes: cfg.cacheSize, MissingTTL: missingTTL}, srcs...)
	if err != nil {
		return err
	}
	defer tb.Close()

	var geisterProber fusefs.GeisterProber
	if len(gsts) > 0 {
		gsrcs := make([]source.Source, len(gsts))
		for i, st := range gsts {
			gsrcs[i] = st.top
		}
		gtb, err := geister.Open(geister.Options{CacheBytes: cfg.cacheSize}, gsrcs...)
		if err != nil {
			return err
		}
		defer gtb.Close()
		geisterProber = fusefs.GeisterCollector{Prober: gtb}
	}

	all := append(append([]*tableSource{}, sts...), gsts...)
	tree := fusefs.New(fusefs.Config{
		Prober:    fusefs.Collector{Prober: tb},
		Geister:   geisterProber,
		Tables:    srcs,
		TableURLs: tableURLs(sts, cfg.geister),
		Counters: map[string]func() any{
			"transport": func() any {
				out := make([]transportStats, len(all))
				for i, st := range all {
					out[i] = transportStats{URL: st.url, Stats: st.counters.Stats()}
					if st.mem != nil {
						out[i].CachedBytes = st.mem.Used()
					}
					if st.disk != nil {
						out[i].DiskCachedBytes = st.disk.Used()
					}
				}
				return out
			},
			"block_cache": func() any {
				used, peak := tb.CacheStats()
				return map[string]int64{"used_bytes": used, "peak_bytes": peak, "budget_bytes": cfg.cacheSize}
			},
		},
		Logger: logger,
	})
	defer tree.Close()
	srv, err := fusefs.Mount(cfg.mountpoint, tree, fusefs.MountOptions{AllowOther: cfg.allowOther, Debug: cfg.debug})
	if err != nil {
		return fmt.Errorf("mount %s: %w", cfg.mountpoint, err)
	}
	// The line tells scripts (and the tests) that the mount answers now.
	fmt.Fprintf(stdout, "tbfs: mounted on %s\n", cfg.mountpoint)

	done := make(chan struct{})
	go func() {
		srv.Wait()
		close(done)
	}()
	select {
	case <-done:
		// Unmounted from outside.
		return nil
	case <-ctx.Done():
	}
	logger.Info("unmounting", "mountpoint", cfg.mountpoint)
	if err := srv.Unmount(); err != nil {
		// A reader still has a file open (EBUSY): detach, so the mount
		// point is free at once. The serve loop would run until that
		// reader closes; returning ends the process, which closes the
		// FUSE connection, and the reader's next call fails (ENOTCONN).
		if derr := unix.Unmount(cfg.mountpoint, unix.MNT_DETACH); derr != nil {
			return fmt.Errorf("unmount %s: %v (detach: %v)", cfg.mountpoint, err, derr)
		}
		logger.Info("detached a busy mount", "mountpoint", cfg.mountpoint)
		return nil
	}
	<-done
	return nil
}

// runUnmount unmounts a tbfs mount point: directly when allowed (root),
// else through fusermount3 or fusermount.
func runUnmount(args []string, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintf(stderr, "tbfs: unmount takes one MOUNTPOINT\n%s", usage)
		return 2
	}
	mnt := args[0]
	err := unix.Unmount(mnt, 0)
	if errors.Is(err, unix.EPERM) {
		for _, tool := range []string{"fusermount3", "fusermount"} {
			if path, lerr := exec.LookPath(tool); lerr == nil {
				out, cerr := exec.Command(path, "-u", mnt).CombinedOutput()
				if cerr == nil {
					return 0
				}
				err = fmt.Errorf("%s -u: %v: %s", tool, cerr, strings.TrimSpace(string(out)))
				break
			}
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "tbfs: unmount %s: %v\n", mnt, err)
		return 1
	}
	return 0
}

// tableURLs names the chess table sources as the README shows them (the
// embedded roots when no --tables was given), then the Geister URLs as given.
func tableURLs(sts []*tableSource, geister []string) []string {
	var out []string
	for _, st := range sts {
		out = append(out, st.url)
	}
	for _, g := range geister {
		out = append(out, redact(g))
	}
	return out
}

// redact hides credentials in a table URL for .stats and logs.
func redact(raw string) string { return source.RedactURL(raw) }
