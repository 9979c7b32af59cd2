// Package lz4store keeps byte blocks in a local directory, compressed with
// LZ4, within a byte budget: a second tier under an in-memory cache of
// blocks that are expensive to make (LZMA-decoded table blocks), so a
// restarted process reads them back at LZ4 speed instead of decoding again.
//
// Each block is one file named by a hash of its key and holding the key, the
// block's length and an XXH64 checksum of its LZ4 bytes, then the LZ4 block
// (the checksum is over the compressed bytes, a quarter or less of the
// block, and a load checks it before decompressing: LZ4 decodes intact bytes
// to the block they were made from). A file that does not match its key in
// every respect — another key, a short or damaged file, a checksum that
// differs, LZ4 bytes that do not decode to the length — is a miss,
// never a wrong block: the caller decodes the block again and the file is
// replaced. Files are written to a temporary name and renamed, so a crash
// leaves either a whole file or none. When the files outgrow the budget the
// least recently used are deleted; the order survives restarts through the
// files' modification times.
package lz4store

import (
	"bytes"
	"container/list"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/pierrec/lz4/v4"
)

// magic starts every block file; a format change changes it.
const magic = "tbfs-lz4store-v2\n"

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

// header is what precedes the LZ4 bytes: the magic, the key, the block's
// length and the checksum of the LZ4 bytes.
func header(key string, n int, sum uint64) []byte {
	h := make([]byte, 0, len(magic)+4+len(key)+4+8)
	h = append(h, magic...)
	h = binary.LittleEndian.AppendUint32(h, uint32(len(key)))
	h = append(h, key...)
	h = binary.LittleEndian.AppendUint32(h, uint32(n))
	return binary.LittleEndian.AppendUint64(h, sum)
}

// errMismatch is a file that is not the block asked for.
var errMismatch = errors.New("lz4store: file does not hold the block")

// Load returns the block stored under key, of exactly size bytes (of any
// size up to the limit, for a negative size), into a new slice; ok is false
// when the store does not hold it whole and intact.
func (s *Store) Load(key string, size int) (data []byte, ok bool) {
	defer func() {
		if ok {
			s.hits.Add(1)
		} else {
			s.misses.Add(1)
		}
	}()
	if size > maxBlock {
		return nil, false
	}
	name := fileName(key)
	scratch := fileScratch.Get().(*[]byte)
	defer fileScratch.Put(scratch)
	raw, err := readFile(filepath.Join(s.dir, name), *scratch)
	if err != nil {
		return nil, false
	}
	*scratch = raw[:0]
	data, err = decodeFile(raw, key, size)
	if err != nil {
		// A damaged or foreign file: drop it so the block is stored anew.
		s.remove(name)
		return nil, false
	}
	s.mu.Lock()
	if e, ok := s.files[name]; ok {
		s.lru.MoveToFront(e.elem)
	}
	s.mu.Unlock()
	now := time.Now()
	os.Chtimes(filepath.Join(s.dir, name), now, now) // the order across restarts
	return data, true
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
	if n > maxBlock+1<<20 {
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

// decodeFile checks raw, the content of a block file, against key and size
// and returns the block.
func decodeFile(raw []byte, key string, size int) ([]byte, error) {
	rest, ok := bytes.CutPrefix(raw, []byte(magic))
	if !ok || len(rest) < 4 {
		return nil, errMismatch
	}
	kl := int(binary.LittleEndian.Uint32(rest))
	rest = rest[4:]
	if kl != len(key) || len(rest) < kl+12 || string(rest[:kl]) != key {
		return nil, errMismatch
	}
	rest = rest[kl:]
	n := int(binary.LittleEndian.Uint32(rest))
	sum := binary.LittleEndian.Uint64(rest[4:])
	rest = rest[12:]
	if size < 0 {
		size = n
	}
	if n != size || n > maxBlock {
		return nil, errMismatch
	}
	if xxhash.Sum64(rest) != sum {
		return nil, errMismatch
	}
	data := make([]byte, size)
	got, err := lz4.UncompressBlock(rest, data)
	if err != nil || got != size {
		return nil, errMismatch
	}
	return data, nil
}

// Store keeps data under key, replacing what was there. It is best effort:
// a block that cannot be written (a full disk, a block over the budget) is
// simply not kept, and the error says why.
func (s *Store) Store(key string, data []byte) error {
	if len(data) > maxBlock {
		return fmt.Errorf("lz4store: block of %d bytes", len(data))
	}
	hdr := header(key, len(data), 0) // the checksum is set below
	buf := make([]byte, len(hdr)+lz4.CompressBlockBound(len(data)))
	copy(buf, hdr)
	var c lz4.Compressor
	n, err := c.CompressBlock(data, buf[len(hdr):])
	if err != nil {
		return fmt.Errorf("lz4store: %w", err)
	}
	if n == 0 && len(data) > 0 {
		// Incompressible: LZ4 leaves it to the caller; such blocks are
		// not worth a second tier.
		return errors.New("lz4store: block does not compress")
	}
	buf = buf[:len(hdr)+n]
	binary.LittleEndian.PutUint64(buf[len(hdr)-8:], xxhash.Sum64(buf[len(hdr):]))
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
