// Package diskcache keeps blocks fetched from a remote source in a local
// directory, so a remount (or a second mount) does not fetch them again. It
// is a source that wraps a source, sized by a byte budget it never exceeds:
// the least recently used files are deleted to make room, data blocks before
// the hot parts of tables (blocks read as headers or indexes) and the
// object records.
//
// Each cached block is one file named by a hash of (location, object name,
// object size, object version where the transport names one, block number)
// and starting with a header that repeats that key, so a file that belongs to
// anything else is never served. Files are written to a temporary name and
// renamed, so a crash leaves either a whole file or none. An object replaced
// on the server (another size or, over HTTP and S3, another ETag) gets new
// keys, and the old blocks age out.
//
// Each object also has a record on disk: its size and version, or that it
// does not exist, and when the source last said so (listings are kept the
// same way). Within
// Options.MetadataTTL of that, Open answers from the record without a
// request, and a read whose blocks are all on disk makes none either: a
// remount whose probes find their blocks on disk is free. A block that is not
// on disk makes the object be opened below, and if the source now holds
// another version the read fails with source.ErrChanged rather than mix the
// bytes of two versions; the record then names the new version, which the
// next Open serves. After the time-to-live, Open asks the source again.
// Reads fetch every missing block they need in one request per run of
// adjacent blocks, so a first mount costs no more requests than no disk
// cache.
package diskcache

import (
	"bufio"
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
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tbfs/tbfs/source"
)

// magic starts every cache file.
const magic = "tbfs-diskcache-v3\n"

// File name suffixes: data blocks, hot blocks (headers and indexes), object
// records.
const (
	dataSuffix = ".blk"
	hotSuffix  = ".hot"
	metaSuffix = ".meta"
)

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
	// MetadataTTL is how long an object's record (size and version, or
	// absence) answers Open without asking the source. Zero means every
	// Open asks.
	MetadataTTL time.Duration
	// Now tells the time; nil means time.Now. Tests move it.
	Now func() time.Time
}

// Source caches the blocks read through it on disk.
type Source struct {
	inner  source.Source
	opts   Options
	now    func() time.Time
	closed atomic.Bool

	mu    sync.Mutex
	used  int64
	data  list.List        // of *file: data blocks, most recently used first
	hot   list.List        // of *file: hot blocks and records, likewise
	files map[string]*file // by file name
}

type file struct {
	name string
	size int64
	hot  bool
	elem *list.Element
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
	if opts.MetadataTTL < 0 {
		return nil, fmt.Errorf("diskcache: metadata TTL must not be negative, got %v", opts.MetadataTTL)
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("diskcache: %w", err)
	}
	ents, err := os.ReadDir(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("diskcache: %w", err)
	}
	s := &Source{inner: inner, opts: opts, now: opts.Now, files: map[string]*file{}}
	if s.now == nil {
		s.now = time.Now
	}
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
		hot := strings.HasSuffix(name, hotSuffix) || strings.HasSuffix(name, metaSuffix)
		if !e.Type().IsRegular() || !hot && !strings.HasSuffix(name, dataSuffix) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		found = append(found, aged{&file{name: name, size: info.Size(), hot: hot}, info.ModTime().UnixNano()})
	}
	// Newest first, so the oldest end up at the back of the LRU lists.
	sort.Slice(found, func(i, j int) bool { return found[i].mod > found[j].mod })
	s.mu.Lock()
	for _, a := range found {
		s.addLocked(a.f, false)
	}
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

// List lists the wrapped source, and within the metadata time-to-live of
// the last listing of prefix answers from that without a request.
func (s *Source) List(ctx context.Context, prefix string) ([]source.Entry, error) {
	fname, header := s.listingName(prefix)
	if entries, ok := s.loadListing(fname, header); ok {
		return entries, nil
	}
	entries, err := source.List(ctx, s.inner, prefix)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString(header)
	fmt.Fprintf(&b, "%d\n", s.now().UnixNano())
	for _, e := range entries {
		fmt.Fprintf(&b, "%d\t%s\n", e.Size, e.Name)
	}
	s.drop(fname)
	s.write(fname, []byte(b.String()), true)
	return entries, nil
}

