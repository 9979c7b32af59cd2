package geister

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"

	"github.com/tbfs/tbfs/source"
)

// A frame manifest makes a table's integrity cheap to check. A SHA256SUMS
// line or a builder's sidecar covers a whole file, so checking it reads
// the whole table: ten times a first probe's cost on the shared tables,
// and a whole download for a remote one. The manifest holds one XXH64 per
// 8 KiB chunk of the table's decoded bytes (the reference's zstd frame
// size, so a chunk is a frame), with the sha256 of all of them that the
// sums give for the raw file. A table with a manifest (beside it, or in
// Options.Manifests for tables in a read-only location) is checked
// chunk by chunk as it is read: a zstd frame after it is decoded, a raw
// chunk the first time any byte of it is read (a bitmap remembers, so a
// warm read pays one atomic load). One manifest serves the raw file and any
// compression of it, since it covers the decoded bytes. Tablebase.Manifest
// writes it, only for a table that verifies against its sums.
//
// Layout (little-endian): the magic, the material id (u16), the entries
// (u64), the chunk size (u32), the raw sha256 (32 bytes), the chunk count
// (u64), one XXH64 per chunk, and an XXH64 of everything before it.

// ManifestSuffix is appended to a material's raw file name to name its
// frame manifest: "id000_pb1pr1ob1or1_obsblk.bin.tbsum".
const ManifestSuffix = ".tbsum"

const (
	manifestMagic = "GTBSUM\x00\x01"
	manifestChunk = 8192
	// maxManifestBytes bounds what a reader accepts: 8 bytes per 8 KiB
	// chunk of the largest table (about 10 GB) with room to spare.
	maxManifestBytes = 64 << 20
)

// frameManifest is a parsed frame manifest.
type frameManifest struct {
	id      int
	entries uint64
	rawSum  [sha256.Size]byte
	chunks  []uint64
}

func (mf *frameManifest) encode() []byte {
	var b []byte
	b = append(b, manifestMagic...)
	b = binary.LittleEndian.AppendUint16(b, uint16(mf.id))
	b = binary.LittleEndian.AppendUint64(b, mf.entries)
	b = binary.LittleEndian.AppendUint32(b, manifestChunk)
	b = append(b, mf.rawSum[:]...)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(mf.chunks)))
	for _, h := range mf.chunks {
		b = binary.LittleEndian.AppendUint64(b, h)
	}
	return binary.LittleEndian.AppendUint64(b, xxhash.Sum64(b))
}

// decodeFrameManifest parses a manifest and checks it describes m's table.
func decodeFrameManifest(b []byte, m Material) (*frameManifest, error) {
	const fixed = len(manifestMagic) + 2 + 8 + 4 + sha256.Size + 8
	if len(b) < fixed+8 || !bytes.Equal(b[:len(manifestMagic)], []byte(manifestMagic)) {
		return nil, errors.New("not a frame manifest")
	}
	body := b[:len(b)-8]
	if xxhash.Sum64(body) != binary.LittleEndian.Uint64(b[len(b)-8:]) {
		return nil, errors.New("the manifest's own checksum does not match (the manifest is damaged)")
	}
	r := body[len(manifestMagic):]
	mf := &frameManifest{id: int(binary.LittleEndian.Uint16(r)), entries: binary.LittleEndian.Uint64(r[2:])}
	chunk := binary.LittleEndian.Uint32(r[10:])
	copy(mf.rawSum[:], r[14:])
	n := binary.LittleEndian.Uint64(r[14+sha256.Size:])
	r = r[fixed-len(manifestMagic):]
	switch {
	case mf.id != m.ID() || mf.entries != m.Entries():
		return nil, fmt.Errorf("the manifest is for material id %d with %d entries, the table is %v (id %d, %d entries)", mf.id, mf.entries, m, m.ID(), m.Entries())
	case chunk != manifestChunk:
		return nil, fmt.Errorf("chunks of %d bytes, want %d", chunk, manifestChunk)
	case n != (mf.entries+manifestChunk-1)/manifestChunk || uint64(len(r)) != 8*n:
		return nil, fmt.Errorf("%d chunk hashes in %d bytes for %d entries", n, len(r), mf.entries)
	}
	mf.chunks = make([]uint64, n)
	for i := range mf.chunks {
		mf.chunks[i] = binary.LittleEndian.Uint64(r[8*i:])
	}
	return mf, nil
}

// checkChunk compares decoded chunk c with the manifest.
func (mf *frameManifest) checkChunk(name string, c int, data []byte) error {
	if got := xxhash.Sum64(data); got != mf.chunks[c] {
		return fmt.Errorf("%w: %s chunk %d (entries %d..%d) hashes to %#016x, its manifest says %#016x", ErrCorrupt, name, c, c*manifestChunk, c*manifestChunk+len(data)-1, got, mf.chunks[c])
	}
	return nil
}

