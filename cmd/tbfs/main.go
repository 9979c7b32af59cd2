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
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/tbfs/tbfs/cmd/tbfs/internal/diskcache"
	"github.com/tbfs/tbfs/format/chesstb"
	"github.com/tbfs/tbfs/format/geister"
	"github.com/tbfs/tbfs/fusefs"
	"github.com/tbfs/tbfs/internal/cli"
	"github.com/tbfs/tbfs/source"
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

// mountLong is mount's help text.
const mountLong = `Mounts chess endgame tablebases as a read-only file system at MOUNTPOINT
and answers until SIGINT or SIGTERM (or tbfs unmount), then unmounts.

--tables is repeatable (a directory, file://, s3://bucket/prefix, http(s)://);
tables are searched in the order given. Without --tables the fixture tables
built into the binary (the repository's testdata/chesstb, packs included) are
mounted, from any working directory.

--metadata-ttl is how long what a remote location said about a table (its
size and version, or that it does not exist) is trusted without asking
again: with --cache-dir a remount whose reads are on disk sends no request
within it. A table replaced on the server is never mixed with its old
version; after the TTL it is served as the new one.`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line args and returns the exit status: 0
// success, 1 failure, 2 usage error.
func run(args []string, stdout, stderr io.Writer) int {
	root := &cobra.Command{
		Use:   "tbfs",
		Short: "Mount endgame tablebases as a read-only file system",
		Long: "tbfs mounts chess endgame tablebases as a read-only file system; then\n" +
			"cat \"MOUNTPOINT/chess/8/8/8/5k2/8/8/1Q6/K7 w - - 0 1\" prints what the tables\n" +
			"say about the position. README at the mount's root describes the tree.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			// A bare "tbfs" is a usage mistake, not a request for help.
			cmd.SetOut(cmd.ErrOrStderr())
			cmd.Usage()
			return cli.Exit(2)
		},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(newMountCmd(), newUnmountCmd())
	cli.Setup(root)
	return cli.Execute(root, args)
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

// newMountCmd is "tbfs mount".
func newMountCmd() *cobra.Command {
	var cfg mountConfig
	size := cli.Size(chesstb.DefaultBlockCacheBytes)
	diskSize := cli.Size(1 << 30)
	cmd := &cobra.Command{
		Use:   "mount [flags] MOUNTPOINT",
		Short: "Mount the tables at MOUNTPOINT and serve them until stopped",
		Long:  mountLong,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg.cacheSize, cfg.cacheDirSize = int64(size), int64(diskSize)
			if err := checkMount(&cfg, args); err != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "tbfs: %v\n", err)
				return cli.Exit(2)
			}
			return cli.Exit(runMount(cfg, cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&cfg.geister, "geister", nil, "`URL` where Geister tables are (repeatable); adds geister/ to the mount")
	fl.StringArrayVar(&cfg.tables, "tables", nil, "`URL` where the tables are: a directory, s3://bucket/prefix, http(s)://... (repeatable; searched in order)")
	fl.Var(&size, "cache-size", "`SIZE` of table data kept in memory, for decoded blocks and again for fetched remote blocks (e.g. 64MiB, 1.5G; binary units)")
	fl.StringVar(&cfg.cacheDir, "cache-dir", "", "keep blocks fetched from remote tables in this `DIR`, across remounts")
	fl.Var(&diskSize, "cache-dir-size", "`SIZE` --cache-dir may hold (binary units)")
	fl.DurationVar(&cfg.metadataTTL, "metadata-ttl", 5*time.Minute, "how long a remote table's size and version, or its absence, are trusted without asking again")
	fl.IntVar(&cfg.maxRequests, "max-requests", limit.DefaultRequests, "requests in flight at once to each remote table location")
	fl.BoolVar(&cfg.allowOther, "allow-other", false, "let other users read the mount")
	fl.BoolVar(&cfg.debug, "debug", false, "log every refused path with the reason, and FUSE traffic")
	return cmd
}

// checkMount validates the parsed flags and takes the mount point from args.
func checkMount(cfg *mountConfig, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("mount takes one MOUNTPOINT, got %d arguments", len(args))
	}
	if cfg.metadataTTL < 0 {
		return fmt.Errorf("--metadata-ttl %v: must not be negative", cfg.metadataTTL)
	}
	if cfg.maxRequests <= 0 {
		return fmt.Errorf("--max-requests %d: want a positive number", cfg.maxRequests)
	}
	cfg.mountpoint = args[0]
	return nil
}

func runMount(cfg mountConfig, stdout, stderr io.Writer) int {
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
	ts.top = retry.Wrap(limit.Wrap(metrics.Wrap(raw, ts.counters), cfg.maxRequests), retry.Policy{Counters: ts.counters})
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
	tb, err := chesstb.Open(chesstb.Options{BlockCacheBytes: cfg.cacheSize}, srcs...)
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

// newUnmountCmd is "tbfs unmount".
func newUnmountCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "unmount MOUNTPOINT",
		Aliases: []string{"umount"},
		Short:   "Unmount a tbfs mount point",
		Long:    "Unmounts a tbfs mount point: directly when allowed (root), else through\nfusermount3 or fusermount.",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return cli.UsageError(cmd, "unmount takes one MOUNTPOINT")
			}
			return cli.Exit(runUnmount(args[0], cmd.ErrOrStderr()))
		},
	}
}

// runUnmount unmounts mnt: directly when allowed (root), else through
// fusermount3 or fusermount.
func runUnmount(mnt string, stderr io.Writer) int {
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
	return append(out, geister...)
}

// redact hides credentials in a table URL for .stats and logs.
func redact(raw string) string {
	u, err := source.ParseURL(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return source.Redact(u)
}