// listingName is the file name of prefix's listing and the header its
// content starts with.
func (s *Source) listingName(prefix string) (file, header string) {
	key := fmt.Sprintf("listing\n%s\n%q\n", s.opts.Location, prefix)
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:16]) + metaSuffix, magic + key
}

// loadListing reads a listing stored within the time-to-live.
func (s *Source) loadListing(fname, header string) ([]source.Entry, bool) {
	body, ok := s.readFile(fname, header)
	if !ok {
		return nil, false
	}
	lines := strings.Split(strings.TrimSuffix(string(body), "\n"), "\n")
	ns, err := strconv.ParseInt(lines[0], 10, 64)
	if err != nil {
		s.drop(fname)
		return nil, false
	}
	if !s.fresh(record{checked: time.Unix(0, ns)}) {
		return nil, false
	}
	entries := []source.Entry{}
	for _, l := range lines[1:] {
		sz, name, ok := strings.Cut(l, "\t")
		size, err := strconv.ParseInt(sz, 10, 64)
		if !ok || err != nil || source.CheckName(name) != nil {
			s.drop(fname)
			return nil, false
		}
		entries = append(entries, source.Entry{Name: name, Size: size})
	}
	return entries, true
}

// record is what the cache knows of an object: its size and version, or
// that it does not exist, as the source said at checked.
type record struct {
	missing bool
	size    int64
	version string
	checked time.Time
}

func (s *Source) fresh(r record) bool {
	age := s.now().Sub(r.checked)
	return age >= 0 && age < s.opts.MetadataTTL
}

// Open answers from the object's record within the metadata time-to-live,
// without a request; otherwise it opens the object in the wrapped source
// and records what it found.
func (s *Source) Open(ctx context.Context, name string) (source.Object, error) {
	if err := source.CheckName(name); err != nil {
		return nil, &source.Error{Op: "open", Name: name, Err: err}
	}
	if s.closed.Load() {
		return nil, &source.Error{Op: "open", Name: name, Err: source.ErrClosed}
	}
	if err := ctx.Err(); err != nil {
		return nil, &source.Error{Op: "open", Name: name, Err: err}
	}
	if r, ok := s.loadRecord(name); ok && s.fresh(r) {
		if r.missing {
			return nil, &source.Error{Op: "open", Name: name, Err: fmt.Errorf("%w (as recorded %s ago)", source.ErrNotFound, s.now().Sub(r.checked).Round(time.Second))}
		}
		return &object{s: s, name: name, size: r.size, version: r.version}, nil
	}
	obj, err := s.inner.Open(ctx, name)
	if errors.Is(err, source.ErrNotFound) {
		s.storeRecord(name, record{missing: true, checked: s.now()})
	}
	if err != nil {
		return nil, err
	}
	ver := source.VersionOf(obj)
	s.storeRecord(name, record{size: obj.Size(), version: ver, checked: s.now()})
	return &object{s: s, name: name, size: obj.Size(), version: ver, inner: obj}, nil
}

// object is an object as the cache serves it: the size and version its
// blocks are keyed by, and the object below, opened when a block must be
// fetched.
type object struct {
	s       *Source
	name    string
	size    int64
	version string
	closed  atomic.Bool

	mu    sync.Mutex
	inner source.Object // nil until a block is missing (opened from a record)
}

func (o *object) Size() int64 { return o.size }

// Version is the version the object's blocks are keyed by.
func (o *object) Version() string { return o.version }

func (o *object) Close() error {
	o.closed.Store(true)
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.inner != nil {
		return o.inner.Close()
	}
	return nil
}

// below returns the object in the wrapped source, opening it on first use.
// One that another version replaced fails with source.ErrChanged (this
// object may have served blocks of the version it was opened as already),
// and the record is brought up to date for the next Open.
func (o *object) below(ctx context.Context) (source.Object, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.inner != nil {
		return o.inner, nil
	}
	obj, err := o.s.inner.Open(ctx, o.name)
	if errors.Is(err, source.ErrNotFound) {
		o.s.storeRecord(o.name, record{missing: true, checked: o.s.now()})
		return nil, &source.Error{Op: "read", Name: o.name, Err: source.Changed("the object no longer exists")}
	}
	if err != nil {
		return nil, err
	}
	size, ver := obj.Size(), source.VersionOf(obj)
	o.s.storeRecord(o.name, record{size: size, version: ver, checked: o.s.now()})
	if size != o.size || ver != o.version {
		obj.Close()
		return nil, &source.Error{Op: "read", Name: o.name, Err: source.Changed(
			"now %d bytes, version %q; cached as %d bytes, version %q", size, ver, o.size, o.version)}
	}
	o.inner = obj
	return obj, nil
}

