// Command tbfs mounts chess endgame tablebases as a read-only file system:
//
//	tbfs mount [--tables URL]... [--plugin-dir DIR] [--uid N] [--gid N] [--umask OCTAL] [--daemon] ... MOUNTPOINT
//	tbfs unmount MOUNTPOINT
//
// after which `cat "MOUNTPOINT/chess/8/8/8/5k2/8/8/1Q6/K7 w - - 0 1"` prints
// what the tables say about the position, from any program, with the tables
// left where they are (a directory, s3://bucket/prefix, http(s)://..., or a
// transport plugin's URL), opened as tbprobe opens them (cmd/internal/tables).
// The mount is read-only (ro); it runs in the foreground, or in the
// background with --daemon, and unmounts cleanly on SIGINT or SIGTERM.
// README at the mount's root describes the tree. Without --geister, geister/
// serves the Geister fixture table built into the binary.
//
// The commands are spf13/cobra commands (newMountCmd, newUnmountCmd; a new
// one is an AddCommand in run), with --version, completion and man DIR from
// cmd/internal/cli. tbfs mount -h lists every flag.
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
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/tbfs/tbfs/chessprobe"
	"github.com/tbfs/tbfs/cmd/internal/cli"
	"github.com/tbfs/tbfs/cmd/internal/daemon"
	"github.com/tbfs/tbfs/cmd/internal/exepages"
	"github.com/tbfs/tbfs/cmd/internal/tables"
	"github.com/tbfs/tbfs/format/chesstb"
	"github.com/tbfs/tbfs/format/geister"
	"github.com/tbfs/tbfs/fusefs"
	"github.com/tbfs/tbfs/plugins/host"
	"github.com/tbfs/tbfs/source/limit"
	"github.com/tbfs/tbfs/source/metrics"
	"github.com/tbfs/tbfs/source/stack"
)

// mountLong is mount's help text.
const mountLong = `Mounts chess endgame tablebases as a read-only file system at MOUNTPOINT
and answers until SIGINT or SIGTERM (or tbfs unmount), then unmounts.

--tables is repeatable (a directory, file://, s3://bucket/prefix, http(s)://,
or a scheme a transport plugin serves, such as ftp:// with tbfs-source-ftp in
--plugin-dir); tables are searched in the order given. The URL forms and
plugins are tbprobe's. Without --tables the fixture tables
built into the binary (the repository's testdata/chesstb, packs included,
and testdata/syzygy) are mounted, from any working directory.

--metadata-ttl is how long what a remote location said about a table (its
size and version, or that it does not exist) is trusted without asking
again (0 asks every time): with --cache-dir a remount whose reads are on
disk sends no request within it. A table replaced on the server is never mixed with its old
version; after the TTL it is served as the new one.

--decoded-cache keeps decoded distance and pack blocks on local disk (LZ4,
a checksum per block, within --decoded-cache-size), so a remount reads them
back instead of decoding their LZMA again; a damaged file there is decoded
afresh, never served.

Block integrity manifests (tbprobe verify --manifest, and tbprobe geister
verify --manifest for the --geister tables) are looked for beside the
tables, or in the local folder --manifests names, for tables in a location
that holds none (a read-only bucket): with one, a table's blocks, pages or
chunks are checked as they are read, instead of the whole file before its
first answer.

The mount is read-only (ro in /proc/mounts) and the kernel enforces the
modes it shows: files 0444 and directories 0555 less --umask, owned by
--uid and --gid; tables/ shows table files only, never more readable than
the source's own. With --daemon the command returns once the mount answers
(exit 0), or exits non-zero with the reason if it cannot mount.`

func main() {
	// Nothing reads heap profiles: sampling allocations for one would only
	// walk stacks and keep their records.
	runtime.MemProfileRate = 0
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
	metadataTTL  tables.MetadataTTL
	manifests    tables.ManifestDir
	maxRequests  int
	pluginDir    string
	pluginPins   host.Checksums
	owner        fusefs.Owner
	umask        uint32
	logLevel     slog.Level
	daemon       bool
	logFile      string
	// decoded keeps decoded blocks on disk across remounts.
	decoded tables.DecodedCache
}

