package chesstb

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cespare/xxhash/v2"

	"github.com/tbfs/tbfs/format/internal/sidecar"
	"github.com/tbfs/tbfs/source"
)

// This file reads and writes block integrity manifests. The format's only
// checksum covers the whole file, so checking it costs a read of every byte:
// a probe cannot afford it, and a flipped bit inside a compressed block may
// well decode to other, valid-looking values. A manifest holds one XXH64
// per compressed block and one of the header (through the block offsets),
// written by "tbprobe verify --manifest" from a file whose checksum and
// blocks verified. A reader with a manifest checks the header when it opens
// the table and each block as it reads it, before decoding, so a damaged
// block is an error at that block, never a value.
//
// Layout (little-endian): the magic, the table file's size, its version as
// the transport names it (length-prefixed; empty for local files), the
// header's length and hash, per frame the block count and one hash per
// block, and an XXH64 of everything before it.

// ManifestSuffix is appended to a table's object name to name its manifest:
// "dtz/KQKR.lzdtz" has its manifest in "dtz/KQKR.lzdtz.tbsum".
const ManifestSuffix = ".tbsum"

const manifestMagic = "TBSUM\x00\x01\n"

// maxManifestBytes bounds what a reader accepts, so a damaged manifest
// cannot make it allocate without limit (8 bytes a block, a block per
// 64 KiB of a multi-terabyte table set's largest file).
const maxManifestBytes = 1 << 30

// manifest is the parsed integrity manifest of one table file.
type manifest struct {
	size       int64
	version    string
	headerLen  int
	headerHash uint64
	blocks     [2][]uint64
}

// encode writes m in the manifest layout.
func (m *manifest) encode() []byte {
	var b []byte
	b = append(b, manifestMagic...)
	b = binary.LittleEndian.AppendUint64(b, uint64(m.size))
	b = binary.LittleEndian.AppendUint16(b, uint16(len(m.version)))
	b = append(b, m.version...)
	b = binary.LittleEndian.AppendUint64(b, uint64(m.headerLen))
	b = binary.LittleEndian.AppendUint64(b, m.headerHash)
	for c := range m.blocks {
		b = binary.LittleEndian.AppendUint64(b, uint64(len(m.blocks[c])))
		for _, h := range m.blocks[c] {
			b = binary.LittleEndian.AppendUint64(b, h)
		}
	}
	return binary.LittleEndian.AppendUint64(b, xxhash.Sum64(b))
}

// decodeManifest parses a manifest, checking its own hash.
func decodeManifest(b []byte) (*manifest, error) {
	if len(b) < len(manifestMagic)+8 || !bytes.Equal(b[:len(manifestMagic)], []byte(manifestMagic)) {
		return nil, errors.New("not a tbfs block manifest")
	}
	body, sum := b[:len(b)-8], binary.LittleEndian.Uint64(b[len(b)-8:])
	if xxhash.Sum64(body) != sum {
		return nil, errors.New("manifest checksum mismatch (the manifest itself is damaged)")
	}
	r := body[len(manifestMagic):]
	short := errors.New("manifest truncated")
	u64 := func() (uint64, bool) {
		if len(r) < 8 {
			return 0, false
		}
		v := binary.LittleEndian.Uint64(r)
		r = r[8:]
		return v, true
	}
	m := &manifest{}
	size, ok := u64()
	if !ok || len(r) < 2 {
		return nil, short
	}
	m.size = int64(size)
	n := int(binary.LittleEndian.Uint16(r))
	r = r[2:]
	if len(r) < n {
		return nil, short
	}
	m.version, r = string(r[:n]), r[n:]
	hl, ok1 := u64()
	hh, ok2 := u64()
	if !ok1 || !ok2 || hl > size {
		return nil, short
	}
	m.headerLen, m.headerHash = int(hl), hh
	for c := range m.blocks {
		cnt, ok := u64()
		if !ok || cnt > uint64(len(r))/8 {
			return nil, short
		}
		m.blocks[c] = make([]uint64, cnt)
		for i := range m.blocks[c] {
			m.blocks[c][i], _ = u64()
		}
	}
	if len(r) != 0 {
		return nil, errors.New("manifest has trailing bytes")
	}
	return m, nil
}

