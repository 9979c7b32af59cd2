// Package mmap serves a local directory as a source, with every object mapped
// into memory read-only. It registers itself for the "file" scheme, which is
// also what source.Open uses for a plain path.
//
// Only small reads copy from the mapping; a longer one (a compressed block,
// a checksum pass) is a pread of the open file instead. Every page a process
// touches through a mapping counts in its resident memory until it is
// unmapped, so a table read once block by block, or whole for its checksum,
// would stay resident beside the decoded blocks the reader keeps anyway;
// pread moves the same bytes through the page cache without mapping them.
// For a read of a few bytes, which a reader with no block cache above it
// makes per probe, the mapping spares the system call.
//
// A mapping is removed only after every read of it has finished: ReadAt holds
// a read lock while it copies, and Close takes the write lock before it
// unmaps, so a Close that races with reads waits for them and later reads fail
// with source.ErrClosed instead of touching unmapped memory.
//
// Names never leave the directory: source.CheckName refuses absolute names
// and ".." elements. Symbolic links are followed wherever they lead, as every
// reference prober follows them: they are the operator's own, and a table set
// spread over several disks is commonly linked into one directory. Listing
// descends into linked directories too, once each, so a link loop ends.
package mmap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/tbfs/tbfs/source"
)

func init() {
	source.Register("file", func(ctx context.Context, u *url.URL) (source.Source, error) {
		if u.Host != "" && u.Host != "localhost" {
			return nil, &source.Error{Op: "open source", URL: source.Redact(u),
				Err: source.Invalid("file URL names host %q; only local files are served", u.Host)}
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return New(u.Path)
	})
}

// Source is a local directory whose files are served as objects.
type Source struct {
	dir string

	mu      sync.Mutex
	closed  bool
	objects map[*object]struct{}
}

var (
	_ source.Source = (*Source)(nil)
	_ source.Lister = (*Source)(nil)
)

// New serves the directory dir. It fails with source.ErrNotFound when dir
// does not exist and source.ErrInvalid when it is not a directory.
func New(dir string) (*Source, error) {
	if dir == "" {
		return nil, &source.Error{Op: "open source", Err: source.Invalid("empty directory path")}
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, &source.Error{Op: "open source", URL: dir, Err: classify(err)}
	}
	if !fi.IsDir() {
		return nil, &source.Error{Op: "open source", URL: dir, Err: source.Invalid("%s is not a directory", dir)}
	}
	return &Source{dir: dir, objects: map[*object]struct{}{}}, nil
}

// classify maps a file-system error to the source error kinds.
func classify(err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: %w", source.ErrNotFound, err)
	case errors.Is(err, fs.ErrPermission):
		return source.Permanent(err)
	case errors.Is(err, unix.ENOTDIR), errors.Is(err, unix.ELOOP):
		return fmt.Errorf("%w: %w", source.ErrNotFound, err)
	}
	return source.Permanent(err)
}

// Open maps the named file. Directories and other non-regular files are not
// objects and give source.ErrNotFound.
func (s *Source) Open(ctx context.Context, name string) (source.Object, error) {
	fail := func(err error) error { return &source.Error{Op: "open", Name: name, URL: s.dir, Err: err} }
	if err := source.CheckName(name); err != nil {
		return nil, fail(err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fail(err)
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, fail(source.ErrClosed)
	}
	f, err := os.Open(s.path(name))
	if err != nil {
		return nil, fail(classify(err))
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fail(classify(err))
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fail(fmt.Errorf("%w: %s is a %s, not a file", source.ErrNotFound, name, kind(fi.Mode())))
	}
	o := &object{src: s, name: name, size: fi.Size(), file: f}
	if o.size > 0 {
		if int64(int(o.size)) != o.size {
			f.Close()
			return nil, fail(source.Permanent(fmt.Errorf("file of %d bytes is too large to map", o.size)))
		}
		o.data, err = unix.Mmap(int(f.Fd()), 0, int(o.size), unix.PROT_READ, unix.MAP_SHARED)
		if err != nil {
			f.Close()
			return nil, fail(source.Permanent(fmt.Errorf("mmap: %w", err)))
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		o.unmap()
		return nil, fail(source.ErrClosed)
	}
	s.objects[o] = struct{}{}
	return o, nil
}

func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	}
	return "special file"
}

// List walks the directory and returns the regular files whose names start
// with prefix. Files whose names are not valid object names (a backslash or
// control character in them) cannot be opened and are left out.
func (s *Source) List(ctx context.Context, prefix string) ([]source.Entry, error) {
	fail := func(err error) error { return &source.Error{Op: "list", Name: prefix, URL: s.dir, Err: err} }
	if err := source.CheckPrefix(prefix); err != nil {
		return nil, fail(err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fail(err)
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, fail(source.ErrClosed)
	}
	// Walk only the deepest directory the prefix names in full.
	start := "."
	if i := strings.LastIndex(prefix, "/"); i >= 0 {
		start = prefix[:i]
	}
	fi, err := os.Stat(s.path(start))
	if err != nil && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENOTDIR)) || err == nil && !fi.IsDir() {
		return nil, nil
	}
	if err != nil {
		return nil, fail(classify(err))
	}
	var out []source.Entry
	seen := map[dirID]bool{idOf(fi): true}
	if err := s.walk(ctx, start, prefix, seen, &out); err != nil {
		if ctx.Err() != nil {
			return nil, fail(ctx.Err())
		}
		return nil, fail(classify(err))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Close unmaps every object still open (waiting for reads in flight) and
// releases the directory.
func (s *Source) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	objs := s.objects
	s.objects = nil
	s.mu.Unlock()
	for o := range objs {
		o.unmap()
	}
	return nil
}

