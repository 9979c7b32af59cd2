package fssource_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/fssource"
	"github.com/tbfs/tbfs/source/sourcetest"
)

// TestConformance runs the transport suite over file systems whose files
// are read in place (os.DirFS, fstest.MapFS) and over one whose files can
// only be read in sequence, so they are held whole; the arbiter is the bytes
// the suite wrote into dir.
func TestConformance(t *testing.T) {
	cases := []struct {
		name string
		fsys func(t *testing.T, dir string) fs.FS
	}{
		{"DirFS", func(t *testing.T, dir string) fs.FS { return os.DirFS(dir) }},
		{"MapFS", mapFS},
		{"sequential", func(t *testing.T, dir string) fs.FS { return sequentialFS{os.DirFS(dir)} }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sourcetest.Run(t, func(t *testing.T, dir string) source.Source {
				return fssource.New(c.fsys(t, dir), dir)
			})
		})
	}
}

// mapFS copies the files under dir into a fstest.MapFS.
func mapFS(t *testing.T, dir string) fs.FS {
	m := fstest.MapFS{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		m[filepath.ToSlash(rel)] = &fstest.MapFile{Data: b, Mode: 0o644}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// sequentialFS hides every method of its regular files but fs.File's own,
// as a file system that can only stream its files would.
type sequentialFS struct{ fsys fs.FS }

func (s sequentialFS) Open(name string) (fs.File, error) {
	f, err := s.fsys.Open(name)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return f, nil // directories list as they are
	}
	return sequentialFile{f}, nil
}

type sequentialFile struct{ f fs.File }

func (s sequentialFile) Stat() (fs.FileInfo, error) { return s.f.Stat() }
func (s sequentialFile) Read(p []byte) (int, error) { return s.f.Read(p) }
func (s sequentialFile) Close() error               { return s.f.Close() }

// TestTruncatedAfterOpen: a file read in place that someone cuts short after
// it was opened gives a permanent error naming it for a read past its new
// end, never short bytes passed off as the object's; what is still there
// reads as written. Arbiter: the file the test writes and truncates.
func TestTruncatedAfterOpen(t *testing.T) {
	dir := t.TempDir()
	data := make([]byte, 8192)
	for i := range data {
		data[i] = byte(i)
	}
	name := filepath.Join(dir, "t.bin")
	if err := os.WriteFile(name, data, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	src := fssource.New(os.DirFS(dir), dir)
	defer src.Close()
	o, err := src.Open(ctx, "t.bin")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if err := os.Truncate(name, 4096); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 100)
	n, err := o.ReadAt(ctx, buf, 6000, source.HintData)
	var serr *source.Error
	if !errors.Is(err, source.ErrPermanent) || n != 0 || !errors.As(err, &serr) || serr.Name != "t.bin" {
		t.Errorf("read past the new end: %d bytes, %v; want a permanent error naming t.bin", n, err)
	}
	if n, err := o.ReadAt(ctx, buf, 100, source.HintData); n != len(buf) || err != nil || buf[0] != 100 {
		t.Errorf("read inside the new end: %d bytes, %v, first byte %d", n, err, buf[0])
	}
	// The object keeps the size it had when opened, so a read at its end
	// is past the file's new end, not an io.EOF at it.
	if n, err := o.ReadAt(ctx, buf, 8192-50, source.HintData); n != 0 || errors.Is(err, io.EOF) || err == nil {
		t.Errorf("read at the old end: %d bytes, %v; want an error", n, err)
	}
}
