// Package diskcache keeps blocks fetched from a remote source in a local
// directory, so a remount (or a second mount) does not fetch them again. It
// is a source that wraps a source, sized by a byte budget it never exceeds:
// the least recently used blocks are deleted to make room.
//
// Each cached block is one file named by a hash of (location, object name,
// object size, object version where the transport names one, block number) and starting with a header that repeats that
// key, so a file that belongs to anything else is never served. Files are
// written to a temporary name and renamed, so a crash leaves either a whole
// block or none. An object replaced on the server (another size or, over
// HTTP and S3, another ETag) gets new keys, and the old blocks age out.
package diskcache

import (
	"bytes"
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tbfs/tbfs/source"
)

// magic starts every cache file.
const magic = "tbfs-diskcache-v2\n"

// Options configure a cache.
type Options struct {
	// Dir holds the cache files; it is created if missing.
	Dir string
	// Budget bounds the bytes of the cache files; it must be positive.
	Budget int64
	// BlockSize is the unit of caching; reads are split on its multiples.
	BlockSize int
	// Location identifies the wrapped source (its URL), so caches of
	// different sources can share a directory.
	Location string
}

// Source caches the blocks read through it on disk.
type Source struct {
	inner  source.Source
	opts   Options
	closed atomic.Bool

	mu    sync.Mutex
	used  int64
	lru   list.List                // of *file, most recently used first
	files map[string]*list.Element // by file name
}

type file struct {
	name string
	size int64
}

var (
	_ source.Source = (*Source)(nil)
	_ source.Lister = (*Source)(nil)
)

// Wrap returns a disk cache over inner. Files already in opts.Dir are
// counted and used, oldest modification first to go; files that are not
// cache files are left alone and not counted.
func Wrap(inner source.Source, opts Options) (*Source, error) {
	if opts.Budget <= 0 {
		return nil, fmt.Errorf("diskcache: budget must be positive, got %d", opts.Budget)
	}
	if opts.BlockSize <= 0 {
		return nil, fmt.Errorf("diskcache: block size must be positive, got %d", opts.BlockSize)
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("diskcache: %w", err)
	}
	ents, err := os.ReadDir(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("diskcache: %w", err)
	}
	s := &Source{inner: inner, opts: opts, files: map[string]*list.Element{}}
	type aged struct {
		f   *file
		mod int64
	}
	var found []aged
	for _, e := range ents {
		name := e.Name()
		if strings.HasPrefix(name, ".tmp-") {
			// Left by a crash mid-write.
			os.Remove(filepath.Join(opts.Dir, name))
			continue
		}
		if !e.Type().IsRegular() || !strings.HasSuffix(name, ".blk") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		found = append(found, aged{&file{name: name, size: info.Size()}, info.ModTime().UnixNano()})
	}
	// Newest first, so the oldest end up at the back of the LRU list.
	sort.Slice(found, func(i, j int) bool { return found[i].mod > found[j].mod })
	for _, a := range found {
		s.files[a.f.name] = s.lru.PushBack(a.f)
		s.used += a.f.size
	}
	s.mu.Lock()
	s.evictLocked(0)
	s.mu.Unlock()
	return s, nil
}

// Used returns the bytes of cache files held now.
func (s *Source) Used() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used
}

// Unwrap returns the wrapped source.
func (s *Source) Unwrap() source.Source { return s.inner }

// Close closes the wrapped source; the cache files stay for the next run.
func (s *Source) Close() error {
	s.closed.Store(true)
	return s.inner.Close()
}

// List lists the wrapped source.
func (s *Source) List(ctx context.Context, prefix string) ([]source.Entry, error) {
	return source.List(ctx, s.inner, prefix)
}

// Open opens the object in the wrapped source (its size comes from there).
func (s *Source) Open(ctx context.Context, name string) (source.Object, error) {
	obj, err := s.inner.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	return &object{s: s, inner: obj, name: name}, nil
}

type object struct {
	s      *Source
	inner  source.Object
	name   string
	closed atomic.Bool
}

func (o *object) Size() int64 { return o.inner.Size() }

// Version passes on the version of the object below.
func (o *object) Version() string { return source.VersionOf(o.inner) }

