// Package fusefs is the file tree tbfs mounts: a read-only FUSE view in which
// every chess position is a path. Reading chess/<FEN> prints what the tables
// say about the position, wdl/<FEN> and its siblings print one metric,
// moves/<FEN> lists every legal move with its values, and tables/ passes the
// raw table files through, read through the same source (and cache) as the
// prober, so other tools can use the mounted tables.
//
// The tree is a library so it can be tested without the command: New builds
// it from a Config, Mount puts it on a directory.
package fusefs

import (
	"context"
	"log/slog"
	"os"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/tbfs/tbfs/source"
)

// Kernel cache lifetimes. Tables never change while mounted (each is
// pinned to the version first opened), so an answer stays right for the
// life of the mount: the kernel may keep entries, attributes and pages as
// long as it likes, and a path read once costs no round trip again. A
// refusal is kept briefly, as a table missing now may be listed later, and
// an answer that says a table is missing only for Config.MissingTTL.
// Errors such as EIO are never cached by the kernel, so a failed read is
// tried again on the next access.
const (
	immutableTimeout = 24 * time.Hour
	negativeTimeout  = 10 * time.Second
	// volatileTimeout is used for .stats, looked up afresh at every open.
	// A zero timeout would be replaced by the defaults above.
	volatileTimeout = time.Nanosecond
)

// Config says what a tree serves.
type Config struct {
	// Prober answers positions for chess/, the metric views and moves/.
	Prober Prober

	// Geister, when set, answers Geister boards under geister/; without
	// it there is no geister/ directory.
	Geister GeisterProber

	// Tables are the sources tables/ lists and reads, in search order: a
	// name found in several sources is served from the first, as the
	// prober does. Sources that cannot list contribute nothing to tables/.
	Tables []source.Source

	// TableURLs name where the tables come from; README shows them.
	TableURLs []string

	// Counters adds named snapshots (transport and cache counters, for
	// example) to .stats. Each function must return a value that
	// encoding/json can marshal and must be safe for concurrent use.
	Counters map[string]func() any

	// TableNames says which names of the table sources tables/ serves.
	// Nil means table files the chess reader recognises and their block
	// manifests (IsTableFile); everything else in the folder (keys,
	// credentials, notes) stays invisible.
	TableNames func(name string) bool

	// Owner owns every file and directory; nil means the user and group
	// of the process.
	Owner *Owner

	// Umask clears permission bits: files are 0444 (a table file at most
	// what its source allows) and directories 0555 before it.
	Umask uint32

	// Logger, when not nil, receives one line for every refused path with
	// the reason, and every transport failure (tbfs --debug).
	Logger *slog.Logger

	// MissingTTL is how long the kernel may keep an answer that says a
	// table is missing (a material with no table, a metric or a move no
	// table answers), and at most how long it keeps a refused path: the
	// tablebase looks for a missing table again after its own TTL, which
	// this should equal, and the answer must then be asked anew. Zero
	// keeps such answers for no time at all.
	MissingTTL time.Duration
}

// missingTimeout is how long the kernel may keep an answer that says a
// table is missing (Config.MissingTTL; a zero timeout would be replaced by
// the mount's defaults).
func (f *FS) missingTimeout() time.Duration {
	if f.cfg.MissingTTL <= 0 {
		return volatileTimeout
	}
	return min(f.cfg.MissingTTL, immutableTimeout)
}

// keepPartial bounds how long the kernel keeps the file just looked up,
// whose answer says a table is missing.
func (f *FS) keepPartial(out *fuse.EntryOut) {
	out.SetEntryTimeout(f.missingTimeout())
	out.SetAttrTimeout(f.missingTimeout())
}

// Owner is a numeric user and group.
type Owner struct{ UID, GID uint32 }

// FS is a mountable tree. It is safe for concurrent use by the FUSE server.
type FS struct {
	cfg    Config
	stats  stats
	tables tableIndex
	readme []byte
	owner  Owner
}

// New builds the tree cfg describes. Nothing is read from the sources until
// the tree is used.
func New(cfg Config) *FS {
	f := &FS{cfg: cfg}
	if cfg.Owner != nil {
		f.owner = *cfg.Owner
	} else {
		f.owner = Owner{UID: uint32(os.Geteuid()), GID: uint32(os.Getegid())}
	}
	f.tables.srcs = cfg.Tables
	f.tables.names = cfg.TableNames
	f.tables.opens = &f.stats.tableOpens
	if f.tables.names == nil {
		f.tables.names = IsTableFile
	}
	f.readme = readmeText(cfg)
	return f
}

