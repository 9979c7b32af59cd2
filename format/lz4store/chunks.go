package lz4store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"
	"github.com/pierrec/lz4/v4"
)

// chunkBytes is the decoded length of each chunk a block is stored in
// (the last may be shorter), a page. Chunks are independent LZ4 blocks, so a
// reader decodes only the chunks holding the bytes it reads: a table lookup
// reads a few bytes here and there, and a cold pass of random probes reads
// a fifth of a pack block's pages. Chunks of 4 KiB make the files 15%
// larger than 64 KiB ones, and that pass a tenth faster (tbprobe bench
// --cold-only of the 10k list).
const chunkBytes = 4 << 10

// rawChunk marks, in a chunk table entry, a chunk stored as it is: LZ4
// cannot shorten it.
const rawChunk = 1 << 31

// entryBytes is a chunk table entry's length: the chunk's stored length
// (rawChunk set for a raw chunk) and the XXH64 of its stored bytes.
const entryBytes = 4 + 8

// errMismatch is a file that is not the block asked for.
var errMismatch = errors.New("lz4store: file does not hold the block")

// A block file is, all integers little-endian:
//
//	magic
//	XXH64 of everything after it up to the chunks (u64)
//	key length (u32), key
//	block length (u32), chunk length (u32)
//	chunk table: an entry (entryBytes) per chunk
//	the chunks
//
// The head's checksum is checked when the file is opened, and each chunk's
// when it is read, before it is decoded; so only the chunks a reader reads
// are read from the file, hashed and decoded.

// prefixBytes is the head's length before the key.
const prefixBytes = len(magic) + 8 + 4

// fixedBytes is the head's length between the key and the table.
const fixedBytes = 4 + 4

// encodeFile returns the file that keeps data under key.
func encodeFile(key string, data []byte) ([]byte, error) {
	chunks := (len(data) + chunkBytes - 1) / chunkBytes
	head := prefixBytes + len(key) + fixedBytes + entryBytes*chunks
	buf := make([]byte, head, head+lz4.CompressBlockBound(len(data))/2)
	h := append(buf[:0], magic...)
	h = binary.LittleEndian.AppendUint64(h, 0) // set below
	h = binary.LittleEndian.AppendUint32(h, uint32(len(key)))
	h = append(h, key...)
	h = binary.LittleEndian.AppendUint32(h, uint32(len(data)))
	h = binary.LittleEndian.AppendUint32(h, chunkBytes)
	table := buf[len(h):head]
	var c lz4.Compressor
	for i := range chunks {
		chunk := data[i*chunkBytes : min(len(data), (i+1)*chunkBytes)]
		at := len(buf)
		buf = slices.Grow(buf, lz4.CompressBlockBound(len(chunk)))
		buf = buf[:at+lz4.CompressBlockBound(len(chunk))]
		n, err := c.CompressBlock(chunk, buf[at:])
		if err != nil {
			return nil, fmt.Errorf("lz4store: %w", err)
		}
		entry := uint32(n)
		if n == 0 || n >= len(chunk) {
			n = copy(buf[at:], chunk)
			entry = uint32(n) | rawChunk
		}
		buf = buf[:at+n]
		table = buf[head-entryBytes*chunks : head] // buf may have moved
		binary.LittleEndian.PutUint32(table[entryBytes*i:], entry)
		binary.LittleEndian.PutUint64(table[entryBytes*i+4:], xxhash.Sum64(buf[at:]))
	}
	binary.LittleEndian.PutUint64(buf[len(magic):], xxhash.Sum64(buf[len(magic)+8:head]))
	return buf, nil
}

// headBytes returns the length of the head of a file that starts with
// prefix (at least prefixBytes+len(key)+fixedBytes bytes of it), or false
// when prefix cannot start key's file. It checks nothing else.
func headBytes(prefix []byte, key string) (int, bool) {
	if len(prefix) < prefixBytes+len(key)+fixedBytes || string(prefix[:len(magic)]) != magic {
		return 0, false
	}
	if int(binary.LittleEndian.Uint32(prefix[len(magic)+8:])) != len(key) {
		return 0, false
	}
	rest := prefix[prefixBytes+len(key):]
	n := int(binary.LittleEndian.Uint32(rest))
	chunk := int(binary.LittleEndian.Uint32(rest[4:]))
	if n > maxBlock || chunk <= 0 || chunk > maxBlock {
		return 0, false
	}
	return prefixBytes + len(key) + fixedBytes + entryBytes*((n+chunk-1)/chunk), true
}

