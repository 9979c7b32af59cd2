package geister

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"strings"
	"sync"

	"github.com/tbfs/tbfs/format/internal/sidecar"
	"github.com/tbfs/tbfs/source"
)

// SumsFile is the integrity manifest a table folder may carry: sha256sum's
// format, one "HEX  NAME" line per file. The reference ships one beside its
// tables, listing every raw .bin (also those shipped only compressed) and
// every .bin.zst as shipped. Raw tables have no header and the reference's
// zstd frames no checksum, so a flipped byte would otherwise read as
// another valid value; with the manifest a table is checked whole the first
// time it is opened, before any of its answers is given.
const SumsFile = "SHA256SUMS"

// maxSumsBytes bounds the manifest Open reads: 256 materials in every file
// form fit in a small fraction of it.
const maxSumsBytes = 1 << 20

// sums is one source's parsed manifest (nil map: the source has none).
type sums map[string][sha256.Size]byte

// sumsSlot caches one source's manifest once it has been read; a transport
// failure is not cached, so the next open tries again.
type sumsSlot struct {
	mu   sync.Mutex
	done bool
	sums sums
	err  error
}

// reset forgets the manifest read, so the next open reads it again.
func (s *sumsSlot) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.done, s.sums, s.err = false, nil, nil
}

// parseSums reads a manifest in sha256sum's format ("HEX  NAME" or
// "HEX *NAME"). A line that is not one is an error, not skipped: a damaged
// manifest must not quietly stop checking the tables it lists.
func parseSums(data []byte) (sums, error) {
	out := sums{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimRight(sc.Text(), "\r")
		if text == "" {
			continue
		}
		sum, name, ok := strings.Cut(text, " ")
		name = strings.TrimPrefix(strings.TrimPrefix(name, " "), "*")
		var h [sha256.Size]byte
		if n, err := hex.Decode(h[:], []byte(sum)); !ok || err != nil || n != sha256.Size || name == "" {
			return nil, fmt.Errorf("%w: %s line %d is not \"SHA256  NAME\": %q", ErrCorrupt, SumsFile, line, text)
		}
		if prev, dup := out[name]; dup && prev != h {
			return nil, fmt.Errorf("%w: %s lists %s twice with different sums", ErrCorrupt, SumsFile, name)
		}
		out[name] = h
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, SumsFile, err)
	}
	return out, nil
}

// sumsOf returns source i's manifest, reading it on first use; a source
// without one has none (nil, nil).
func (tb *Tablebase) sumsOf(ctx context.Context, i int) (sums, error) {
	s := &tb.sums[i]
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return s.sums, s.err
	}
	data, err := readSideFile(ctx, tb.sources[i], SumsFile, maxSumsBytes)
	if err != nil && !errors.Is(err, ErrCorrupt) {
		return nil, err // a transport failure: try again next time
	}
	if err != nil || data == nil {
		s.done, s.err = true, err
		return nil, err
	}
	s.sums, s.err = parseSums(data)
	s.done = true
	return s.sums, s.err
}

