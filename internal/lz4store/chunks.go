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
	offs := make([]int, chunks+1)
	for i := range chunks {
		entry := binary.LittleEndian.Uint32(table[4*i:])
		want := min(chunk, n-i*chunk)
		stored := int(entry &^ rawChunk)
		if entry&rawChunk != 0 && stored != want ||
			entry&rawChunk == 0 && (stored == 0 || stored > lz4.CompressBlockBound(want)) {
			return nil, errMismatch
		}
		offs[i+1] = offs[i] + stored
	}
	if offs[chunks] != len(data) {
		return nil, errMismatch
	}
	return &chunkReader{size: n, chunk: chunk, table: table, data: data, offs: offs}, nil
}

// chunkReader reads a block out of its checked chunks. It is safe for
// concurrent use.
type chunkReader struct {
	size, chunk int
	table       []byte // the chunks' entries
	data        []byte // their stored bytes
	offs        []int  // chunk i is data[offs[i]:offs[i+1]]
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

// decode decodes chunk i into dst, of its exact length.
func (c *chunkReader) decode(i int, dst []byte) error {
	entry := binary.LittleEndian.Uint32(c.table[4*i:])
	src := c.data[c.offs[i]:c.offs[i+1]]
	if entry&rawChunk != 0 {
		copy(dst, src)
		return nil
	}
	if got, err := lz4.UncompressBlock(src, dst); err != nil || got != len(dst) {
		return errMismatch
	}
	return nil
}
