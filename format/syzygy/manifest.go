package syzygy

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/cespare/xxhash/v2"

	"github.com/tbfs/tbfs/format/internal/sidecar"
	"github.com/tbfs/tbfs/source"
)

// The embedded checksum covers the whole file, so the gate (gate.go) makes
// the first probe of a table wait for every byte of it: over a remote
// source, gigabytes before one answer. An integrity manifest, written by
// "tbprobe verify --manifest" from a file whose embedded checksum
// verified, holds an XXH64 per fixed-size page of the file; a table opened
// with one checks every page each read touches, before anything is
// decoded from it, and needs no whole-file check.
//
// What makes a manifest trustworthy without trusting its writer: it also
// holds the generator's per-chunk hashes (CityHashCrc256 of each 16 MiB
// chunk) and the file's embedded checksum. The reader requires that the
// chunk hashes combine (CityHashCrc128) to that checksum and that the
// checksum equals the one at the end of the file it opens, so a manifest
// made from a damaged file (whose chunk hashes cannot combine to the
// stored value), one made for another file, or random bytes with a valid
// self-hash are all refused; the page hashes are written from the same
// bytes as the chunk hashes. A manifest that is damaged, forged or written
// for another size or version of the file is ignored, and the table falls
// back to the whole-file gate: it is never trusted, and never the cause of
// a wrong value.
//
// Layout (little-endian): the magic, the file's size, its version as the
// transport names it (length-prefixed; empty for local files), log2 of the
// page size, the embedded checksum (two words), the chunk count and 32
// bytes per chunk, the page count and 8 bytes per page, and an XXH64 of
// everything before it.

// ManifestSuffix is appended to a table's object name to name its
// manifest ("KQvK.rtbw" has "KQvK.rtbw.tbsum"): the same scheme, and the
// same suffix, as chesstb's manifests.
const ManifestSuffix = ".tbsum"

const manifestMagic = "TBSYZ\x00\x01\n"

// ManifestPageShift is log2 of the page size the manifest writer uses:
// 64 KiB, the remote sources' cache block (source/cache), so checking a
// page costs a remote read no extra request; a header read, an index page
// and a compressed block (32 bytes to a few KiB) each touch one page, or
// two when they straddle a boundary. A manifest costs 8 bytes per page:
// 128 KiB per GiB of table.
const ManifestPageShift = 16

// Page sizes a reader accepts: at least 1 KiB (a manifest of a quarter of
// its table's size would be absurd), at most one checksum chunk, so pages
// never straddle chunks.
const minPageShift, maxPageShift = 10, 24

// maxManifestBytes bounds what a reader accepts: 8 bytes per 1 KiB page of
// the largest table (under 50 GB) and change.
const maxManifestBytes = 512 << 20

// manifest is the parsed integrity manifest of one table file.
type manifest struct {
	size      int64
	version   string
	pageShift uint8
	stored    [2]uint64
	chunks    []byte // 32 bytes per checksum chunk, as the checksum hashes them
	pages     []uint64
}

// shapeOf returns how many checksum chunks and pages a file of size bytes
// has, with pages of 1<<shift bytes.
func shapeOf(size int64, shift uint8) (chunks, pages int64) {
	body := size &^ 63
	return (body + checksumChunk - 1) / checksumChunk, (size + 1<<shift - 1) >> shift
}

// encode writes m in the manifest layout.
func (m *manifest) encode() []byte {
	b := make([]byte, 0, len(manifestMagic)+48+len(m.version)+len(m.chunks)+8*len(m.pages))
	b = append(b, manifestMagic...)
	b = binary.LittleEndian.AppendUint64(b, uint64(m.size))
	b = binary.LittleEndian.AppendUint16(b, uint16(len(m.version)))
	b = append(b, m.version...)
	b = append(b, m.pageShift)
	b = binary.LittleEndian.AppendUint64(b, m.stored[0])
	b = binary.LittleEndian.AppendUint64(b, m.stored[1])
	b = binary.LittleEndian.AppendUint64(b, uint64(len(m.chunks)/32))
	b = append(b, m.chunks...)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(m.pages)))
	for _, h := range m.pages {
		b = binary.LittleEndian.AppendUint64(b, h)
	}
	return binary.LittleEndian.AppendUint64(b, xxhash.Sum64(b))
}