// readSideFile reads the small file name beside the tables in src (sums,
// a sidecar, a manifest): nil, nil when there is none; ErrCorrupt when it
// holds more than limit bytes.
func readSideFile(ctx context.Context, src source.Source, name string, limit int64) ([]byte, error) {
	data, err := sidecar.Read(ctx, src, name, limit)
	if errors.Is(err, sidecar.ErrTooLarge) {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if err != nil {
		return nil, fmt.Errorf("geister: read %s: %w", name, err)
	}
	return data, nil
}

// sidecarName is the builder's record of material m's sums, beside its
// files: "<raw name>.sha256", in sha256sum's format.
func sidecarName(m Material) string { return m.FileName() + ".sha256" }

// sumsFor returns the sums source i gives material m's files: its
// SHA256SUMS and m's sidecar together (nil when it has neither). Two sums
// for one file that differ are ErrCorrupt.
func (tb *Tablebase) sumsFor(ctx context.Context, i int, m Material) (sums, error) {
	all, err := tb.sumsOf(ctx, i)
	if err != nil {
		return nil, err
	}
	name := sidecarName(m)
	data, err := readSideFile(ctx, tb.sources[i], name, maxSumsBytes)
	if err != nil || data == nil {
		return all, err
	}
	side, err := parseSums(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	out := sums{}
	for k, v := range all {
		out[k] = v
	}
	for k, v := range side {
		if prev, ok := out[k]; ok && prev != v {
			return nil, fmt.Errorf("%w: %s and %s give %s different sums", ErrCorrupt, SumsFile, name, k)
		}
		out[k] = v
	}
	return out, nil
}

// check makes a freshly opened table trustworthy. With a frame manifest
// (manifest.go; beside it, or in Options.Manifests), the table is checked chunk by chunk as it is
// read, and on open only the manifest's sha256 against the sums' (a
// mismatch means the manifest or the table is stale). Otherwise the whole
// file is checked against its sums (verify). verified reports the latter.
func (tb *Tablebase) check(ctx context.Context, i int, m Material, obj source.Object, name string, r tableReader, legacy bool) (verified bool, err error) {
	var mf *frameManifest
	var mfErr error
	lookup := func() {
		if !legacy && !tb.noManifests {
			mf, mfErr = tb.readManifest(ctx, i, m)
		}
	}
	var sums sums
	if _, remote := obj.(source.Prefetcher); remote {
		// Over a remote source each lookup is a round trip: the sums
		// and the manifest are looked up at once. A local lookup is
		// cheaper than the goroutine.
		looked := make(chan struct{})
		go func() {
			defer close(looked)
			lookup()
		}()
		sums, err = tb.sumsFor(ctx, i, m)
		<-looked
	} else {
		lookup()
		sums, err = tb.sumsFor(ctx, i, m)
	}
	if err != nil {
		return false, err
	}
	if mfErr != nil {
		return false, mfErr
	}
	if mf != nil {
		if want, ok := sums[m.FileName()]; ok && want != mf.rawSum {
			return false, fmt.Errorf("%w: %s%s gives the table a sha256 its sums do not (rewrite the manifest if the table was replaced)", ErrCorrupt, m.FileName(), ManifestSuffix)
		}
		if attachManifest(r, mf) {
			return false, nil
		}
	}
	if sums == nil {
		return false, nil
	}
	return true, tb.verify(ctx, sums, obj, name, r)
}

// verify checks a freshly opened table against its sums. A table the sums
// do not list is left unchecked. A .bin must match its own sum. A .zst
// matches its own sum, or else (a recompressed file) must decompress to its
// raw file's sum; with neither listed it is unchecked. A mismatch is
// ErrCorrupt naming the file.
func (tb *Tablebase) verify(ctx context.Context, sums sums, obj source.Object, name string, r tableReader) error {
	own, hasOwn := sums[name]
	if hasOwn {
		got, err := hashObject(ctx, obj, name)
		if err != nil || got == own {
			return err
		}
	}
	zt, compressed := r.(*zstdTable)
	raw, hasRaw := sums[strings.TrimSuffix(strings.TrimSuffix(name, ".zst"), ".zstd")]
	if compressed && hasRaw {
		got, err := hashFrames(ctx, zt)
		if err != nil || got == raw {
			return err
		}
		return fmt.Errorf("%w: %s decompresses to bytes whose sha256 is not the one %s gives its raw file", ErrCorrupt, name, SumsFile)
	}
	if hasOwn {
		return fmt.Errorf("%w: %s: sha256 differs from %s", ErrCorrupt, name, SumsFile)
	}
	return nil
}

// hashObject returns the sha256 of obj's bytes, read in order.
func hashObject(ctx context.Context, obj source.Object, name string) ([sha256.Size]byte, error) {
	h := sha256.New()
	buf := make([]byte, 1<<20)
	size := obj.Size()
	for off := int64(0); off < size; {
		p := buf[:min(int64(len(buf)), size-off)]
		n, err := obj.ReadAt(ctx, p, off, source.HintData)
		if n != len(p) {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return [sha256.Size]byte{}, fmt.Errorf("geister: read %s at %d for its checksum: %w", name, off, err)
		}
		h.Write(p)
		off += int64(n)
	}
	return sum(h), nil
}

// hashFrames returns the sha256 of a seekable-zstd table's decompressed
// bytes, decoding each frame once outside the frame cache (every frame's
// own checks apply).
func hashFrames(ctx context.Context, t *zstdTable) ([sha256.Size]byte, error) {
	h := sha256.New()
	for f := range t.st.frames() {
		data, err := t.load(ctx, f)
		if err != nil {
			return [sha256.Size]byte{}, err
		}
		h.Write(data)
	}
	return sum(h), nil
}

func sum(h hash.Hash) [sha256.Size]byte {
	var out [sha256.Size]byte
	h.Sum(out[:0])
	return out
}

// winsInOne reports whether the rules give p the value 1 (FORMAT.md §2):
// an own blue stands on an exit, or the opponent has one blue left and an
// own piece stands next to it (any piece captures by stepping on it, and
// taking the last blue wins). No other position holds 1, so a stored 1
// where this is false, or another value where it is true, is damage; it is
// also what tells same-size tables apart (id001's single opponent blue,
// id002's two), where only the content can.
func winsInOne(p Position) bool {
	if p.OwnBlue&ExitMask != 0 {
		return true
	}
	b := p.OppBlue
	if b == 0 || b&(b-1) != 0 {
		return false
	}
	return (b<<1|b>>1|b<<8|b>>8)&(p.OwnBlue|p.OwnRed) != 0
}

// checkWinsInOne rejects a stored value that contradicts winsInOne.
func checkWinsInOne(v uint8, p Position, m Material, idx uint64) error {
	if (v == 1) != winsInOne(p) {
		if v == 1 {
			return fmt.Errorf("%w: %v entry %d holds 1 (a win in one ply) for a position with no escape and no capture of a last blue (a damaged or misnamed table)", ErrCorrupt, m, idx)
		}
		return fmt.Errorf("%w: %v entry %d holds %d for a position that wins in one ply (a damaged or misnamed table)", ErrCorrupt, m, idx, v)
	}
	return nil
}