// readManifest returns the frame manifest of material m's table in source
// i, from beside it or from Options.Manifests; nil when there is none.
func (tb *Tablebase) readManifest(ctx context.Context, i int, m Material) (*frameManifest, error) {
	name := m.FileName() + ManifestSuffix
	src := tb.sources[i]
	if tb.manifests != nil {
		src = tb.manifests
	}
	data, err := readSideFile(ctx, src, name, maxManifestBytes)
	if err != nil || data == nil {
		return nil, err
	}
	mf, err := decodeFrameManifest(data, m)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, name, err)
	}
	return mf, nil
}

// attachManifest makes r check every chunk it reads against mf; it
// reports false when r's frames are not the manifest's chunks (a table
// recompressed with other frame sizes), which then needs the whole check.
func attachManifest(r tableReader, mf *frameManifest) bool {
	switch t := r.(type) {
	case *rawTable:
		t.sums = mf
		t.checked = make([]atomic.Uint64, (len(mf.chunks)+63)/64)
		return true
	case *zstdTable:
		if t.st.uniform != manifestChunk || t.st.frames() != len(mf.chunks) {
			return false
		}
		t.sums = mf
		return true
	}
	return false
}

// checkRawChunks checks, once each, the manifest chunks that n bytes at off
// of a raw table fall in.
func (t *rawTable) checkRawChunks(ctx context.Context, off uint64, n int) error {
	for c := off / manifestChunk; c <= (off+uint64(n)-1)/manifestChunk; c++ {
		word, bit := &t.checked[c/64], uint64(1)<<(c%64)
		if word.Load()&bit != 0 {
			continue
		}
		lo := c * manifestChunk
		buf := make([]byte, min(manifestChunk, t.sums.entries-lo))
		if got, err := t.obj.ReadAt(ctx, buf, int64(lo), source.HintData); got != len(buf) {
			return fmt.Errorf("geister: read %s chunk %d: %w", t.name, c, orUnexpectedEOF(err))
		}
		if err := t.sums.checkChunk(t.name, int(c), buf); err != nil {
			return err
		}
		word.Or(bit)
	}
	return nil
}

// Manifest returns material m's frame manifest, for storing in m's source
// as m.FileName()+ManifestSuffix. It reads the whole table, decoded, and
// writes a manifest only for a table that verifies against the sums of its
// source (SHA256SUMS or the builder's sidecar: the raw file's sum, or the
// table file's own); a table they do not list fails, as does one they list
// with another sum, the latter with ErrCorrupt (see Verify).
func (tb *Tablebase) Manifest(ctx context.Context, m Material) ([]byte, error) {
	c, err := tb.Verify(ctx, m, nil)
	switch {
	case err != nil:
		return nil, err
	case c.Legacy:
		return nil, fmt.Errorf("geister: %s is in the legacy layout; manifests cover obsblk tables", c.Name)
	case !c.Listed:
		return nil, fmt.Errorf("geister: no %s or %s lists %s: nothing to check it against before writing its manifest", SumsFile, sidecarName(m), c.Name)
	}
	return c.Manifest, nil
}

// ManifestOf returns the frame manifest of material m's table whose raw
// bytes are values, for a builder that has just written them (and so has
// nothing to verify them against).
func ManifestOf(m Material, values []byte) ([]byte, error) {
	if uint64(len(values)) != m.Entries() && m.Valid() {
		return nil, fmt.Errorf("geister: %d bytes for %v, whose table has %d entries", len(values), m, m.Entries())
	}
	mf, _, err := ManifestFrom(m, bytes.NewReader(values))
	return mf, err
}

// ManifestFrom is ManifestOf for a table read from r, which must hold
// exactly the material's entries; it also returns the table's sha256.
func ManifestFrom(m Material, r io.Reader) ([]byte, [sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	if !m.Valid() {
		return nil, sum, fmt.Errorf("%w: %v", ErrNoMaterial, m)
	}
	mf := newFrameManifest(m)
	h := sha256.New()
	chunk := make([]byte, manifestChunk)
	var n uint64
	for {
		c, err := io.ReadFull(r, chunk)
		if c > 0 {
			mf.add(h, chunk[:c])
			n += uint64(c)
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return nil, sum, err
		}
	}
	if n != m.Entries() {
		return nil, sum, fmt.Errorf("geister: %d bytes for %v, whose table has %d entries", n, m, m.Entries())
	}
	h.Sum(mf.rawSum[:0])
	return mf.encode(), mf.rawSum, nil
}

func newFrameManifest(m Material) *frameManifest {
	n := (m.Entries() + manifestChunk - 1) / manifestChunk
	return &frameManifest{id: m.ID(), entries: m.Entries(), chunks: make([]uint64, 0, n)}
}

// add hashes the next chunk into the manifest and into the whole-table
// sha256 h.
func (mf *frameManifest) add(h hash.Hash, chunk []byte) {
	h.Write(chunk)
	mf.chunks = append(mf.chunks, xxhash.Sum64(chunk))
}

// orUnexpectedEOF turns a short read's missing or EOF error into
// io.ErrUnexpectedEOF.
func orUnexpectedEOF(err error) error {
	if err == nil || errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
