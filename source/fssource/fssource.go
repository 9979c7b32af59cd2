// Package fssource serves any io/fs.FS as a source.Source: the fixture tables
// embedded in a binary (package testdata), an os.DirFS, an fs.Sub view, a
// fstest.MapFS in a test. It is the transport for tables that are already at
// hand as a file system rather than behind a URL.
//
// Each object is read whole into memory when it is opened. The file systems
// this package is meant for (embed.FS above all) hold their bytes in memory
// already, and reading once on open makes every later ReadAt a plain copy
// that needs no open file, no lock and no error path; a caller with large
// tables on disk should use the file transport instead, which maps them.
package fssource

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
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

// Open reads the named file whole and returns it as an object. A name that
// does not exist, or names a directory, is source.ErrNotFound; a malformed
// name is refused before the file system sees it.
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
	fi, err := fs.Stat(s.fsys, name)
	if err == nil && fi.IsDir() {
		return nil, &source.Error{Op: "open", Name: name, URL: s.name, Err: source.ErrNotFound}
	}
	var b []byte
	if err == nil {
		b, err = fs.ReadFile(s.fsys, name)
	}
	if err != nil {
		cause := source.Permanent(err)
		// A path through a regular file ("a.txt/x") fails with ENOTDIR on
		// an os.DirFS; like a missing one, no such object exists.
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid) || errors.Is(err, syscall.ENOTDIR) {
			cause = source.ErrNotFound
		}
		return nil, &source.Error{Op: "open", Name: name, URL: s.name, Err: cause}
	}
	return &object{b: b, name: name, src: s}, nil
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

// object is one file held in memory.
type object struct {
	b      []byte
	name   string
	src    *Source
	closed atomic.Bool
}

// Size is the file's length when it was opened.
func (o *object) Size() int64 { return int64(len(o.b)) }

// ReadAt copies from the held bytes with io.ReaderAt's contract: a short
// read at the end of the object comes with io.EOF.
func (o *object) ReadAt(ctx context.Context, p []byte, off int64, _ source.Hint) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if o.closed.Load() || o.src.closed.Load() {
		return 0, &source.Error{Op: "read", Name: o.name, URL: o.src.name, Err: source.ErrClosed}
	}
	if off < 0 || off > int64(len(o.b)) {
		return 0, &source.Error{Op: "read", Name: o.name, URL: o.src.name,
			Err: source.Invalid("offset %d outside [0, %d]", off, len(o.b))}
	}
	n := copy(p, o.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Close marks the object closed; the bytes go with the last reference.
func (o *object) Close() error {
	o.closed.Store(true)
	return nil
}
