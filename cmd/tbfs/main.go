// Command tbfs mounts chess endgame tablebases as a read-only file system:
//
//	tbfs mount [--tables URL]... [--plugin-dir DIR] [--uid N] [--gid N] [--umask OCTAL] [--daemon] ... MOUNTPOINT
//	tbfs unmount MOUNTPOINT
//
// after which `cat "MOUNTPOINT/chess/8/8/8/5k2/8/8/1Q6/K7 w - - 0 1"` prints
// what the tables say about the position, from any program, with the tables
// left where they are (a directory, s3://bucket/prefix, http(s)://..., or a
// transport plugin's URL), opened as tbprobe opens them (internal/tables).
// The mount is read-only (ro); it runs in the foreground, or in the
// background with --daemon, and unmounts cleanly on SIGINT or SIGTERM.
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

	"github.com/hashicorp/go-hclog"

	"github.com/tbfs/tbfs/format/chesstb"
	"github.com/tbfs/tbfs/format/geister"
	"github.com/tbfs/tbfs/fusefs"
	"github.com/tbfs/tbfs/internal/daemon"
	"github.com/tbfs/tbfs/internal/tables"
	"github.com/tbfs/tbfs/plugins/host"
	"github.com/tbfs/tbfs/source/limit"
	"github.com/tbfs/tbfs/source/metrics"
	"github.com/tbfs/tbfs/source/stack"
)

