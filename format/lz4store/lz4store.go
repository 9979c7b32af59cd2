// Package lz4store keeps byte blocks in a local directory, compressed with
// LZ4, within a byte budget: a second tier under an in-memory cache of
// blocks that are expensive to make (LZMA-decoded table blocks), so a
// restarted process reads them back at LZ4 speed instead of decoding again.
//
// Each block is one file named by a hash of its key and holding a head —
// the key, the block's length and a table of its chunks (independent LZ4
// blocks of 4 KiB of decoded bytes each), with an XXH64 checksum of each
// chunk — and an XXH64 checksum of the head, then the chunks (chunks.go).
// Load reads a file whole and checks and decodes every chunk. Open checks
// the head and returns a reader that reads, checks and decodes only the
// chunks holding what its caller reads, so a caller that reads a few bytes
// of a block pays for a few chunks. A chunk is checked before it is decoded
// (LZ4 decodes intact bytes to the block they were made from). A file that
// does not match its key in every respect — another key, a short or
// damaged file, a checksum that differs, a table that does not fit the
// lengths — is a miss, never a wrong block: the caller decodes the block
// again and the file is replaced (a chunk found damaged by a read fails the
// read and drops the file). Files are written to a temporary name and
// renamed, so a crash leaves either a whole file or none. When the files
// outgrow the budget the least recently used are deleted; the order
// survives restarts through the files' modification times.
package lz4store

import (
	"container/list"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// magic starts every block file; a format change changes it (files of
// another format are misses).
const magic = "tbfs-lz4store-v3\n"

// suffix ends every block file's name.
const suffix = ".lz4b"

// maxBlock bounds a block's length, so a damaged length field cannot make a
// load allocate without limit.
const maxBlock = 64 << 20

// Store is a directory of blocks. It is safe for concurrent use, and
// several processes may share a directory (each keeps its own budget view).
type Store struct {
	dir    string
	budget int64

	mu    sync.Mutex
	used  int64
	lru   list.List // of *entry, most recently used at the front
	files map[string]*entry

	hits, misses, stores atomic.Int64
	openFiles            atomic.Int64 // kept open by readers
}

// Stats counts what a Store did since it was opened.
type Stats struct {
	Hits   int64 `json:"hits"`   // Loads that returned a block
	Misses int64 `json:"misses"` // Loads that did not (absent, damaged or another key's)
	Stores int64 `json:"stores"` // blocks written
	Used   int64 `json:"used_bytes"`
}

// Stats returns the store's counters and the bytes of files it holds.
func (s *Store) Stats() Stats {
	return Stats{Hits: s.hits.Load(), Misses: s.misses.Load(), Stores: s.stores.Load(), Used: s.Used()}
}

type entry struct {
	name string
	size int64
	elem *list.Element
}

// Open opens (creating it if needed) the store in dir, holding at most
// budget bytes of files.
func Open(dir string, budget int64) (*Store, error) {
	if budget <= 0 {
		return nil, fmt.Errorf("lz4store: budget %d is not positive", budget)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("lz4store: %w", err)
	}
	s := &Store{dir: dir, budget: budget, files: make(map[string]*entry)}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("lz4store: %w", err)
	}
	type found struct {
		name  string
		size  int64
		mtime time.Time
	}
	var all []found
	for _, de := range ents {
		name := de.Name()
		if strings.HasPrefix(name, ".tmp-") {
			os.Remove(filepath.Join(dir, name)) // left by a crash
			continue
		}
		if !strings.HasSuffix(name, suffix) {
			continue
		}
		info, err := de.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		all = append(all, found{name, info.Size(), info.ModTime()})
	}
	// Oldest first, so each push to the front leaves the newest there.
	slices.SortFunc(all, func(a, b found) int { return a.mtime.Compare(b.mtime) })
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range all {
		s.addLocked(f.name, f.size)
	}
	s.evictLocked(0)
	return s, nil
}

// Used is the bytes of block files the store holds.
func (s *Store) Used() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used
}

// fileName is the file holding key's block.
func fileName(key string) string {
	h := sha256.Sum256([]byte(key))
	return hex.EncodeToString(h[:20]) + suffix
}

// Load returns the block stored under key, of exactly size bytes (of any
// size up to the limit, for a negative size), into a new slice; ok is false
// when the store does not hold it whole and intact.
func (s *Store) Load(key string, size int) (data []byte, ok bool) {
	scratch := fileScratch.Get().(*[]byte)
	defer fileScratch.Put(scratch)
	c, ok := s.open(key, size, scratch)
	if !ok {
		return nil, false
	}
	data = make([]byte, c.size)
	if _, err := c.ReadAt(data, 0); err != nil {
		return nil, false // a damaged chunk, and the file dropped
	}
	return data, true
}

// Open returns a reader of the block stored under key, of exactly size
// bytes (of any size up to the limit, for a negative size), the length of
// the chunks it is stored in, and the bytes of memory the reader holds; ok
// is false when the store does not hold the block, or its file's head (the
// key, the lengths, the chunk table) does not check. The reader reads,
// checks and decodes only the chunks that hold the bytes asked for, each
// straight into the caller's buffer where the buffer holds the whole chunk:
// read at chunk boundaries into the block's own buffer, the block's pages
// no read reached are never touched. It is safe for concurrent use, and an
// io.Closer, to be closed once the caller reads no more (else the file it
// keeps open is closed when the reader is collected). A ReadAt error (a
// damaged chunk, which also drops the file) means the block must be made
// afresh.
func (s *Store) Open(key string, size int) (r io.ReaderAt, chunk int, held int64, ok bool) {
	c, ok := s.openLazy(key, size)
	if !ok {
		return nil, 0, 0, false
	}
	return c, c.chunk, int64(len(c.table) + 8*len(c.offs) + len(c.data)), true
}