// Root returns the node to mount; each call makes a fresh root, so one FS
// can be mounted more than once.
func (f *FS) Root() fs.InodeEmbedder { return &rootNode{fs: f} }

// Close releases the table objects tables/ opened. It does not close the
// sources, which the caller owns.
func (f *FS) Close() error { return f.tables.close() }

// MountOptions are the mount settings tbfs exposes.
type MountOptions struct {
	// AllowOther lets users other than the one mounting read the tree.
	// The kernel checks every access against the modes shown
	// (default_permissions), so a file is readable only by whom its mode
	// lets read it.
	AllowOther bool
	// Debug logs every FUSE request and reply (very verbose).
	Debug bool
}

// Mount mounts f on dir, read-only, and starts serving it. The caller
// unmounts with the returned server's Unmount and may Wait for the serve
// loop to end. It mounts directly through the mount system call when it can
// (as root) and falls back to fusermount otherwise.
//
// dir must be an existing directory that nothing is mounted on; a stale
// FUSE mount (its server gone) is reported as such. On any error nothing
// is left mounted.
func Mount(dir string, f *FS, opts MountOptions) (*fuse.Server, error) {
	if err := CheckMountpoint(dir); err != nil {
		return nil, err
	}
	srv, err := fs.Mount(dir, f.Root(), f.mountOptions(opts))
	if err != nil {
		// A mount that failed after the mount call (the kernel's first
		// request never answered) can still be attached: detach it so
		// the failure leaves nothing behind.
		if mounted, _ := IsMounted(dir); mounted {
			unix.Unmount(dir, unix.MNT_DETACH)
		}
		return nil, err
	}
	return srv, nil
}

// mountOptions are the go-fuse settings Mount uses: the mount options and
// the kernel cache lifetimes.
func (f *FS) mountOptions(opts MountOptions) *fs.Options {
	// A refusal may be a metric whose table is missing: kept no longer
	// than an answer saying so.
	et, nt := immutableTimeout, min(negativeTimeout, f.missingTimeout())
	return &fs.Options{
		MountOptions: fuse.MountOptions{
			AllowOther: opts.AllowOther,
			Debug:      opts.Debug,
			FsName:     "tbfs",
			Name:       "tbfs",
			// "ro" makes the kernel refuse every change before asking
			// tbfs (EROFS, for any user) and shows in /proc/mounts; the
			// kernel also enforces the modes the tree reports.
			Options:          []string{"ro", "default_permissions"},
			DirectMount:      true,
			DirectMountFlags: syscall.MS_RDONLY | syscall.MS_NOSUID | syscall.MS_NODEV,
			// The tree has no extended attributes; the first ENOSYS tells
			// the kernel to stop asking, saving a round trip per file for
			// ls -l and cp.
			DisableXAttrs: true,
			// Every read is answered from memory (ReadResultData), which
			// go-fuse would otherwise try to splice first: a pipe
			// written and drained per read for nothing.
			DisableSplice: true,
		},
		EntryTimeout:    &et,
		AttrTimeout:     &et,
		NegativeTimeout: &nt,
	}
}

// rootNode is the mount's top directory; its children are fixed but for
// .stats, made afresh at each lookup.
type rootNode struct {
	fs.Inode
	readOnlyDir
	fs *FS
}

var _ = (fs.NodeOnAdder)((*rootNode)(nil))
var _ = (fs.NodeGetattrer)((*rootNode)(nil))
var _ = (fs.NodeLookuper)((*rootNode)(nil))
var _ = (fs.NodeReaddirer)((*rootNode)(nil))

// statsName is the file of counters at the root.
const statsName = ".stats"

// views are the position directories and what each file in them shows.
var views = []view{viewChess, viewWDL, viewDTZ, viewDTM, viewDTM50, viewDTC, viewMoves}