// newMountCmd is "tbfs mount".
func newMountCmd() *cobra.Command {
	var cfg mountConfig
	size := cli.Size(chesstb.DefaultBlockCacheBytes)
	diskSize := cli.Size(1 << 30)
	var uid, gid uint32
	var umask, logLevel string
	cmd := &cobra.Command{
		Use:   "mount [flags] MOUNTPOINT",
		Short: "Mount the tables at MOUNTPOINT and serve them until stopped",
		Long:  mountLong,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg.cacheSize, cfg.cacheDirSize = int64(size), int64(diskSize)
			cfg.owner = fusefs.Owner{UID: uid, GID: gid}
			if err := parseMountOptions(&cfg, umask, logLevel); err != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "tbfs: %v\n", err)
				return cli.Exit(2)
			}
			if err := checkMount(&cfg, args); err != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "tbfs: %v\n", err)
				return cli.Exit(2)
			}
			return cli.Exit(runMount(cfg, cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&cfg.geister, "geister", nil, "`URL` where Geister tables are, for geister/ (repeatable; default: the fixture table built in)")
	fl.StringArrayVar(&cfg.tables, "tables", nil, "`URL` where the tables are: a directory, s3://bucket/prefix, http(s)://... or a plugin's URL (repeatable; searched in order)")
	fl.Var(&size, "cache-size", "`SIZE` of table data kept in memory, for decoded blocks and again for fetched remote blocks (e.g. 64MiB, 1.5G; binary units)")
	fl.StringVar(&cfg.cacheDir, "cache-dir", "", "keep blocks fetched from remote tables in this `DIR`, across remounts")
	fl.Var(&diskSize, "cache-dir-size", "`SIZE` --cache-dir may hold (binary units)")
	cfg.metadataTTL.Register(fl, "how long a remote table's size and version, or its absence, are trusted without asking again")
	fl.IntVar(&cfg.maxRequests, "max-requests", limit.DefaultRequests, "requests in flight at once to each remote table location")
	fl.BoolVar(&cfg.allowOther, "allow-other", false, "let other users read the mount")
	fl.BoolVar(&cfg.debug, "debug", false, "log every refused path with the reason, and FUSE traffic (implies --log-level debug)")
	fl.StringVar(&cfg.pluginDir, "plugin-dir", "", "`DIR` of tbfs-source-* transport plugins (also $"+host.EnvDir+")")
	fl.Var(&cfg.pluginPins, "plugin-sha256", "`NAME=HEX`: run plugin NAME only if its binary has this SHA-256 (repeatable; when given, unpinned plugins do not run)")
	fl.Uint32Var(&uid, "uid", uint32(os.Geteuid()), "user `ID` that owns every file of the mount")
	fl.Uint32Var(&gid, "gid", uint32(os.Getegid()), "group `ID` that owns every file of the mount")
	fl.StringVar(&umask, "umask", "022", "permission `BITS` (octal) to clear from files (0444) and directories (0555)")
	fl.StringVar(&logLevel, "log-level", "info", "least severe `LEVEL` of log messages printed: debug, info, warn or error")
	fl.BoolVar(&cfg.daemon, "daemon", false, "run in the background; exit 0 once the mount answers, non-zero if it cannot mount")
	fl.StringVar(&cfg.logFile, "log-file", "", "with --daemon, append the log to this `FILE` (default: discarded)")
	cfg.decoded.Register(fl)
	cfg.manifests.Register(fl)
	return cmd
}

// parseMountOptions reads --umask and --log-level into cfg.
func parseMountOptions(cfg *mountConfig, umask, logLevel string) error {
	m, err := strconv.ParseUint(umask, 8, 32)
	if err != nil || m > 0o777 {
		return fmt.Errorf("--umask %q: want octal permission bits such as 022 or 077", umask)
	}
	cfg.umask = uint32(m)
	if err := cfg.logLevel.UnmarshalText([]byte(logLevel)); err != nil {
		return fmt.Errorf("--log-level %q: want debug, info, warn or error", logLevel)
	}
	if cfg.debug {
		cfg.logLevel = slog.LevelDebug
	}
	return nil
}

// checkMount validates the parsed flags and takes the mount point from args.
func checkMount(cfg *mountConfig, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("mount takes one MOUNTPOINT, got %d arguments", len(args))
	}
	if cfg.maxRequests <= 0 {
		return fmt.Errorf("--max-requests %d: want a positive number", cfg.maxRequests)
	}
	cfg.mountpoint = args[0]
	return nil
}

