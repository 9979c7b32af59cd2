package fusefs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/tbfs/tbfs/source"
)

// firstTableIno is the inode number of the first tables/ entry. Entries get
// fixed numbers so the kernel sees one inode per table however often it
// looks the name up, which keeps a table's cached pages shared; automatic
// numbers (given to positions) start far above these.
const firstTableIno = 2

// tableIndex is the merged listing of the table sources, made on first use
// and kept: the tables do not change while mounted. A failed listing is not
// kept, so the next access tries again.
type tableIndex struct {
	srcs  []source.Source
	names func(string) bool // which names are served
	opens *atomic.Int64     // counts objects opened

	mu     sync.Mutex
	loaded bool
	dirs   map[string][]*tableEntry // directory ("" is tables/ itself) -> children sorted by name
	all    []*tableEntry
}

// tableEntry is one file or directory under tables/.
type tableEntry struct {
	name  string // full name within the source, "wdl/KQK.lzw"
	isDir bool
	size  int64  // -1 until known when the listing did not say
	perm  uint32 // the source's permission bits, 0 when it has none
	src   int    // index of the source that serves it
	ino   uint64

	mu  sync.Mutex
	obj source.Object
}

func (e *tableEntry) base() string { return path.Base(e.name) }

// load lists every listable source once.
func (x *tableIndex) load(ctx context.Context) (map[string][]*tableEntry, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.loaded {
		return x.dirs, nil
	}
	byName := map[string]*tableEntry{}
	var all []*tableEntry
	add := func(e *tableEntry) {
		e.ino = firstTableIno + uint64(len(all))
		all = append(all, e)
		byName[e.name] = e
	}
	for i, src := range x.srcs {
		l, ok := src.(source.Lister)
		if !ok {
			continue
		}
		entries, err := l.List(ctx, "")
		if err != nil {
			return nil, err
		}
	entry:
		for _, ent := range entries {
			if source.CheckName(ent.Name) != nil || !x.names(ent.Name) {
				continue
			}
			if _, dup := byName[ent.Name]; dup {
				// An earlier source serves this name, as in the prober's search.
				continue
			}
			// Every parent must be (or become) a directory; a name that
			// would put a file under a file is skipped.
			parts := strings.Split(ent.Name, "/")
			for j := 1; j < len(parts); j++ {
				if p, ok := byName[strings.Join(parts[:j], "/")]; ok && !p.isDir {
					continue entry
				}
			}
			for j := 1; j < len(parts); j++ {
				dir := strings.Join(parts[:j], "/")
				if _, ok := byName[dir]; !ok {
					add(&tableEntry{name: dir, isDir: true, src: i})
				}
			}
			add(&tableEntry{name: ent.Name, size: ent.Size, perm: uint32(ent.Mode.Perm()), src: i})
		}
	}
	dirs := map[string][]*tableEntry{"": nil}
	for _, e := range all {
		parent := path.Dir(e.name)
		if parent == "." {
			parent = ""
		}
		dirs[parent] = append(dirs[parent], e)
		if e.isDir {
			if _, ok := dirs[e.name]; !ok {
				dirs[e.name] = nil
			}
		}
	}
	for _, list := range dirs {
		sort.Slice(list, func(a, b int) bool { return list[a].name < list[b].name })
	}
	x.dirs, x.all, x.loaded = dirs, all, true
	return dirs, nil
}

// object opens the entry's object on first use and keeps it open.
func (x *tableIndex) object(ctx context.Context, e *tableEntry) (source.Object, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.obj != nil {
		return e.obj, nil
	}
	obj, err := x.srcs[e.src].Open(ctx, e.name)
	if err != nil {
		return nil, err
	}
	if e.size >= 0 && obj.Size() != e.size {
		obj.Close()
		return nil, fmt.Errorf("table %s: listed with %d bytes, opened with %d", e.name, e.size, obj.Size())
	}
	e.size = obj.Size()
	e.obj = obj
	if x.opens != nil {
		x.opens.Add(1)
	}
	return obj, nil
}

// sizeOf returns the entry's size, opening the object when the listing did
// not give it.
func (x *tableIndex) sizeOf(ctx context.Context, e *tableEntry) (int64, error) {
	e.mu.Lock()
	size := e.size
	e.mu.Unlock()
	if size >= 0 {
		return size, nil
	}
	obj, err := x.object(ctx, e)
	if err != nil {
		return 0, err
	}
	return obj.Size(), nil
}

func (x *tableIndex) close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	var errs []error
	for _, e := range x.all {
		e.mu.Lock()
		if e.obj != nil {
			errs = append(errs, e.obj.Close())
			e.obj = nil
		}
		e.mu.Unlock()
	}
	return errors.Join(errs...)
}

// tableDir is tables/ or a directory below it.
type tableDir struct {
	fs.Inode
	readOnlyDir
	fs  *FS
	dir string // "" for tables/ itself
}

