package main

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/tbfs/tbfs/source"
)

// fsSource serves an fs.FS (the embedded fixture tables) as a source. Each
// object is read whole on open: the fixtures are small and already in memory.
type fsSource struct {
	fsys fs.FS
	name string // shown in errors in place of a URL
}

var (
	_ source.Source = (*fsSource)(nil)
	_ source.Lister = (*fsSource)(nil)
)

// Open returns the named file of the file system.
func (s *fsSource) Open(ctx context.Context, name string) (source.Object, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := source.CheckName(name); err != nil {
		return nil, &source.Error{Op: "open", Name: name, URL: s.name, Err: err}
	}
	b, err := fs.ReadFile(s.fsys, name)
	if err != nil {
		cause := source.Permanent(err)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid) {
			cause = source.ErrNotFound
		}
		return nil, &source.Error{Op: "open", Name: name, URL: s.name, Err: cause}
	}
	return &bytesObject{b: b, name: name, url: s.name}, nil
}

// List walks the file system and returns the files under prefix.
func (s *fsSource) List(ctx context.Context, prefix string) ([]source.Entry, error) {
	if err := source.CheckPrefix(prefix); err != nil {
		return nil, &source.Error{Op: "list", Name: prefix, URL: s.name, Err: err}
	}
	var out []source.Entry
	err := fs.WalkDir(s.fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasPrefix(p, prefix) {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out = append(out, source.Entry{Name: path.Clean(p), Size: fi.Size()})
		return nil
	})
	if err != nil {
		return nil, &source.Error{Op: "list", Name: prefix, URL: s.name, Err: source.Permanent(err)}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Close releases nothing: the bytes belong to the binary.
func (s *fsSource) Close() error { return nil }

// bytesObject is one file held in memory.
type bytesObject struct {
	b         []byte
	name, url string
}

func (o *bytesObject) Size() int64 { return int64(len(o.b)) }

// ReadAt copies from the held bytes with io.ReaderAt's contract.
func (o *bytesObject) ReadAt(ctx context.Context, p []byte, off int64, _ source.Hint) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if off < 0 || off > int64(len(o.b)) {
		return 0, &source.Error{Op: "read", Name: o.name, URL: o.url,
			Err: source.Invalid("offset %d outside [0, %d]", off, len(o.b))}
	}
	n := copy(p, o.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Close releases nothing.
func (o *bytesObject) Close() error { return nil }