func runMount(cfg mountConfig, stdout, stderr io.Writer) int {
	if cfg.daemon {
		// The same command line in the background, which tells this
		// process when its mount answers.
		pid, err := daemon.Start(withoutDaemonFlag(os.Args[1:]), cfg.logFile)
		if err != nil {
			fmt.Fprintf(stderr, "tbfs: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "tbfs: mounted on %s (pid %d)\n", cfg.mountpoint, pid)
		return 0
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The mount logs, and its failure, go through one log/slog text logger
	// (the format tbprobe serve uses), also slog's default so libraries
	// that log through the standard log package (go-fuse's --debug
	// traffic) write the same format. Only the "mounted on" line, which
	// scripts wait for, is plain output.
	logger := cli.NewLogger(stderr, cfg.logLevel)
	slog.SetDefault(logger)
	if err := serve(ctx, cfg, logger, stdout, stderr); err != nil {
		daemon.Ready(err)
		logger.Error("tbfs mount failed", "err", err)
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
		case "--daemon", "--daemon=true":
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
func serve(ctx context.Context, cfg mountConfig, logger *slog.Logger, stdout, stderr io.Writer) error {
	opener, err := tables.NewOpener(ctx, tables.Options{
		Stack: stack.Options{
			CacheBytes: cfg.cacheSize, MaxRequests: cfg.maxRequests, MetadataTTL: cfg.metadataTTL.TTL(),
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
	var gsts tables.Set
	if len(cfg.geister) == 0 {
		gsts, err = opener.EmbeddedGeister()
	} else {
		gsts, err = opener.Open(ctx, cfg.geister)
	}
	if err != nil {
		return err
	}
	defer gsts.Close()
	srcs := sts.Sources()
	// --metadata-ttl also bounds how long a missing table is remembered,
	// as it does the listing.
	// chesstb and Syzygy tables are found by name in the same locations,
	// within one decoded-block budget.
	topts := chesstb.Options{BlockCacheBytes: cfg.cacheSize, MissingTTL: cfg.metadataTTL.TTL()}
	manifests, err := cfg.manifests.Open()
	if err != nil {
		return err
	}
	if manifests != nil {
		defer manifests.Close()
		topts.Manifests = manifests
	}
	decoded, err := cfg.decoded.Open()
	if err != nil {
		return err
	}
	if decoded != nil {
		topts.DecodedBlocks = decoded
	}
	tb, err := chessprobe.Open(topts, srcs...)
	if err != nil {
		return err
	}
	defer tb.Close()

	// One --manifests folder holds the chess tables' manifests and the
	// Geister tables' frame manifests; their names do not meet.
	gtb, err := geister.Open(geister.Options{CacheBytes: cfg.cacheSize, MissingTTL: cfg.metadataTTL.TTL(), Manifests: manifests}, gsts.Sources()...)
	if err != nil {
		return err
	}
	defer gtb.Close()
	// A mount's caches fill and stay full: keep the heap near them (the
	// chess and Geister decoded blocks, each remote location's blocks).
	tables.SetMemoryLimit(2*cfg.cacheSize + sts.CacheBudget() + gsts.CacheBudget())

	// .stats lists the locations asked for: the embedded Geister fixture,
	// there when no --geister was given, moves no bytes over a transport.
	all := append(tables.Set{}, sts...)
	if len(cfg.geister) > 0 {
		all = append(all, gsts...)
	}
	tree := fusefs.New(fusefs.Config{
		Prober:    fusefs.Collector{Prober: tb.Prober},
		Geister:   fusefs.GeisterCollector{Prober: gtb},
		Tables:    srcs,
		TableURLs: append(sts.URLs(), gsts.URLs()...),
		Owner:     &cfg.owner,
		Umask:     cfg.umask,
		// An answer naming a missing table is kept by the kernel only
		// as long as the tables remember the miss.
		MissingTTL: cfg.metadataTTL.TTL(),
		Counters: map[string]func() any{
			"transport": func() any {
				out := make([]transportStats, len(all))
				for i, st := range all {
					out[i] = transportStats{URL: st.URL, Stats: st.Stats(), CachedBytes: st.CachedBytes(), DiskCachedBytes: st.DiskCachedBytes()}
				}
				return out
			},
			"block_cache": func() any {
				used, peak := tb.Cache.Stats()
				return map[string]int64{"used_bytes": used, "peak_bytes": peak, "budget_bytes": cfg.cacheSize}
			},
			"decoded_cache": func() any {
				if decoded == nil {
					return nil
				}
				return decoded.Stats()
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
	logger.Info("mounted", "mountpoint", cfg.mountpoint, "tables", append(sts.URLs(), gsts.URLs()...), "version", cli.Version())
	// Start-up (package initialisation, the tables opened, the mount) is
	// over: the code only it ran need not stay resident (package exepages
	// says why).
	exepages.Release()

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