// decodeManifest parses a manifest and checks what it can on its own: its
// hash, that its counts fit its size, and that its chunk hashes combine to
// the checksum it records.
func decodeManifest(b []byte) (*manifest, error) {
	if len(b) < len(manifestMagic)+8 || !bytes.Equal(b[:len(manifestMagic)], []byte(manifestMagic)) {
		return nil, errors.New("not a tbfs Syzygy manifest")
	}
	body, sum := b[:len(b)-8], binary.LittleEndian.Uint64(b[len(b)-8:])
	if xxhash.Sum64(body) != sum {
		return nil, errors.New("the manifest's own hash does not match (it is damaged)")
	}
	r := body[len(manifestMagic):]
	short := errors.New("manifest truncated")
	take := func(n int) []byte {
		if n < 0 || len(r) < n {
			return nil
		}
		v := r[:n]
		r = r[n:]
		return v
	}
	m := &manifest{}
	v := take(10)
	if v == nil {
		return nil, short
	}
	m.size = int64(binary.LittleEndian.Uint64(v))
	if m.size < 16 || m.size&63 != 16 {
		return nil, fmt.Errorf("manifest for a %d-byte file, which cannot hold a Syzygy table", m.size)
	}
	ver := take(int(binary.LittleEndian.Uint16(v[8:])))
	if ver == nil {
		return nil, short
	}
	m.version = string(ver)
	v = take(1 + 16 + 8)
	if v == nil {
		return nil, short
	}
	m.pageShift = v[0]
	if m.pageShift < minPageShift || m.pageShift > maxPageShift {
		return nil, fmt.Errorf("page size 2^%d outside 2^%d..2^%d", m.pageShift, minPageShift, maxPageShift)
	}
	m.stored = [2]uint64{binary.LittleEndian.Uint64(v[1:]), binary.LittleEndian.Uint64(v[9:])}
	wantChunks, wantPages := shapeOf(m.size, m.pageShift)
	if n := binary.LittleEndian.Uint64(v[17:]); n != uint64(wantChunks) {
		return nil, fmt.Errorf("%d chunk hashes for a file of %d chunks", n, wantChunks)
	}
	if m.chunks = take(32 * int(wantChunks)); m.chunks == nil {
		return nil, short
	}
	v = take(8)
	if v == nil {
		return nil, short
	}
	if n := binary.LittleEndian.Uint64(v); n != uint64(wantPages) {
		return nil, fmt.Errorf("%d page hashes for a file of %d pages", n, wantPages)
	}
	if uint64(len(r)) != 8*uint64(wantPages) {
		return nil, errors.New("manifest length does not match its page count")
	}
	m.pages = make([]uint64, wantPages)
	for i := range m.pages {
		m.pages[i] = binary.LittleEndian.Uint64(r[8*i:])
	}
	if a, b := cityCrc128(m.chunks); [2]uint64{a, b} != m.stored {
		return nil, errors.New("the chunk hashes do not combine to the checksum the manifest records (it was not written from a file that verifies)")
	}
	return m, nil
}

// fetchManifest starts looking up the manifest of the table called name in
// src (or in Options.Manifests); nil when manifests are off.
func (tb *Tablebase) fetchManifest(ctx context.Context, src source.Source, name string) *sidecar.Fetch {
	if tb.opts.NoManifests {
		return nil
	}
	if tb.opts.Manifests != nil {
		src = tb.opts.Manifests
	}
	return sidecar.Start(ctx, src, name+ManifestSuffix, maxManifestBytes)
}

