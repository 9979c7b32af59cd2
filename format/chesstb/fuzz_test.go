package chesstb

import (
	"bytes"
	"context"
	"errors"
	"github.com/tbfs/tbfs/format/blockcache"
	"io"
	"os"
	"path/filepath"
	"testing"

	tblzma "github.com/tbfs/tbfs/format/chesstb/internal/lzma"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/source"
)

// memObject is an in-memory source.Object.
type memObject []byte

func (m memObject) Size() int64 { return int64(len(m)) }

func (m memObject) ReadAt(_ context.Context, p []byte, off int64, _ source.Hint) (int, error) {
	if off < 0 || off > int64(len(m)) {
		return 0, source.Invalid("offset %d", off)
	}
	n := copy(p, m[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (m memObject) Close() error { return nil }

// fixtureSeeds returns a few fixture table files with their kind and
// material, as fuzz seeds.
func fixtureSeeds(t testing.TB) []struct {
	kind Kind
	mat  string
	data []byte
} {
	t.Helper()
	dir := testenv.Testdata(t, "chesstb")
	var out []struct {
		kind Kind
		mat  string
		data []byte
	}
	for _, s := range []struct {
		kind Kind
		mat  string
	}{{KindWDL, "KQKR"}, {KindWDL, "KRKR"}, {KindWDL, "KQK"}, {KindDTZ, "KQK"}, {KindDTZ, "KPK"}, {KindDTM, "KRKR"},
		{KindDTM50, "KQK"}, {KindDTC, "KPK"}, {KindDTM50, "KPK"}} {
		path := filepath.Join(dir, kindInfo[s.kind].dir, s.mat+kindInfo[s.kind].ext)
		if s.kind.layered() {
			path = filepath.Join(dir, "packs", s.mat+kindInfo[s.kind].ext) // a flat folder
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, struct {
			kind Kind
			mat  string
			data []byte
		}{s.kind, s.mat, b})
	}
	return out
}

var fuzzMaterials = []string{"KQK", "KPK", "KQKR", "KRKR", "KBNK", "KRKP", "KQQKQ"}

// checkParsedLayout asserts what parseHeader promises of a header it
// accepts: every frame's data inside the file, block offsets from 0 to the
// data size and never decreasing, so no block read can leave its frame.
func checkParsedLayout(t *testing.T, h *header, size int64) {
	t.Helper()
	for c := range 2 {
		f := &h.frames[c]
		if !f.stored() {
			continue
		}
		if f.dataOff < 0 || f.dataOff+int64(f.dataSize) > size-8 {
			t.Fatalf("frame %d: data %d+%d outside the %d-byte file", c, f.dataOff, f.dataSize, size)
		}
		prev := f.offsets.get(0)
		if prev != 0 {
			t.Fatalf("frame %d: offsets start at %d", c, prev)
		}
		for b := uint64(1); b <= f.blockCnt; b++ {
			next := f.offsets.get(b)
			if next < prev || next > f.dataSize {
				t.Fatalf("frame %d block %d: offsets %d..%d in %d data bytes", c, b-1, prev, next, f.dataSize)
			}
			prev = next
		}
	}
}

// FuzzParseHeader feeds damaged and random files to the header parser, then
// reads a few cells through the decoders: nothing may panic, and every
// failure must be a FileError-wrapped ErrCorrupt or a plain parse error.
func FuzzParseHeader(f *testing.F) {
	for _, s := range fixtureSeeds(f) {
		matIdx := 0
		for i, m := range fuzzMaterials {
			if m == s.mat {
				matIdx = i
			}
		}
		// Big files are cut to their header and first data, to keep the
		// corpus small; the parser must cope with the rest missing. Small
		// ones stay whole, so their headers parse and the readers run.
		data := s.data
		if len(data) > 16<<10 {
			data = data[:4096]
		}
		f.Add(uint8(s.kind), uint8(matIdx), data)
	}
	f.Fuzz(func(t *testing.T, kind, matIdx uint8, data []byte) {
		k := Kind(kind % uint8(numKinds))
		m, err := parseMaterial(fuzzMaterials[int(matIdx)%len(fuzzMaterials)])
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := newIndexConfig(m)
		if err != nil {
			t.Fatal(err)
		}
		// Let the size check pass often: pad to 8 past a multiple of 64.
		if len(data)&63 != 8 && len(data) > 0 && data[0]&1 == 0 {
			data = append(data, make([]byte, (72-len(data)&63)&63)...)
		}
		obj := memObject(data)
		ctx := context.Background()
		h, err := parseHeader(ctx, obj, k, cfg)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("parse error %v does not match ErrCorrupt", err)
			}
			return
		}
		checkParsedLayout(t, h, obj.Size())
		tf := &tableFile{id: 1, kind: k, name: "fuzz", obj: obj, cfg: cfg, hdr: h, cache: blockcache.New(8 << 20), pool: &blockPool{}}
		for c := range 2 {
			fr := &h.frames[c]
			if !fr.stored() || k.layered() || fr.blockSize > 1<<16 {
				continue // big garbage blocks only cost time here
			}
			for _, idx := range []uint64{0, cfg.positions / 2, cfg.positions - 1} {
				if k == KindWDL {
					_, _ = tf.readWDL(ctx, c, idx, nil)
				} else {
					_, _, _ = tf.readRank(ctx, c, idx)
				}
			}
		}
	})
}

// FuzzLZMA decodes arbitrary blocks in one go and through a growing
// lzmaBlock, and compares with the library wherever both succeed.
func FuzzLZMA(f *testing.F) {
	distanceBlocks(f, testenv.Testdata(f, "chesstb"), 4, func(_ string, comp []byte, size uint64) {
		if len(comp) < 2048 {
			f.Add(comp, uint32(size))
		}
	})
	f.Add([]byte{0, 0, 0, 0, 0, 0x5d, 0, 0, 0x10, 0}, uint32(16))
	f.Fuzz(func(t *testing.T, comp []byte, size uint32) {
		size %= 1 << 16
		got, err := decodeLZMA(comp, uint64(size))
		if err != nil {
			return
		}
		if len(got) != int(size) {
			t.Fatalf("decoded %d bytes, want %d", len(got), size)
		}
		if want, lerr := decodeWithLibrary(comp, uint64(size)); lerr == nil && !bytes.Equal(got, want) {
			t.Fatal("differs from the library")
		}
		// Through a block whose buffer grows as it decodes (the decoder's
		// own resumed decoding is fuzzed in format/chesstb/internal/lzma).
		z, err := tblzma.NewDecoder(comp[:len(comp)-lzmaPropsSize], comp[len(comp)-lzmaPropsSize:], int(size))
		if err != nil {
			t.Fatal(err)
		}
		lb := newLZMABlock(z, int(size))
		var data []byte
		for n := 1; ; n = n*3 + 1 {
			if data, err = lb.upTo(n); err != nil {
				t.Fatalf("growing decode fails where the whole one did not: %v", err)
			}
			if n >= int(size) {
				break
			}
		}
		if !bytes.Equal(data[:size], got) {
			t.Fatal("growing decode differs")
		}
	})
}

// FuzzLZ4 decodes arbitrary WDL blocks with and without a dictionary.
func FuzzLZ4(f *testing.F) {
	f.Add([]byte{0x10, 'a'}, []byte("dict"), uint16(1))
	f.Add([]byte{0x1f, 0x00, 0x01, 0x00}, []byte{}, uint16(300))
	f.Fuzz(func(t *testing.T, comp, dict []byte, size uint16) {
		out, err := decodeLZ4(comp, dict, uint64(size))
		if err == nil && len(out) != int(size) {
			t.Fatalf("decoded %d bytes, want %d", len(out), size)
		}
	})
}
