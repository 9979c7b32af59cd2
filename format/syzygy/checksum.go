package syzygy

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/tbfs/tbfs/source"
)

// checksumChunk is the span the generator hashes on its own before it
// hashes the chunks' hashes together. A run reads it checksumWindow bytes
// at a time.
const checksumChunk = 1 << 24

// fileChecksum computes the checksum of obj's table bytes and returns it
// with the one the file stores after them (its last 16 bytes, following a
// 64-byte aligned body).
func fileChecksum(ctx context.Context, obj source.Object) (got, stored [2]uint64, err error) {
	size := obj.Size()
	if size&63 != 16 {
		return got, stored, corruptf("size %d leaves no room for a checksum", size)
	}
	body := size &^ 63
	var tail [16]byte
	if n, err := obj.ReadAt(ctx, tail[:], body, source.HintData); err != nil && !(errors.Is(err, io.EOF) && n == len(tail)) {
		return got, stored, err
	}
	stored = [2]uint64{binary.LittleEndian.Uint64(tail[:]), binary.LittleEndian.Uint64(tail[8:])}
	chunks := (body + checksumChunk - 1) / checksumChunk
	sums := make([]byte, 0, 32*chunks)
	win := &objectSpan{ctx: ctx, obj: obj, buf: make([]byte, 0, min(body, checksumWindow))}
	for off := int64(0); off < body; off += checksumChunk {
		n := int(min(checksumChunk, body-off))
		var sum [4]uint64
		if n >= 240 {
			win.base, win.n, win.lo, win.buf = off, n, 0, win.buf[:0]
			sum = cityCrc256Long(win, 0)
			if win.err != nil {
				return got, stored, win.err
			}
		} else {
			part := make([]byte, n)
			if got, err := obj.ReadAt(ctx, part, off, source.HintData); err != nil && !(errors.Is(err, io.EOF) && got == n) {
				return [2]uint64{}, stored, err
			}
			sum = cityCrc256(part)
		}
		for _, v := range sum {
			sums = binary.LittleEndian.AppendUint64(sums, v)
		}
	}
	got[0], got[1] = cityCrc128(sums)
	return got, stored, nil
}

// checksumWindow is how much of a file a checksum run reads at a time.
const checksumWindow = 1 << 20

// objectSpan hands out one checksum chunk of an object through a window
// of reads, front to back (the hash reads its input in order, but for its
// first 192 bytes and last 40). A failed read is kept in err; the bytes
// handed out then are zeros.
type objectSpan struct {
	ctx  context.Context
	obj  source.Object
	base int64 // the chunk's offset in the object
	n    int   // the chunk's length
	lo   int   // where the window starts, within the chunk
	buf  []byte
	err  error
}

func (o *objectSpan) size() int { return o.n }

func (o *objectSpan) at(p, n int) []byte {
	if p >= o.lo && p+n <= o.lo+len(o.buf) {
		return o.buf[p-o.lo : p-o.lo+n]
	}
	buf := o.buf[:min(cap(o.buf), o.n-p)]
	got, err := o.obj.ReadAt(o.ctx, buf, o.base+int64(p), source.HintData)
	if err != nil && !(errors.Is(err, io.EOF) && got == len(buf)) {
		if o.err == nil {
			o.err = err
		}
		clear(buf)
	}
	o.lo, o.buf = p, buf
	return buf[:n]
}

// findObject opens the kind-k file of the canonical material m from the
// first source that holds it.
func (tb *Tablebase) findObject(ctx context.Context, k Kind, m material) (source.Object, string, error) {
	base := m.name() + k.Ext()
	for _, src := range tb.srcs {
		for _, name := range [2]string{k.String() + "/" + base, base} {
			obj, err := src.Open(ctx, name)
			if errors.Is(err, source.ErrNotFound) {
				continue
			}
			if err != nil {
				return nil, name, &FileError{File: name, Err: err}
			}
			return obj, name, nil
		}
	}
	return nil, base, fmt.Errorf("%w: %s", ErrNoTable, base)
}

// VerifyChecksum recomputes the checksum the Syzygy generator embeds at the
// end of the kind table of material ("KQvKR") and compares it with the
// stored one, as the generator's tbcheck does; a mismatch is ErrCorrupt.
// It reads the whole file.
func (tb *Tablebase) VerifyChecksum(ctx context.Context, kind Kind, material string) error {
	if err := tb.enter(); err != nil {
		return err
	}
	defer tb.exit()
	m, ok := parseMaterial(material)
	if !ok {
		return fmt.Errorf("syzygy: bad material %q", material)
	}
	m, _ = m.canonical()
	if f := tb.openedFile(kind, m); f != nil && f.gate != nil {
		// The table's own gate is checking (or has checked) this very
		// object: wait for it rather than read the file a second time.
		if err := f.gate.wait(ctx); err != nil {
			return &FileError{File: f.name, Err: err}
		}
		return nil
	}
	obj, name, err := tb.findObject(ctx, kind, m)
	if err != nil {
		return err
	}
	defer obj.Close()
	got, stored, err := fileChecksum(ctx, obj)
	if err != nil {
		return &FileError{File: name, Err: err}
	}
	if got != stored {
		return &FileError{File: name, Err: corruptf("checksum %016x%016x, file says %016x%016x", got[0], got[1], stored[0], stored[1])}
	}
	return nil
}