const usage = `usage:
  tbfs mount [--tables URL]... [--geister URL]... [--cache-size BYTES]
             [--cache-dir DIR [--cache-dir-size BYTES]] [--metadata-ttl DURATION]
             [--max-requests N] [--plugin-dir DIR] [--plugin-sha256 NAME=HEX]...
             [--uid N] [--gid N] [--umask OCTAL] [--allow-other]
             [--log-level LEVEL] [--debug] [--daemon [--log-file FILE]] MOUNTPOINT
  tbfs unmount MOUNTPOINT

--tables is repeatable (a directory, file://, s3://bucket/prefix, http(s)://,
or a scheme a transport plugin serves, such as ftp://); tables are searched
in the order given. The URL forms and plugins are tbprobe's. Without --tables the fixture tables
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
	pluginDir    string
	pluginPins   host.Checksums
	owner        fusefs.Owner
	umask        uint32
	logLevel     slog.Level
	daemon       bool
	logFile      string
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
	fl.StringVar(&cfg.pluginDir, "plugin-dir", "", "directory of tbfs-source-* transport plugins (also $"+host.EnvDir+")")
	fl.Var(&cfg.pluginPins, "plugin-sha256", "NAME=HEX: run plugin NAME only if its binary has this SHA-256 (repeatable; when given, unpinned plugins do not run)")
	uid := fl.Uint("uid", uint(os.Geteuid()), "user that owns every file of the mount")
	gid := fl.Uint("gid", uint(os.Getegid()), "group that owns every file of the mount")
	umask := fl.String("umask", "022", "permission bits to clear (octal) from files (0444) and directories (0555)")
	logLevel := fl.String("log-level", "info", "least severe log messages printed: debug, info, warn or error")
	fl.BoolVar(&cfg.daemon, "daemon", false, "run in the background; exit 0 once the mount answers, non-zero if it cannot mount")
	fl.StringVar(&cfg.logFile, "log-file", "", "with --daemon, append the log here (default: discarded)")
	fl.Usage = func() { fmt.Fprint(stderr, usage) }
	if err := fl.Parse(args); err != nil {
		return cfg, err
	}
	if *uid > 1<<32-1 || *gid > 1<<32-1 {
		return cfg, fmt.Errorf("--uid/--gid: want a number below 2^32")
	}
	cfg.owner = fusefs.Owner{UID: uint32(*uid), GID: uint32(*gid)}
	m, err := strconv.ParseUint(*umask, 8, 32)
	if err != nil || m > 0o777 {
		return cfg, fmt.Errorf("--umask %q: want octal permission bits such as 022 or 077", *umask)
	}
	cfg.umask = uint32(m)
	if err := cfg.logLevel.UnmarshalText([]byte(*logLevel)); err != nil {
		return cfg, fmt.Errorf("--log-level %q: want debug, info, warn or error", *logLevel)
	}
	if cfg.debug {
		cfg.logLevel = slog.LevelDebug
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
	if cfg.daemon {
		// The same command in the background, which tells this one when
		// its mount answers.
		pid, err := daemon.Start(append([]string{"mount"}, withoutDaemonFlag(args)...), cfg.logFile)
		if err != nil {
			fmt.Fprintf(stderr, "tbfs: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "tbfs: mounted on %s (pid %d)\n", cfg.mountpoint, pid)
		return 0
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := serve(ctx, cfg, stdout, stderr); err != nil {
		daemon.Ready(err)
		fmt.Fprintf(stderr, "tbfs: %v\n", err)
		return 1
	}
	return 0
}

// withoutDaemonFlag returns args without --daemon, for the background
// process to run in the foreground.
func withoutDaemonFlag(args []string) []string {
	var out []string
	for _, a := range args {
		switch a {
		case "--daemon", "-daemon", "--daemon=true", "-daemon=true":
			continue
		}
		out = append(out, a)
	}
	return out
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
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: cfg.logLevel}))

	opener, err := tables.NewOpener(ctx, tables.Options{
		Stack: stack.Options{
			CacheBytes: cfg.cacheSize, MaxRequests: cfg.maxRequests, MetadataTTL: cfg.metadataTTL,
			Disk: stack.DiskOptions{Dir: cfg.cacheDir, Budget: cfg.cacheDirSize},
		},
		PluginDir:       cfg.pluginDir,
		PluginChecksums: cfg.pluginPins,
		PluginLogger:    pluginLogger(stderr, cfg.logLevel),
	})
	if err != nil {
		return err
	}
	defer opener.Close()
	var sts tables.Set
	if len(cfg.tables) == 0 {
		sts, err = opener.Embedded()
	} else {
		sts, err = opener.Open(ctx, cfg.tables)
	}
	if err != nil {
		return err
	}
	defer sts.Close()
	gsts, err := opener.Open(ctx, cfg.geister)
	if err != nil {
		return err
	}
	defer gsts.Close()
	srcs := sts.Sources()
	tb, err := chesstb.Open(chesstb.Options{BlockCacheBytes: cfg.cacheSize}, srcs...)
	if err != nil {
		return err
	}
	defer tb.Close()

	var geisterProber fusefs.GeisterProber
	if len(gsts) > 0 {
		gtb, err := geister.Open(geister.Options{CacheBytes: cfg.cacheSize}, gsts.Sources()...)
		if err != nil {
			return err
		}
		defer gtb.Close()
		geisterProber = fusefs.GeisterCollector{Prober: gtb}
	}

	all := append(append(tables.Set{}, sts...), gsts...)
	tree := fusefs.New(fusefs.Config{
		Prober:    fusefs.Collector{Prober: tb},
		Geister:   geisterProber,
		Tables:    srcs,
		TableURLs: append(sts.URLs(), gsts.URLs()...),
		Owner:     &cfg.owner,
		Umask:     cfg.umask,
		Counters: map[string]func() any{
			"transport": func() any {
				out := make([]transportStats, len(all))
				for i, st := range all {
					out[i] = transportStats{URL: st.URL, Stats: st.Stats(), CachedBytes: st.CachedBytes(), DiskCachedBytes: st.DiskCachedBytes()}
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
	// The line tells scripts (and the tests) that the mount answers now;
	// so does the status a --daemon parent waits for.
	fmt.Fprintf(stdout, "tbfs: mounted on %s\n", cfg.mountpoint)
	daemon.Ready(nil)

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

// pluginLogger passes the plugin host's messages to stderr at the mount's
// log level.
func pluginLogger(w io.Writer, level slog.Level) hclog.Logger {
	l := hclog.Info
	switch {
	case level <= slog.LevelDebug:
		l = hclog.Debug
	case level >= slog.LevelError:
		l = hclog.Error
	case level >= slog.LevelWarn:
		l = hclog.Warn
	}
	return hclog.New(&hclog.LoggerOptions{Name: "plugins", Level: l, Output: w})
}