// path is the file path of an object name ("." for the directory itself).
func (s *Source) path(name string) string {
	return filepath.Join(s.dir, filepath.FromSlash(name))
}

// dirID tells directories apart across links: device and inode.
type dirID struct{ dev, ino uint64 }

func idOf(fi fs.FileInfo) dirID {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return dirID{uint64(st.Dev), uint64(st.Ino)}
	}
	return dirID{}
}

// walk appends to out the regular files under the directory dir (an object
// name, "." for the top) whose names start with prefix. Stat follows links,
// so linked files and directories count; seen holds the directories already
// walked, so a link loop (or two links to one directory) is walked once.
func (s *Source) walk(ctx context.Context, dir, prefix string, seen map[dirID]bool, out *[]source.Entry) error {
	entries, err := os.ReadDir(s.path(dir))
	if err != nil {
		return err
	}
	for _, d := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		p := d.Name()
		if dir != "." {
			p = dir + "/" + p
		}
		fi, err := os.Stat(s.path(p))
		if err != nil {
			continue // a dangling link or an entry gone since ReadDir: nothing to serve
		}
		switch {
		case fi.IsDir():
			if !strings.HasPrefix(p+"/", prefix) && !strings.HasPrefix(prefix, p+"/") {
				continue
			}
			if id := idOf(fi); !seen[id] {
				seen[id] = true
				if err := s.walk(ctx, p, prefix, seen, out); err != nil {
					return err
				}
			}
		case fi.Mode().IsRegular() && strings.HasPrefix(p, prefix) && source.CheckName(p) == nil:
			*out = append(*out, source.Entry{Name: p, Size: fi.Size(), Mode: fi.Mode().Perm()})
		}
	}
	return nil
}

// String names the directory.
func (s *Source) String() string { return "file://" + path.Clean(s.dir) }

type object struct {
	src  *Source
	name string
	size int64

	// mu is held shared by every read and exclusively by unmap, so the
	// mapping and the file outlive every read that started before they
	// were let go.
	mu     sync.RWMutex
	data   []byte
	file   *os.File // for the reads of at least preadMin bytes
	closed bool
}

// preadMin is the shortest read that goes through pread rather than the
// mapping: a table's cell or run of cells (a Geister observation reads up
// to 70 bytes per probe) reads from the mapping, compressed blocks (a few
// hundred bytes and more) and checksum passes do not.
const preadMin = 128

func (o *object) Size() int64 { return o.size }

func (o *object) ReadAt(ctx context.Context, p []byte, off int64, hint source.Hint) (int, error) {
	if err := source.CheckRange(off, len(p), o.size); err != nil {
		return 0, &source.Error{Op: "read", Name: o.name, URL: o.src.dir, Err: err}
	}
	if err := ctx.Err(); err != nil {
		return 0, &source.Error{Op: "read", Name: o.name, URL: o.src.dir, Err: err}
	}
	o.mu.RLock()
	defer o.mu.RUnlock()
	if o.closed {
		return 0, &source.Error{Op: "read", Name: o.name, URL: o.src.dir, Err: source.ErrClosed}
	}
	if len(p) >= preadMin {
		return o.pread(p, off)
	}
	return o.copyMapped(p, off)
}

// copyMapped copies p from the mapping at off, under o.mu held shared. It
// is a function of its own so that its deferred calls stay cheap (the
// compiler inlines deferred calls only in a function with few returns), as
// they are on every small read.
func (o *object) copyMapped(p []byte, off int64) (n int, err error) {
	// A file truncated by someone else after mapping raises SIGBUS on
	// access; turn that into an error instead of a crash.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			n, err = 0, &source.Error{Op: "read", Name: o.name, URL: o.src.dir,
				Err: source.Permanent(fmt.Errorf("fault reading mapped file (was it truncated?): %v", r))}
		}
	}()
	n = copy(p, o.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// pread reads p at off from the file, under o.mu held shared.
func (o *object) pread(p []byte, off int64) (int, error) {
	want := int(min(int64(len(p)), o.size-off))
	n, err := o.file.ReadAt(p[:want], off)
	if n < want {
		// The object's size was fixed at open: a file that now ends
		// sooner was cut short by someone else.
		if err == nil || errors.Is(err, io.EOF) {
			err = fmt.Errorf("file ends at byte %d, before the %d it had when opened (was it truncated?)", off+int64(n), o.size)
		}
		return 0, &source.Error{Op: "read", Name: o.name, URL: o.src.dir, Err: source.Permanent(err)}
	}
	if want < len(p) {
		return want, io.EOF
	}
	return want, nil
}

func (o *object) Close() error {
	o.unmap()
	o.src.mu.Lock()
	delete(o.src.objects, o)
	o.src.mu.Unlock()
	return nil
}

// unmap removes the mapping once the reads in flight are done.
func (o *object) unmap() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return
	}
	o.closed = true
	if o.data != nil {
		unix.Munmap(o.data)
		o.data = nil
	}
	o.file.Close()
}