// check matches the manifest against the opened table t: the same file
// version, the same header, the same number of blocks per frame.
func (m *manifest) check(t *tableFile) error {
	size, version := t.obj.Size(), source.VersionOf(t.obj)
	if m.size != size || (m.version != "" && version != "" && m.version != version) {
		return fmt.Errorf("%w: %w: the manifest was written for a %d-byte file of version %q, this one has %d bytes, version %q (rerun tbprobe verify --manifest if the table was replaced)",
			ErrCorrupt, errBlockHash, m.size, m.version, size, version)
	}
	raw := t.hdr.raw
	if m.headerLen != len(raw) || xxhash.Sum64(raw) != m.headerHash {
		return fmt.Errorf("%w: %w: the header differs from the manifest's (the file is damaged, or the manifest is stale)", ErrCorrupt, errBlockHash)
	}
	for c := range m.blocks {
		var want uint64
		if f := &t.hdr.frames[c]; f.stored() {
			want = f.blockCnt
		}
		if uint64(len(m.blocks[c])) != want {
			return fmt.Errorf("%w: %w: the manifest lists %d blocks for the %s frame, the header %d", ErrCorrupt, errBlockHash, len(m.blocks[c]), colorName(c), want)
		}
	}
	return nil
}

// checkBlock compares the compressed bytes of block b of frame c with the
// manifest's hash of them.
func (m *manifest) checkBlock(c int, b uint64, comp []byte) error {
	if got, want := xxhash.Sum64(comp), m.blocks[c][b]; got != want {
		return fmt.Errorf("%w: %w: block hash %#016x, the manifest says %#016x", ErrCorrupt, errBlockHash, got, want)
	}
	return nil
}

// fetchManifest starts looking up the manifest of the table named
// tableName in src (or in Options.Manifests), alongside the table's own
// open so that over a remote source a manifest (or its absence) costs no
// round trip of its own; nil when manifests are off.
func (tb *Tablebase) fetchManifest(ctx context.Context, src source.Source, tableName string) *sidecar.Fetch {
	if tb.opts.NoManifests {
		return nil
	}
	if tb.opts.Manifests != nil {
		src = tb.opts.Manifests
	}
	return sidecar.Start(ctx, src, tableName+ManifestSuffix, maxManifestBytes)
}

// attachManifest checks the manifest mf found against t's header and keeps
// it for the block reads. Without one the table opens unchecked unless the
// options require a manifest.
func (tb *Tablebase) attachManifest(t *tableFile, mf *sidecar.Fetch) error {
	if mf == nil {
		return nil
	}
	data, err := mf.Wait()
	if errors.Is(err, sidecar.ErrTooLarge) {
		err = fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if err != nil {
		return t.fileErr(-1, err)
	}
	if data == nil {
		if tb.opts.RequireManifest {
			return t.fileErr(-1, fmt.Errorf("%w: %w: no manifest %s", ErrCorrupt, errBlockHash, mf.Name))
		}
		return nil
	}
	m, err := decodeManifest(data)
	if err != nil {
		return t.fileErr(-1, fmt.Errorf("%w: %w: %s: %v", ErrCorrupt, errBlockHash, mf.Name, err))
	}
	if err := m.check(t); err != nil {
		return t.fileErr(-1, err)
	}
	t.sums = m
	return nil
}

// Manifest returns the integrity manifest of the kind-k table of a
// canonical material, for storing as its object name plus ManifestSuffix.
// It first checks the file's stored checksum and decodes every block, so a
// manifest is only ever written for a table that verifies; a table that
// does not fails with an error matching ErrCorrupt.
func (tb *Tablebase) Manifest(ctx context.Context, k Kind, material string) ([]byte, error) {
	t, done, err := tb.openNamed(ctx, k, material)
	if err != nil {
		return nil, err
	}
	defer done()
	if err := t.confirmChecksum(ctx); err != nil {
		return nil, t.fileErr(-1, err)
	}
	m := &manifest{size: t.obj.Size(), version: source.VersionOf(t.obj),
		headerLen: len(t.hdr.raw), headerHash: xxhash.Sum64(t.hdr.raw)}
	for c := range 2 {
		f := &t.hdr.frames[c]
		if !f.stored() {
			continue
		}
		m.blocks[c] = make([]uint64, f.blockCnt)
		for b := range f.blockCnt {
			comp, err := t.readCompressedRaw(ctx, c, b, nil)
			if err != nil {
				return nil, t.fileErr(int64(b), err)
			}
			m.blocks[c][b] = xxhash.Sum64(comp)
			if f.skipBlock(b) {
				continue
			}
			if err := t.verifyBlock(ctx, c, b); err != nil {
				return nil, t.fileErr(int64(b), err)
			}
		}
	}
	return m.encode(), nil
}