// usableManifest returns the manifest mf found for obj when it may be
// trusted, or nil and why not. What was found is decoded and matched with
// obj's size and version; the caller must still bind it to the file's
// embedded checksum (bindManifest). err is a failure to read the manifest,
// which is not a verdict on it (the open is tried again later).
func usableManifest(obj source.Object, mf *sidecar.Fetch) (m *manifest, why, err error) {
	if mf == nil {
		return nil, errors.New("manifests are off"), nil
	}
	data, err := mf.Wait()
	switch {
	case errors.Is(err, sidecar.ErrTooLarge):
		return nil, err, nil
	case err != nil:
		return nil, nil, err
	case data == nil:
		return nil, fmt.Errorf("no %s", mf.Name), nil
	}
	m, err = decodeManifest(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", mf.Name, err), nil
	}
	size, version := obj.Size(), source.VersionOf(obj)
	if m.size != size || (m.version != "" && version != "" && m.version != version) {
		return nil, fmt.Errorf("%s was written for a %d-byte file of version %q, this one has %d bytes, version %q (rerun tbprobe verify --manifest if the table was replaced)",
			mf.Name, m.size, m.version, size, version), nil
	}
	return m, nil, nil
}

// bindManifest reads the embedded checksum at the end of obj and reports
// whether it is the one m's chunk hashes combine to (decodeManifest
// checked that they do): why says why not; err is a failed read.
func bindManifest(ctx context.Context, obj source.Object, m *manifest) (why, err error) {
	stored, err := readStored(ctx, obj)
	if err != nil {
		return nil, err
	}
	if stored != m.stored {
		return fmt.Errorf("the file's embedded checksum %016x%016x is not the manifest's %016x%016x", stored[0], stored[1], m.stored[0], m.stored[1]), nil
	}
	return nil, nil
}

// readStored returns the checksum a table file stores in its last 16
// bytes.
func readStored(ctx context.Context, obj source.Object) ([2]uint64, error) {
	size := obj.Size()
	if size&63 != 16 {
		return [2]uint64{}, corruptf("size %d leaves no room for a checksum", size)
	}
	var tail [16]byte
	if n, err := obj.ReadAt(ctx, tail[:], size-16, source.HintData); err != nil && !(errors.Is(err, io.EOF) && n == len(tail)) {
		return [2]uint64{}, err
	}
	return [2]uint64{binary.LittleEndian.Uint64(tail[:]), binary.LittleEndian.Uint64(tail[8:])}, nil
}

// checkedObject is a table object whose every read is checked against a
// manifest: it reads the whole pages a read touches, compares each with
// its hash, and only then hands out the bytes asked for.
type checkedObject struct {
	source.Object
	m *manifest
}

// pagePool holds read buffers of two pages of the default size, which
// covers the reads a probe makes.
var pagePool = sync.Pool{New: func() any { b := make([]byte, 2<<ManifestPageShift); return &b }}