// OnAdd builds the fixed part of the tree when the root is mounted.
func (r *rootNode) OnAdd(ctx context.Context) {
	r.AddChild("README", r.NewPersistentInode(ctx, &dataFile{fs: r.fs, data: r.fs.readme}, fs.StableAttr{Mode: fuse.S_IFREG}), false)
	r.AddChild("tables", r.NewPersistentInode(ctx, &tableDir{fs: r.fs}, fs.StableAttr{Mode: fuse.S_IFDIR}), false)
	for _, v := range views {
		r.AddChild(v.dir(), r.NewPersistentInode(ctx, &rankDir{fs: r.fs, view: v}, fs.StableAttr{Mode: fuse.S_IFDIR}), false)
	}
	if r.fs.cfg.Geister != nil {
		r.AddChild("geister", r.NewPersistentInode(ctx, &geisterDir{fs: r.fs}, fs.StableAttr{Mode: fuse.S_IFDIR}), false)
	}
}

// Getattr reports a read-only directory.
func (r *rootNode) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	r.fs.dirAttr(&out.Attr)
	return 0
}

// Lookup finds a fixed child, or takes a snapshot of the counters for
// .stats: each lookup makes a new file holding one consistent snapshot,
// with a lifetime so short that the next open looks it up again. A file's
// content never changes, so the kernel may keep every file's pages (tbfs
// answers no opens at all, see dataFile.Open).
func (r *rootNode) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if name == statsName {
		data := r.fs.statsJSON()
		r.fs.fileAttr(&out.Attr, int64(len(data)))
		out.SetEntryTimeout(volatileTimeout)
		return r.NewInode(ctx, &dataFile{fs: r.fs, data: data}, fs.StableAttr{Mode: fuse.S_IFREG}), 0
	}
	child := r.GetChild(name)
	if child == nil {
		return nil, syscall.ENOENT
	}
	var a fuse.AttrOut
	if ga, ok := child.Operations().(fs.NodeGetattrer); ok {
		if errno := ga.Getattr(ctx, nil, &a); errno != 0 {
			return nil, errno
		}
	}
	out.Attr = a.Attr
	return child, 0
}

// Readdir lists the fixed children and .stats.
func (r *rootNode) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	out := []fuse.DirEntry{{Name: statsName, Mode: fuse.S_IFREG}}
	for name, child := range r.Children() {
		out = append(out, fuse.DirEntry{Name: name, Mode: child.Mode(), Ino: child.StableAttr().Ino})
	}
	return fs.NewListDirStream(out), 0
}

// dataFile is a file whose bytes are fixed when the node is made: README,
// a .stats snapshot and every position answer. Its content never changes,
// so the kernel may keep its pages for the life of the mount.
type dataFile struct {
	fs.Inode
	immutableFile
	fs   *FS
	data []byte
}

var _ = (fs.NodeGetattrer)((*dataFile)(nil))
var _ = (fs.NodeReader)((*dataFile)(nil))

// Getattr reports the content's exact size.
func (d *dataFile) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	d.fs.fileAttr(&out.Attr, int64(len(d.data)))
	return 0
}

// Read copies from the fixed content.
func (d *dataFile) Read(ctx context.Context, fh fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	return fuse.ReadResultData(sliceAt(d.data, off, len(dest))), 0
}

// sliceAt returns up to n bytes of data from off, empty past the end.
func sliceAt(data []byte, off int64, n int) []byte {
	if off < 0 || off >= int64(len(data)) {
		return nil
	}
	end := min(off+int64(n), int64(len(data)))
	return data[off:end]
}

// fileAttr fills a read-only regular file's attributes.
func (f *FS) fileAttr(a *fuse.Attr, size int64) { f.fileAttrMode(a, size, 0o444) }

// fileAttrMode fills a regular file's attributes with the read bits of
// perm, narrowed by the umask: never writable, never executable.
func (f *FS) fileAttrMode(a *fuse.Attr, size int64, perm uint32) {
	a.Mode = fuse.S_IFREG | (perm & 0o444 &^ f.cfg.Umask)
	a.Size = uint64(size)
	a.Blocks = (uint64(size) + 511) / 512
	a.Nlink = 1
	a.Uid, a.Gid = f.owner.UID, f.owner.GID
}

// dirAttr fills a read-only directory's attributes.
func (f *FS) dirAttr(a *fuse.Attr) {
	a.Mode = fuse.S_IFDIR | (0o555 &^ f.cfg.Umask)
	a.Nlink = 2
	a.Uid, a.Gid = f.owner.UID, f.owner.GID
}
