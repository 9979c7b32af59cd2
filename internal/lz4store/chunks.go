package lz4store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/cespare/xxhash/v2"
	"github.com/pierrec/lz4/v4"
)

// chunkBytes is the decoded length of each chunk a block is stored in
// (the last may be shorter). Chunks are independent LZ4 blocks, so a reader
// decodes a block only as far as it is asked to; at LZ4's own 64 KiB
// window a chunk loses little to the cut.
const chunkBytes = 64 << 10

// rawChunk marks, in a chunk table entry, a chunk stored as it is: LZ4
// cannot shorten it.
const rawChunk = 1 << 31

// errMismatch is a file that is not the block asked for.
var errMismatch = errors.New("lz4store: file does not hold the block")

// A block file is, all integers little-endian:
//
//	magic
//	key length (u32), key
//	block length (u32), chunk length (u32)
//	XXH64 of everything after it (u64)
//	chunk table: per chunk, its stored length (u32, rawChunk set for a raw chunk)
//	the chunks
//
// The checksum covers the table and the chunks, and is checked before any
// chunk is decoded.

// fixedBytes is the header's length besides the magic, the key and its
// length.
const fixedBytes = 4 + 4 + 8

// encodeFile returns the file that keeps data under key.
func encodeFile(key string, data []byte) ([]byte, error) {
	chunks := (len(data) + chunkBytes - 1) / chunkBytes
	hdr := len(magic) + 4 + len(key) + fixedBytes
	buf := make([]byte, hdr+4*chunks, hdr+4*chunks+lz4.CompressBlockBound(len(data))/2)
	h := append(buf[:0], magic...)
	h = binary.LittleEndian.AppendUint32(h, uint32(len(key)))
	h = append(h, key...)
	h = binary.LittleEndian.AppendUint32(h, uint32(len(data)))
	h = binary.LittleEndian.AppendUint32(h, chunkBytes)
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
		binary.LittleEndian.PutUint32(buf[hdr+4*i:], entry)
	}
	binary.LittleEndian.PutUint64(buf[hdr-8:], xxhash.Sum64(buf[hdr:]))
	return buf, nil
}

// parseFile checks raw, the content of a block file, against key and size
// (any size up to the limit, when negative) and returns a reader of the
// block. Every length in the file is checked against the others, and the
// checksum against the table and the chunks, before anything is decoded.
func parseFile(raw []byte, key string, size int) (*chunkReader, error) {
	rest, ok := bytes.CutPrefix(raw, []byte(magic))
	if !ok || len(rest) < 4 {
		return nil, errMismatch
	}
	kl := int(binary.LittleEndian.Uint32(rest))
	rest = rest[4:]
	if kl != len(key) || len(rest) < kl+fixedBytes || string(rest[:kl]) != key {
		return nil, errMismatch
	}
	rest = rest[kl:]
	n := int(binary.LittleEndian.Uint32(rest))
	chunk := int(binary.LittleEndian.Uint32(rest[4:]))
	sum := binary.LittleEndian.Uint64(rest[8:])
	rest = rest[fixedBytes:]
	if size < 0 {
		size = n
	}
	if n != size || n > maxBlock || chunk <= 0 || chunk > maxBlock {
		return nil, errMismatch
	}
	chunks := (n + chunk - 1) / chunk
	if len(rest)/4 < chunks || xxhash.Sum64(rest) != sum {
		return nil, errMismatch
	}
	table, data := rest[:4*chunks], rest[4*chunks:]
	total := 0
	for i := range chunks {
		entry := binary.LittleEndian.Uint32(table[4*i:])
		want := min(chunk, n-i*chunk)
		stored := int(entry &^ rawChunk)
		if entry&rawChunk != 0 && stored != want ||
			entry&rawChunk == 0 && (stored == 0 || stored > lz4.CompressBlockBound(want)) {
			return nil, errMismatch
		}
		total += stored
	}
	if total != len(data) {
		return nil, errMismatch
	}
	return &chunkReader{chunk: chunk, table: table, data: data, left: n}, nil
}

// chunkReader reads a block out of its checked chunks, one per Read.
type chunkReader struct {
	chunk   int
	table   []byte // the entries of the chunks not yet read
	data    []byte // their stored bytes
	left    int    // the block's bytes not yet decoded
	pending []byte // the rest of a chunk decoded for a short p
}

// Read decodes the next chunk into p, or into a buffer it copies from
// when p is shorter than the chunk.
func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.pending) > 0 {
		n := copy(p, c.pending)
		c.pending = c.pending[n:]
		return n, nil
	}
	if c.left == 0 {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	want := min(c.chunk, c.left)
	entry := binary.LittleEndian.Uint32(c.table)
	stored := int(entry &^ rawChunk)
	src := c.data[:stored]
	dst := p
	if len(dst) < want {
		dst = make([]byte, want)
	}
	dst = dst[:want]
	if entry&rawChunk != 0 {
		copy(dst, src)
	} else if got, err := lz4.UncompressBlock(src, dst); err != nil || got != want {
		return 0, errMismatch
	}
	c.table, c.data, c.left = c.table[4:], c.data[stored:], c.left-want
	if len(p) < want {
		n := copy(p, dst)
		c.pending = dst[n:]
		return n, nil
	}
	return want, nil
}