// parseHead checks head, a file's head (headBytes long), against key and
// size (any size up to the limit, when negative) and against dataBytes,
// the length of the chunks after it, and returns a reader of the block
// whose chunks are still to be given to it.
func parseHead(head []byte, key string, size int, dataBytes int64) (*chunkReader, error) {
	hb, ok := headBytes(head, key)
	if !ok || hb != len(head) {
		return nil, errMismatch
	}
	if xxhash.Sum64(head[len(magic)+8:]) != binary.LittleEndian.Uint64(head[len(magic):]) {
		return nil, errMismatch
	}
	if string(head[prefixBytes:prefixBytes+len(key)]) != key {
		return nil, errMismatch
	}
	rest := head[prefixBytes+len(key):]
	n := int(binary.LittleEndian.Uint32(rest))
	chunk := int(binary.LittleEndian.Uint32(rest[4:]))
	if size >= 0 && n != size {
		return nil, errMismatch
	}
	table := rest[fixedBytes:]
	chunks := len(table) / entryBytes
	offs := make([]int64, chunks+1)
	for i := range chunks {
		entry := binary.LittleEndian.Uint32(table[entryBytes*i:])
		want := min(chunk, n-i*chunk)
		stored := int(entry &^ rawChunk)
		if entry&rawChunk != 0 && stored != want ||
			entry&rawChunk == 0 && (stored == 0 || stored > lz4.CompressBlockBound(want)) {
			return nil, errMismatch
		}
		offs[i+1] = offs[i] + int64(stored)
	}
	if offs[chunks] != dataBytes {
		return nil, errMismatch
	}
	return &chunkReader{size: n, chunk: chunk, table: table, offs: offs}, nil
}

// parseFile checks raw, the content of a block file, against key and size
// (any size up to the limit, when negative) and returns a reader of the
// block out of raw.
func parseFile(raw []byte, key string, size int) (*chunkReader, error) {
	hb, ok := headBytes(raw, key)
	if !ok || hb > len(raw) {
		return nil, errMismatch
	}
	c, err := parseHead(raw[:hb], key, size, int64(len(raw)-hb))
	if err != nil {
		return nil, err
	}
	c.data = raw[hb:]
	return c, nil
}

// chunkReader reads a block out of its chunks, checking each before it
// decodes it. The chunks are in data, or in file from dataOff on. It is
// safe for concurrent use.
type chunkReader struct {
	size, chunk int
	table       []byte  // the chunks' entries
	offs        []int64 // chunk i is bytes [offs[i], offs[i+1]) of the chunks
	data        []byte
	file        *openFile
	dataOff     int64
	// damaged, when set, is called once a chunk fails its check.
	damaged func()
	failed  atomic.Bool
}

// ReadAt decodes the chunks that hold bytes [off, off+len(p)) of the
// block, each straight into p where p holds the whole chunk.
func (c *chunkReader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off > int64(c.size) {
		return 0, errMismatch
	}
	lo := int(off)
	hi := min(c.size, lo+len(p))
	var tmp []byte
	for i := lo / c.chunk; i*c.chunk < hi; i++ {
		clo, chi := i*c.chunk, min(c.size, (i+1)*c.chunk)
		dst := p[max(clo-lo, 0):]
		whole := clo >= lo && chi <= hi
		if whole {
			dst = dst[:chi-clo]
		} else {
			if tmp == nil {
				tmp = make([]byte, c.chunk)
			}
			dst = tmp[:chi-clo]
		}
		if err := c.decode(i, dst); err != nil {
			if c.damaged != nil && !c.failed.Swap(true) {
				c.damaged()
			}
			return 0, err
		}
		if !whole {
			copy(p[max(clo-lo, 0):hi-lo], dst[max(lo-clo, 0):])
		}
	}
	if hi-lo < len(p) {
		return hi - lo, io.EOF
	}
	return len(p), nil
}

// storedScratch holds buffers for chunks read from a file.
var storedScratch = sync.Pool{New: func() any { return new([]byte) }}

// decode checks chunk i and decodes it into dst, of its exact length.
func (c *chunkReader) decode(i int, dst []byte) error {
	entry := binary.LittleEndian.Uint32(c.table[entryBytes*i:])
	sum := binary.LittleEndian.Uint64(c.table[entryBytes*i+4:])
	var src []byte
	if c.file == nil {
		src = c.data[c.offs[i]:c.offs[i+1]]
	} else {
		scratch := storedScratch.Get().(*[]byte)
		defer storedScratch.Put(scratch)
		n := int(c.offs[i+1] - c.offs[i])
		if cap(*scratch) < n {
			*scratch = make([]byte, n)
		}
		src = (*scratch)[:n]
		if got, err := c.file.f.ReadAt(src, c.dataOff+c.offs[i]); got != n {
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
	}
	if xxhash.Sum64(src) != sum {
		return errMismatch
	}
	if entry&rawChunk != 0 {
		copy(dst, src)
		return nil
	}
	if got, err := lz4.UncompressBlock(src, dst); err != nil || got != len(dst) {
		return errMismatch
	}
	return nil
}

// Close gives up the file the reader reads its chunks from, if any: the
// caller reads no more.
func (c *chunkReader) Close() error {
	if c.file != nil {
		c.file.close()
	}
	return nil
}

// openFile is a block file a reader keeps open; open counts those of a
// Store.
type openFile struct {
	f      *os.File
	open   *atomic.Int64
	closed atomic.Bool
}

func (o *openFile) close() {
	if !o.closed.Swap(true) {
		o.f.Close()
		o.open.Add(-1)
	}
}
