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
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/tbfs/tbfs/source"
)

// Kernel cache lifetimes. Tables never change while mounted, so an answer
// (and a refusal) stays right; the limits only bound how long the kernel
// holds entries the process may want to forget. Errors such as EIO are never
// cached by the kernel, so a failed read is tried again on the next access.
const (
	entryTimeout    = time.Minute
	attrTimeout     = time.Minute
	negativeTimeout = 10 * time.Second
	// volatileTimeout is used for .stats, whose size changes with every
	// snapshot. A zero timeout would be replaced by the defaults above.
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

	// Logger, when not nil, receives one line for every refused path with
	// the reason, and every transport failure (tbfs --debug).
	Logger *slog.Logger
}

// FS is a mountable tree. It is safe for concurrent use by the FUSE server.
type FS struct {
	cfg    Config
	stats  stats
	tables tableIndex
	readme []byte
}

// New builds the tree cfg describes. Nothing is read from the sources until
// the tree is used.
func New(cfg Config) *FS {
	f := &FS{cfg: cfg}
	f.tables.srcs = cfg.Tables
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
	AllowOther bool
	// Debug logs every FUSE request and reply (very verbose).
	Debug bool
}

// Mount mounts f on dir and starts serving it. The caller unmounts with
// the returned server's Unmount and may Wait for the serve loop to end.
// It mounts directly through the mount system call when it can (as root)
// and falls back to fusermount otherwise.
func Mount(dir string, f *FS, opts MountOptions) (*fuse.Server, error) {
	et, at, nt := entryTimeout, attrTimeout, negativeTimeout
	return fs.Mount(dir, f.Root(), &fs.Options{
		MountOptions: fuse.MountOptions{
			AllowOther:  opts.AllowOther,
			Debug:       opts.Debug,
			FsName:      "tbfs",
			Name:        "tbfs",
			DirectMount: true,
			// The tree has no extended attributes; the first ENOSYS tells
			// the kernel to stop asking, saving a round trip per file for
			// ls -l and cp.
			DisableXAttrs: true,
		},
		EntryTimeout:    &et,
		AttrTimeout:     &at,
		NegativeTimeout: &nt,
	})
}

// rootNode is the mount's top directory; its children are fixed.
type rootNode struct {
	fs.Inode
	fs *FS
}

var _ = (fs.NodeOnAdder)((*rootNode)(nil))
var _ = (fs.NodeGetattrer)((*rootNode)(nil))

// views are the position directories and what each file in them shows.
var views = []view{viewChess, viewWDL, viewDTZ, viewDTM, viewDTM50, viewDTC, viewMoves}

// OnAdd builds the fixed part of the tree when the root is mounted.
func (r *rootNode) OnAdd(ctx context.Context) {
	r.AddChild("README", r.NewPersistentInode(ctx, &dataFile{data: r.fs.readme}, fs.StableAttr{Mode: fuse.S_IFREG}), false)
	r.AddChild(".stats", r.NewPersistentInode(ctx, &statsFile{fs: r.fs}, fs.StableAttr{Mode: fuse.S_IFREG}), false)
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
	out.Mode = fuse.S_IFDIR | 0o555
	return 0
}

// dataFile is a file whose bytes are fixed when the node is made: README
// and every position answer. Its content never changes, so the kernel may
// keep its pages across opens.
type dataFile struct {
	fs.Inode
	data []byte
}

var _ = (fs.NodeGetattrer)((*dataFile)(nil))
var _ = (fs.NodeOpener)((*dataFile)(nil))
var _ = (fs.NodeReader)((*dataFile)(nil))

// Getattr reports the content's exact size.
func (d *dataFile) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	fileAttr(&out.Attr, int64(len(d.data)))
	return 0
}

// Open refuses writing and lets the kernel keep the cached pages.
func (d *dataFile) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if flags&(syscall.O_WRONLY|syscall.O_RDWR) != 0 {
		return nil, 0, syscall.EROFS
	}
	return nil, fuse.FOPEN_KEEP_CACHE, 0
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
func fileAttr(a *fuse.Attr, size int64) {
	a.Mode = fuse.S_IFREG | 0o444
	a.Size = uint64(size)
	a.Blocks = (uint64(size) + 511) / 512
	a.Nlink = 1
}

// dirAttr fills a read-only directory's attributes.
func dirAttr(a *fuse.Attr) {
	a.Mode = fuse.S_IFDIR | 0o555
	a.Nlink = 2
}
