package geister

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/tbfs/tbfs/source"
)

// memObject is a source.Object over a byte slice, for corrupting tables in
// memory.
type memObject []byte

func (m memObject) Size() int64 { return int64(len(m)) }

func (m memObject) ReadAt(ctx context.Context, p []byte, off int64, _ source.Hint) (int, error) {
	if err := source.CheckRange(off, len(p), int64(len(m))); err != nil {
		return 0, err
	}
	n := copy(p, m[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (memObject) Close() error { return nil }

// FuzzZstdTable corrupts the id000 seekable-zstd file at a fuzzed place and
// probes it: the reader must never panic or hang, and every failure must
// be reported as ErrCorrupt. (Frames carry no checksum, so a change that
// still decodes to the right size cannot be noticed; values are then only
// range-checked.)
func FuzzZstdTable(f *testing.F) {
	zst, err := os.ReadFile(filepath.Join("..", "..", "testdata", "geister", "id000_pb1pr1ob1or1_obsblk.bin.zst"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(uint32(0), []byte{0xFF}, uint32(0))
	f.Add(uint32(len(zst)-9), []byte{1, 0, 0, 0}, uint32(0))
	f.Add(uint32(len(zst)-20), []byte{0, 0, 0, 1}, uint32(97690))
	f.Add(uint32(1000), []byte{0x55, 0xAA}, uint32(8192*3))
	f.Fuzz(func(t *testing.T, at uint32, xor []byte, idx uint32) {
		b := append([]byte(nil), zst...)
		for i, x := range xor {
			if p := int(at%uint32(len(b))) + i; p < len(b) {
				b[p] ^= x
			}
		}
		m := Material{1, 1, 1, 1}
		zt, err := openZstd(context.Background(), memObject(b), "fuzz.zst", m.Entries(), NewFrameCache(1<<20))
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("open error %v does not match ErrCorrupt", err)
			}
			return
		}
		off := uint64(idx) % m.Entries()
		p := make([]byte, min(70, m.Entries()-off))
		if err := zt.read(context.Background(), p, off); err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("read error %v does not match ErrCorrupt", err)
		}
	})
}