// ReadAt reads like the object it wraps, and fails with ErrCorrupt when a
// page the read touches does not match the manifest.
func (c *checkedObject) ReadAt(ctx context.Context, p []byte, off int64, hint source.Hint) (int, error) {
	size := c.Object.Size()
	if len(p) == 0 || off < 0 || off >= size {
		return c.Object.ReadAt(ctx, p, off, hint) // its own answer for these
	}
	end := min(off+int64(len(p)), size)
	page := int64(1) << c.m.pageShift
	lo, hi := off&^(page-1), min((end+page-1)&^(page-1), size)
	var buf []byte
	if n := hi - lo; n <= 2<<ManifestPageShift {
		pb := pagePool.Get().(*[]byte)
		defer pagePool.Put(pb)
		buf = (*pb)[:n]
	} else {
		buf = make([]byte, n)
	}
	if n, err := c.Object.ReadAt(ctx, buf, lo, hint); err != nil && !(errors.Is(err, io.EOF) && n == len(buf)) {
		return 0, err
	}
	for at := lo; at < hi; at += page {
		i := at >> c.m.pageShift
		b := buf[at-lo : min(at+page, hi)-lo]
		if got, want := xxhash.Sum64(b), c.m.pages[i]; got != want {
			return 0, corruptf("page %d (bytes %d..%d) hashes to %#016x, its manifest says %#016x", i, at, at+int64(len(b))-1, got, want)
		}
	}
	n := copy(p, buf[off-lo:end-lo])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Manifest returns the integrity manifest of the kind table of material
// ("KQvKR") and the object name of the table it describes, for storing as
// that name plus ManifestSuffix beside the table or in Options.Manifests.
// It reads the whole file once, computing the embedded checksum (as
// VerifyChecksum does) and the page hashes from the same bytes, and fails
// with ErrCorrupt unless the checksum matches: a manifest is only ever
// written for a file that verifies.
func (tb *Tablebase) Manifest(ctx context.Context, kind Kind, material string) (name string, data []byte, err error) {
	if err := tb.enter(); err != nil {
		return "", nil, err
	}
	defer tb.exit()
	mat, ok := parseMaterial(material)
	if !ok {
		return "", nil, fmt.Errorf("syzygy: bad material %q", material)
	}
	mat, _ = mat.canonical()
	obj, name, err := tb.findObject(ctx, kind, mat)
	if err != nil {
		return name, nil, err
	}
	defer obj.Close()
	m, err := manifestOf(ctx, obj, ManifestPageShift)
	if err != nil {
		return name, nil, &FileError{File: name, Err: err}
	}
	return name, m.encode(), nil
}

// Integrity says how the reads of one open table are checked.
type Integrity struct {
	// File is the table's object name.
	File string
	// Manifest names the manifest every page read is checked against; ""
	// when none is used and the whole-file checksum gates the first answer.
	Manifest string
	// Ignored says why no manifest is used (none found, stale, written for
	// another file, manifests off); nil when Manifest is set.
	Ignored error
}

// Integrity opens the kind table of material ("KQvKR") as a probe would
// and reports how its reads are checked, so an operator can see a manifest
// that is present but refused (the table then still answers, through the
// slower whole-file gate, and nothing else says so).
func (tb *Tablebase) Integrity(ctx context.Context, kind Kind, material string) (Integrity, error) {
	if err := tb.enter(); err != nil {
		return Integrity{}, err
	}
	defer tb.exit()
	mat, ok := parseMaterial(material)
	if !ok {
		return Integrity{}, fmt.Errorf("syzygy: bad material %q", material)
	}
	mat, _ = mat.canonical()
	f, err := tb.table(ctx, kind, mat)
	if err != nil {
		return Integrity{}, err
	}
	return Integrity{File: f.name, Manifest: f.sumsName, Ignored: f.sumsIgnored}, nil
}

// manifestOf reads obj whole and returns its manifest with pages of
// 1<<shift bytes, or ErrCorrupt when its embedded checksum does not match.
func manifestOf(ctx context.Context, obj source.Object, shift uint8) (*manifest, error) {
	size := obj.Size()
	stored, err := readStored(ctx, obj)
	if err != nil {
		return nil, err
	}
	m := &manifest{size: size, version: source.VersionOf(obj), pageShift: shift, stored: stored}
	nChunks, nPages := shapeOf(size, shift)
	m.chunks = make([]byte, 0, 32*nChunks)
	m.pages = make([]uint64, 0, nPages)
	body := size &^ 63
	buf := make([]byte, min(checksumChunk+16, size))
	for off := int64(0); off < size; off += checksumChunk {
		// A chunk's bytes, and after the last chunk the checksum, so the
		// pages cover the whole file.
		n := min(checksumChunk, body-off)
		span := n
		if off+checksumChunk >= body {
			span = size - off
		}
		b := buf[:span]
		for at := int64(0); at < span; at += checksumWindow {
			w := b[at:min(at+checksumWindow, span)]
			if got, err := obj.ReadAt(ctx, w, off+at, source.HintData); err != nil && !(errors.Is(err, io.EOF) && got == len(w)) {
				return nil, err
			}
		}
		if n > 0 {
			for _, v := range cityCrc256(b[:n]) {
				m.chunks = binary.LittleEndian.AppendUint64(m.chunks, v)
			}
		}
		for at := int64(0); at < span; at += 1 << shift {
			m.pages = append(m.pages, xxhash.Sum64(b[at:min(at+1<<shift, span)]))
		}
		if span > n {
			break
		}
	}
	if a, b := cityCrc128(m.chunks); [2]uint64{a, b} != stored {
		return nil, corruptf("checksum %016x%016x, file says %016x%016x", a, b, stored[0], stored[1])
	}
	return m, nil
}