func (o *object) Close() error {
	o.closed.Store(true)
	return o.inner.Close()
}

// ReadAt serves each block the range touches from its cache file, fetching
// and storing the ones that are missing.
func (o *object) ReadAt(ctx context.Context, p []byte, off int64, hint source.Hint) (int, error) {
	if o.closed.Load() || o.s.closed.Load() {
		return 0, &source.Error{Op: "read", Name: o.name, Err: source.ErrClosed}
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	size := o.inner.Size()
	if err := source.CheckRange(off, len(p), size); err != nil {
		return 0, &source.Error{Op: "read", Name: o.name, Err: err}
	}
	bs := int64(o.s.opts.BlockSize)
	n := 0
	for n < len(p) && off+int64(n) < size {
		pos := off + int64(n)
		blk := pos / bs
		data, err := o.block(ctx, blk, hint)
		if err != nil {
			return n, err
		}
		n += copy(p[n:], data[pos-blk*bs:])
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// block returns block number blk: all of it, or up to the object's end.
func (o *object) block(ctx context.Context, blk int64, hint source.Hint) ([]byte, error) {
	bs := int64(o.s.opts.BlockSize)
	size := o.inner.Size()
	want := min(bs, size-blk*bs)
	key := fmt.Sprintf("%s\n%s\n%d\n%q\n%d\n", o.s.opts.Location, o.name, size, source.VersionOf(o.inner), blk)
	sum := sha256.Sum256([]byte(key))
	name := hex.EncodeToString(sum[:16]) + ".blk"
	header := magic + key
	if data, ok := o.s.load(name, header, want); ok {
		return data, nil
	}
	buf := make([]byte, want)
	m, err := o.inner.ReadAt(ctx, buf, blk*bs, hint)
	if err != nil && !(errors.Is(err, io.EOF) && int64(m) == want) {
		return nil, err
	}
	// A failure to store is not a failure to read: the bytes are right,
	// they just will not be kept.
	o.s.store(name, header, buf)
	return buf, nil
}

// load reads a cache file and checks its header and length.
func (s *Source) load(name, header string, want int64) ([]byte, bool) {
	s.mu.Lock()
	el, ok := s.files[name]
	if ok {
		s.lru.MoveToFront(el)
	}
	s.mu.Unlock()
	if !ok {
		return nil, false
	}
	b, err := os.ReadFile(filepath.Join(s.opts.Dir, name))
	if err != nil || int64(len(b)) != int64(len(header))+want || !bytes.HasPrefix(b, []byte(header)) {
		// Damaged, foreign or gone: forget it; the block is fetched again.
		s.drop(name)
		return nil, false
	}
	return b[len(header):], true
}

// store writes a block file and makes room for it.
func (s *Source) store(name, header string, data []byte) {
	total := int64(len(header) + len(data))
	if total > s.opts.Budget {
		return
	}
	tmp, err := os.CreateTemp(s.opts.Dir, ".tmp-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(append([]byte(header), data...))
	cerr := tmp.Close()
	if werr != nil || cerr != nil {
		os.Remove(tmp.Name())
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.files[name]; ok {
		// Another reader stored it meanwhile.
		os.Remove(tmp.Name())
		return
	}
	s.evictLocked(total)
	if err := os.Rename(tmp.Name(), filepath.Join(s.opts.Dir, name)); err != nil {
		os.Remove(tmp.Name())
		return
	}
	s.files[name] = s.lru.PushFront(&file{name: name, size: total})
	s.used += total
}

// evictLocked deletes the least recently used files until room bytes more
// fit the budget.
func (s *Source) evictLocked(room int64) {
	for s.used+room > s.opts.Budget {
		el := s.lru.Back()
		if el == nil {
			return
		}
		f := el.Value.(*file)
		s.lru.Remove(el)
		delete(s.files, f.name)
		s.used -= f.size
		os.Remove(filepath.Join(s.opts.Dir, f.name))
	}
}

// drop forgets and deletes one file.
func (s *Source) drop(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.files[name]; ok {
		f := el.Value.(*file)
		s.lru.Remove(el)
		delete(s.files, name)
		s.used -= f.size
		os.Remove(filepath.Join(s.opts.Dir, name))
	}
}
