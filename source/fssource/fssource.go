// Package fssource serves any io/fs.FS as a source.Source: the fixture tables
// embedded in a binary (package testdata), an os.DirFS, an fs.Sub view, a
// fstest.MapFS in a test. It is the transport for tables that are already at
// hand as a file system rather than behind a URL.
//
// A file that can be read at an offset (io.ReaderAt: the files of an
// embed.FS, an os.DirFS and a fstest.MapFS all can) is read in place, so an
// embedded table costs no more than the pages of the binary its probes touch,
// rather than a copy of the whole file on the heap beside the binary's own. A
// file that cannot is read whole into memory when it is opened.
package fssource

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/tbfs/tbfs/source"
)

// Source serves the files of an fs.FS. Its zero value is not usable; call New.
type Source struct {
	fsys   fs.FS
	name   string // shown in errors in place of a URL
	closed atomic.Bool
}

var (
	_ source.Source = (*Source)(nil)
	_ source.Lister = (*Source)(nil)
)

// New returns a source over fsys. The name stands in for a URL in errors
// and listings (for example "embedded:testdata/chesstb"), so a failure says
// which file system it came from.
func New(fsys fs.FS, name string) *Source {
	return &Source{fsys: fsys, name: name}
}

// Open opens the named file as an object, reading it whole when its file
// cannot be read at an offset. A name that does not exist, or names a
// directory, is source.ErrNotFound; a malformed name is refused before the
// file system sees it.
func (s *Source) Open(ctx context.Context, name string) (source.Object, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.closed.Load() {
		return nil, &source.Error{Op: "open", Name: name, URL: s.name, Err: source.ErrClosed}
	}
	if err := source.CheckName(name); err != nil {
		return nil, &source.Error{Op: "open", Name: name, URL: s.name, Err: err}
	}
	fail := func(err error) error {
		cause := source.Permanent(err)
		// A path through a regular file ("a.txt/x") fails with ENOTDIR on
		// an os.DirFS; like a missing one, no such object exists.
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid) || errors.Is(err, syscall.ENOTDIR) {
			cause = source.ErrNotFound
		}
		return &source.Error{Op: "open", Name: name, URL: s.name, Err: cause}
	}
	f, err := s.fsys.Open(name)
	if err != nil {
		return nil, fail(err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fail(err)
	}
	if fi.IsDir() {
		f.Close()
		return nil, &source.Error{Op: "open", Name: name, URL: s.name, Err: source.ErrNotFound}
	}
	o := &object{name: name, src: s, size: fi.Size()}
	if ra, ok := f.(io.ReaderAt); ok && o.size >= 0 {
		o.file, o.ra = f, ra
		return o, nil
	}
	defer f.Close()
	if o.b, err = io.ReadAll(f); err != nil {
		return nil, fail(err)
	}
	o.size = int64(len(o.b))
	return o, nil
}

// List walks the file system and returns the regular files whose names
// start with prefix, sorted by name.
func (s *Source) List(ctx context.Context, prefix string) ([]source.Entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.closed.Load() {
		return nil, &source.Error{Op: "list", Name: prefix, URL: s.name, Err: source.ErrClosed}
	}
	if err := source.CheckPrefix(prefix); err != nil {
		return nil, &source.Error{Op: "list", Name: prefix, URL: s.name, Err: err}
	}
	var out []source.Entry
	err := fs.WalkDir(s.fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if !d.Type().IsRegular() || !strings.HasPrefix(p, prefix) {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out = append(out, source.Entry{Name: path.Clean(p), Size: fi.Size(), Mode: fi.Mode().Perm()})
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &source.Error{Op: "list", Name: prefix, URL: s.name, Err: source.Permanent(err)}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Close marks the source closed, so later opens, lists and reads of its
// objects fail with source.ErrClosed. The file system itself belongs to the
// caller and is left alone.
func (s *Source) Close() error {
	s.closed.Store(true)
	return nil
}

// object is one file: read in place through ra, or held whole in b.
type object struct {
	name string
	src  *Source
	size int64

	// mu is held shared by every read through ra and exclusively by
	// Close, so the file is closed only once no read is using it.
	mu     sync.RWMutex
	file   fs.File
	ra     io.ReaderAt // file's, nil when the bytes are in b
	b      []byte
	closed atomic.Bool
}

// Size is the file's length when it was opened.
func (o *object) Size() int64 { return o.size }

// ReadAt copies from the file or the held bytes with io.ReaderAt's
// contract: a short read at the end of the object comes with io.EOF.
func (o *object) ReadAt(ctx context.Context, p []byte, off int64, _ source.Hint) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if o.closed.Load() || o.src.closed.Load() {
		return 0, o.err(source.ErrClosed)
	}
	if off < 0 || off > o.size {
		return 0, o.err(source.Invalid("offset %d outside [0, %d]", off, o.size))
	}
	want := int(min(int64(len(p)), o.size-off))
	if o.ra == nil {
		copy(p, o.b[off:])
	} else if err := o.readFile(p[:want], off); err != nil {
		return 0, err
	}
	if want < len(p) {
		return want, io.EOF
	}
	return want, nil
}

// readFile fills p from the file at off.
func (o *object) readFile(p []byte, off int64) error {
	o.mu.RLock()
	defer o.mu.RUnlock()
	if o.closed.Load() {
		return o.err(source.ErrClosed)
	}
	n, err := o.ra.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		// The size was fixed at open: a file that now ends sooner
		// was cut short since.
		err = fmt.Errorf("file ends at byte %d, before the %d it had when opened", off+int64(n), o.size)
	}
	return o.err(source.Permanent(err))
}

func (o *object) err(err error) error {
	return &source.Error{Op: "read", Name: o.name, URL: o.src.name, Err: err}
}

// Close marks the object closed and closes its file once the reads in
// flight are done; held bytes go with the last reference.
func (o *object) Close() error {
	if o.closed.Swap(true) || o.file == nil {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.file.Close()
}