// maxOpenFiles bounds the block files a Store's readers keep open; past it
// Open reads a file whole instead.
const maxOpenFiles = 1024

// openLazy is Open's work: it reads the file's head, and keeps the file
// open for the chunks.
func (s *Store) openLazy(key string, size int) (*chunkReader, bool) {
	if s.openFiles.Load() >= maxOpenFiles {
		return s.open(key, size, nil)
	}
	return s.lookup(key, size, func(path string) (*chunkReader, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		c, err := readHead(f, key, size)
		if err != nil {
			f.Close()
			return nil, err
		}
		s.openFiles.Add(1)
		c.file = &openFile{f: f, open: &s.openFiles}
		runtime.AddCleanup(c, func(o *openFile) { o.close() }, c.file)
		return c, nil
	})
}

// lookup returns the reader read makes of key's file, counting a hit or
// a miss; a file read finds is not key's block of size bytes
// (errMismatch) is dropped, so the block is stored anew, and so is one a
// reader finds a damaged chunk in.
func (s *Store) lookup(key string, size int, read func(path string) (*chunkReader, error)) (*chunkReader, bool) {
	if size > maxBlock {
		s.misses.Add(1)
		return nil, false
	}
	name := fileName(key)
	path := filepath.Join(s.dir, name)
	c, err := read(path)
	if err != nil {
		if errors.Is(err, errMismatch) {
			s.remove(name)
		}
		s.misses.Add(1)
		return nil, false
	}
	c.damaged = func() { s.remove(name) }
	s.mu.Lock()
	if e, ok := s.files[name]; ok {
		s.lru.MoveToFront(e.elem)
	}
	s.mu.Unlock()
	now := time.Now()
	os.Chtimes(path, now, now) // the order across restarts
	s.hits.Add(1)
	return c, true
}

// readHead reads and checks the head of block file f.
func readHead(f *os.File, key string, size int) (*chunkReader, error) {
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	// Most heads fit one read of a page or two.
	buf := make([]byte, min(info.Size(), int64(prefixBytes+len(key)+fixedBytes+4096)))
	if _, err := f.ReadAt(buf, 0); err != nil {
		return nil, err
	}
	hb, ok := headBytes(buf, key)
	if !ok || int64(hb) > info.Size() {
		return nil, errMismatch
	}
	if hb > len(buf) {
		buf = make([]byte, hb)
		if _, err := f.ReadAt(buf, 0); err != nil {
			return nil, err
		}
	}
	c, err := parseHead(buf[:hb], key, size, info.Size()-int64(hb))
	if err != nil {
		return nil, err
	}
	c.dataOff = int64(hb)
	return c, nil
}

// open reads and checks key's file into *scratch (into a new buffer when
// scratch is nil) and returns a reader of its chunks.
func (s *Store) open(key string, size int, scratch *[]byte) (*chunkReader, bool) {
	return s.lookup(key, size, func(path string) (*chunkReader, error) {
		var buf []byte
		if scratch != nil {
			buf = *scratch
		}
		raw, err := readFile(path, buf)
		if err != nil {
			return nil, err
		}
		if scratch != nil {
			*scratch = raw[:0]
		}
		return parseFile(raw, key, size)
	})
}

// fileScratch holds buffers for the files Load reads: their bytes are
// needed only until the block is decompressed out of them.
var fileScratch = sync.Pool{New: func() any { return new([]byte) }}

// readFile reads the file at path into buf, grown when too small.
func readFile(path string, buf []byte) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	n := info.Size()
	if n > maxBlock+maxBlock/chunkBytes*entryBytes+1<<20 {
		return nil, errMismatch // no block file is that large
	}
	if int64(cap(buf)) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(f, buf); err != nil {
		return nil, err
	}
	return buf, nil
}

// Store keeps data under key, replacing what was there. It is best effort:
// a block that cannot be written (a full disk, a block over the budget) is
// simply not kept, and the error says why.
func (s *Store) Store(key string, data []byte) error {
	if len(data) > maxBlock {
		return fmt.Errorf("lz4store: block of %d bytes", len(data))
	}
	buf, err := encodeFile(key, data)
	if err != nil {
		return err
	}
	if int64(len(buf)) > s.budget {
		return fmt.Errorf("lz4store: a %d-byte file exceeds the budget", len(buf))
	}
	tmp, err := os.CreateTemp(s.dir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("lz4store: %w", err)
	}
	_, err = tmp.Write(buf)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	name := fileName(key)
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(s.dir, name))
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("lz4store: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forgetLocked(name)
	s.evictLocked(int64(len(buf)))
	s.addLocked(name, int64(len(buf)))
	s.stores.Add(1)
	return nil
}

// remove deletes a block file.
func (s *Store) remove(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forgetLocked(name)
	os.Remove(filepath.Join(s.dir, name))
}

// forgetLocked drops a file from the index (not from the disk).
func (s *Store) forgetLocked(name string) {
	if e, ok := s.files[name]; ok {
		s.lru.Remove(e.elem)
		delete(s.files, name)
		s.used -= e.size
	}
}

func (s *Store) addLocked(name string, size int64) {
	e := &entry{name: name, size: size}
	e.elem = s.lru.PushFront(e)
	s.files[name] = e
	s.used += size
}

// evictLocked deletes the least recently used files until room more bytes
// fit in the budget.
func (s *Store) evictLocked(room int64) {
	for s.used+room > s.budget && s.lru.Len() > 0 {
		e := s.lru.Remove(s.lru.Back()).(*entry)
		delete(s.files, e.name)
		s.used -= e.size
		os.Remove(filepath.Join(s.dir, e.name))
	}
}