// blockKey names block blk of the object in its file name and header.
func (o *object) blockKey(blk int64) (hash, header string) {
	key := fmt.Sprintf("%s\n%s\n%d\n%q\n%d\n", o.s.opts.Location, o.name, o.size, o.version, blk)
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:16]), magic + key
}

// ReadAt serves each block the range touches from its cache file and
// fetches the missing ones, one request per run of adjacent missing blocks,
// storing each.
func (o *object) ReadAt(ctx context.Context, p []byte, off int64, hint source.Hint) (int, error) {
	if o.closed.Load() || o.s.closed.Load() {
		return 0, &source.Error{Op: "read", Name: o.name, Err: source.ErrClosed}
	}
	if err := ctx.Err(); err != nil {
		return 0, &source.Error{Op: "read", Name: o.name, Err: err}
	}
	if err := source.CheckRange(off, len(p), o.size); err != nil {
		return 0, &source.Error{Op: "read", Name: o.name, Err: err}
	}
	want := min(int64(len(p)), o.size-off)
	if want == 0 {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	bs := int64(o.s.opts.BlockSize)
	first, last := off/bs, (off+want-1)/bs
	blocks := make([][]byte, last-first+1)
	var missing []int64
	for b := first; b <= last; b++ {
		hash, header := o.blockKey(b)
		if data, ok := o.s.load(hash, header, min(bs, o.size-b*bs)); ok {
			blocks[b-first] = data
		} else {
			missing = append(missing, b)
		}
	}
	for i := 0; i < len(missing); {
		j := i + 1
		for j < len(missing) && missing[j] == missing[j-1]+1 {
			j++
		}
		if err := o.fetch(ctx, missing[i], missing[j-1], hint, blocks[missing[i]-first:]); err != nil {
			return 0, err
		}
		i = j
	}
	n := 0
	for i, data := range blocks {
		start := (first + int64(i)) * bs
		from := max(off+int64(n)-start, 0)
		n += copy(p[n:want], data[from:])
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// fetch reads blocks from..to in one request, stores each, and puts them in
// out[0:to-from+1].
func (o *object) fetch(ctx context.Context, from, to int64, hint source.Hint, out [][]byte) error {
	obj, err := o.below(ctx)
	if err != nil {
		return err
	}
	bs := int64(o.s.opts.BlockSize)
	start, end := from*bs, min((to+1)*bs, o.size)
	buf := make([]byte, end-start)
	m, err := obj.ReadAt(ctx, buf, start, hint)
	if err != nil && !(errors.Is(err, io.EOF) && m == len(buf)) {
		return err
	}
	hot := hint == source.HintHeader || hint == source.HintIndex
	for b := from; b <= to; b++ {
		// Each block its own copy, so the run's buffer is not kept whole
		// by one block that stays in a cache above.
		lo := (b - from) * bs
		data := append([]byte(nil), buf[lo:min(lo+bs, int64(len(buf)))]...)
		out[b-from] = data
		hash, header := o.blockKey(b)
		// A failure to store is not a failure to read: the bytes are
		// right, they just will not be kept.
		o.s.store(hash, header, data, hot)
	}
	return nil
}

// readFile returns what follows header in the cache file fname, marking
// it used. A file that is damaged, foreign or gone is forgotten.
func (s *Source) readFile(fname, header string) ([]byte, bool) {
	s.mu.Lock()
	f := s.files[fname]
	if f != nil {
		s.touchLocked(f)
	}
	s.mu.Unlock()
	if f == nil {
		return nil, false
	}
	b, err := os.ReadFile(filepath.Join(s.opts.Dir, fname))
	if err != nil || !bytes.HasPrefix(b, []byte(header)) {
		s.drop(fname)
		return nil, false
	}
	return b[len(header):], true
}

// load reads a block file, stored as data or hot, and checks its length.
func (s *Source) load(hash, header string, want int64) ([]byte, bool) {
	fname := hash + dataSuffix
	s.mu.Lock()
	if s.files[fname] == nil {
		fname = hash + hotSuffix
	}
	s.mu.Unlock()
	data, ok := s.readFile(fname, header)
	if ok && int64(len(data)) != want {
		// Truncated: the block is fetched again.
		s.drop(fname)
		return nil, false
	}
	return data, ok
}

// store writes a block file and makes room for it.
func (s *Source) store(hash, header string, data []byte, hot bool) {
	suffix := dataSuffix
	if hot {
		suffix = hotSuffix
	}
	s.write(hash+suffix, append([]byte(header), data...), hot)
}

// recordName is the file name of name's record, and the header its content
// starts with.
func (s *Source) recordName(name string) (file, header string) {
	key := fmt.Sprintf("record\n%s\n%s\n", s.opts.Location, name)
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:16]) + metaSuffix, magic + key
}

// loadRecord reads name's record, if there is a sound one.
func (s *Source) loadRecord(name string) (record, bool) {
	fname, header := s.recordName(name)
	body, ok := s.readFile(fname, header)
	if !ok {
		return record{}, false
	}
	if r, ok := parseRecord(string(body)); ok {
		return r, true
	}
	s.drop(fname)
	return record{}, false
}

// storeRecord writes name's record.
func (s *Source) storeRecord(name string, r record) {
	fname, header := s.recordName(name)
	var body string
	if r.missing {
		body = fmt.Sprintf("missing\n%d\n", r.checked.UnixNano())
	} else {
		body = fmt.Sprintf("size %d\n%q\n%d\n", r.size, r.version, r.checked.UnixNano())
	}
	s.drop(fname)
	s.write(fname, []byte(header+body), true)
}

// parseRecord reads what storeRecord wrote after the header.
func parseRecord(text string) (record, bool) {
	sc := bufio.NewScanner(strings.NewReader(text))
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	var r record
	var stamp string
	switch {
	case len(lines) == 2 && lines[0] == "missing":
		r.missing, stamp = true, lines[1]
	case len(lines) == 3 && strings.HasPrefix(lines[0], "size "):
		size, err := strconv.ParseInt(strings.TrimPrefix(lines[0], "size "), 10, 64)
		if err != nil || size < 0 {
			return r, false
		}
		ver, err := strconv.Unquote(lines[1])
		if err != nil {
			return r, false
		}
		r.size, r.version, stamp = size, ver, lines[2]
	default:
		return r, false
	}
	ns, err := strconv.ParseInt(stamp, 10, 64)
	if err != nil {
		return r, false
	}
	r.checked = time.Unix(0, ns)
	return r, true
}

// write stores one cache file under name and makes room for it.
func (s *Source) write(name string, content []byte, hot bool) {
	total := int64(len(content))
	if total > s.opts.Budget {
		return
	}
	tmp, err := os.CreateTemp(s.opts.Dir, ".tmp-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(content)
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
	s.addLocked(&file{name: name, size: total, hot: hot}, true)
}

// addLocked counts f, most recently used when front, else least.
func (s *Source) addLocked(f *file, front bool) {
	l := &s.data
	if f.hot {
		l = &s.hot
	}
	if front {
		f.elem = l.PushFront(f)
	} else {
		f.elem = l.PushBack(f)
	}
	s.files[f.name] = f
	s.used += f.size
}

func (s *Source) touchLocked(f *file) {
	if f.hot {
		s.hot.MoveToFront(f.elem)
	} else {
		s.data.MoveToFront(f.elem)
	}
}

func (s *Source) removeLocked(f *file) {
	if f.hot {
		s.hot.Remove(f.elem)
	} else {
		s.data.Remove(f.elem)
	}
	delete(s.files, f.name)
	s.used -= f.size
	os.Remove(filepath.Join(s.opts.Dir, f.name))
}

// evictLocked deletes the least recently used files, data blocks first,
// until room bytes more fit the budget.
func (s *Source) evictLocked(room int64) {
	for s.used+room > s.opts.Budget {
		el := s.data.Back()
		if el == nil {
			el = s.hot.Back()
		}
		if el == nil {
			return
		}
		s.removeLocked(el.Value.(*file))
	}
}

// drop forgets and deletes one file.
func (s *Source) drop(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.files[name]; ok {
		s.removeLocked(f)
	}
}