var _ = (fs.NodeGetattrer)((*tableDir)(nil))
var _ = (fs.NodeLookuper)((*tableDir)(nil))
var _ = (fs.NodeReaddirer)((*tableDir)(nil))

// Getattr reports a read-only directory.
func (d *tableDir) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	d.fs.dirAttr(&out.Attr)
	return 0
}

func (d *tableDir) children(ctx context.Context) ([]*tableEntry, syscall.Errno) {
	dirs, err := d.fs.tables.load(ctx)
	if err != nil {
		return nil, d.fs.tableFailure("tables/"+d.dir, "list", err)
	}
	return dirs[d.dir], 0
}

// Readdir lists the directory from the merged listing.
func (d *tableDir) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	list, errno := d.children(ctx)
	if errno != 0 {
		return nil, errno
	}
	out := make([]fuse.DirEntry, 0, len(list))
	for _, e := range list {
		mode := uint32(fuse.S_IFREG)
		if e.isDir {
			mode = fuse.S_IFDIR
		}
		out = append(out, fuse.DirEntry{Name: e.base(), Mode: mode, Ino: e.ino})
	}
	return fs.NewListDirStream(out), 0
}

// Lookup finds a listed name.
func (d *tableDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	list, errno := d.children(ctx)
	if errno != 0 {
		return nil, errno
	}
	i := sort.Search(len(list), func(i int) bool { return list[i].base() >= name })
	if i == len(list) || list[i].base() != name {
		return nil, syscall.ENOENT
	}
	e := list[i]
	if e.isDir {
		d.fs.dirAttr(&out.Attr)
		return d.NewInode(ctx, &tableDir{fs: d.fs, dir: e.name}, fs.StableAttr{Mode: fuse.S_IFDIR, Ino: e.ino}), 0
	}
	size, err := d.fs.tables.sizeOf(ctx, e)
	if err != nil {
		return nil, d.fs.tableFailure("tables/"+e.name, "open", err)
	}
	d.fs.tableAttr(&out.Attr, e, size)
	return d.NewInode(ctx, &tableFile{fs: d.fs, entry: e}, fs.StableAttr{Mode: fuse.S_IFREG, Ino: e.ino}), 0
}

// tableFile is one raw table, read straight from its source. A table
// never changes while mounted, so the kernel keeps its pages across opens.
type tableFile struct {
	fs.Inode
	immutableFile
	fs    *FS
	entry *tableEntry
}

var _ = (fs.NodeGetattrer)((*tableFile)(nil))
var _ = (fs.NodeReader)((*tableFile)(nil))

// Getattr reports the object's size.
func (t *tableFile) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	size, err := t.fs.tables.sizeOf(ctx, t.entry)
	if err != nil {
		return t.fs.tableFailure("tables/"+t.entry.name, "stat", err)
	}
	t.fs.tableAttr(&out.Attr, t.entry, size)
	return 0
}

// tableAttr fills a table file's attributes: read bits no wider than the
// source's own, when it has them.
func (f *FS) tableAttr(a *fuse.Attr, e *tableEntry, size int64) {
	perm := uint32(0o444)
	if e.perm != 0 {
		perm &= e.perm
	}
	f.fileAttrMode(a, size, perm)
}

// Read reads the range from the source, opening the object (once per
// mount) on first use.
func (t *tableFile) Read(ctx context.Context, fh fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	obj, err := t.fs.tables.object(ctx, t.entry)
	if err != nil {
		return nil, t.fs.tableFailure("tables/"+t.entry.name, "open", err)
	}
	if off >= obj.Size() {
		return fuse.ReadResultData(nil), 0
	}
	n, err := obj.ReadAt(ctx, dest, off, source.HintData)
	if err != nil && !(errors.Is(err, io.EOF) && off+int64(n) == obj.Size()) {
		return nil, t.fs.tableFailure("tables/"+t.entry.name, fmt.Sprintf("read %d bytes at %d", len(dest), off), err)
	}
	t.fs.stats.tableReads.Add(1)
	t.fs.stats.tableBytes.Add(int64(n))
	return fuse.ReadResultData(dest[:n]), 0
}

// tableFailure counts and logs a failed tables/ operation and picks its
// errno.
func (f *FS) tableFailure(p, op string, err error) syscall.Errno {
	errno := errnoFor(err)
	if errno == syscall.EINTR {
		f.stats.interrupted.Add(1)
		return errno
	}
	f.stats.tableErrors.Add(1)
	f.refuse(p, errno, op+": "+err.Error())
	return errno
}

// errnoFor maps a source or probe failure to the errno a reader sees: a
// missing object is ENOENT, an interrupted request EINTR, and every other
// failure EIO, so a reader can never mistake a failure for data.
func errnoFor(err error) syscall.Errno {
	switch {
	case errors.Is(err, source.ErrNotFound):
		return syscall.ENOENT
	case errors.Is(err, context.Canceled):
		return syscall.EINTR
	}
	return syscall.EIO
}
