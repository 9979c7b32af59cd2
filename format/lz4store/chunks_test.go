package lz4store

import (
	"bytes"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"os"
	"sync"
	"testing"

	"github.com/cespare/xxhash/v2"
)

// TestOpenReadAt reads stored blocks back through Open at random offsets
// and lengths, from many goroutines at once, each read into a buffer
// aligned with the chunks or not: every read gives the stored bytes there
// (the arbiter: the block as stored), including a raw chunk LZ4 cannot
// shorten and a short last chunk.
func TestOpenReadAt(t *testing.T) {
	s := open(t, t.TempDir(), 1<<30)
	noise := make([]byte, 3*chunkBytes)
	rng := rand.New(rand.NewPCG(9, 9))
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}
	blocks := map[string][]byte{
		"runs":   block(10*chunkBytes+123, 6),
		"mixed":  append(append(block(2*chunkBytes, 7), noise...), block(chunkBytes/2, 8)...),
		"one":    block(100, 9),
		"chunk":  block(chunkBytes, 10),
		"nothin": {},
	}
	for k, b := range blocks {
		if err := s.Store(k, b); err != nil {
			t.Fatal(err)
		}
	}
	for k, want := range blocks {
		r, chunk, held, ok := s.Open(k, len(want))
		if !ok || chunk != chunkBytes || held <= 0 {
			t.Fatalf("%s: Open gives chunk %d, held %d, ok %v", k, chunk, held, ok)
		}
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(g), uint64(len(want))))
				for range 200 {
					lo := rng.IntN(len(want) + 1)
					if rng.IntN(2) == 0 {
						lo -= lo % chunkBytes
					}
					hi := lo + rng.IntN(len(want)-lo+1)
					p := make([]byte, hi-lo)
					n, err := r.ReadAt(p, int64(lo))
					if err != nil || n != len(p) || !bytes.Equal(p, want[lo:hi]) {
						t.Errorf("%s: ReadAt(%d bytes at %d) gives %d, %v, equal %v", k, len(p), lo, n, err, bytes.Equal(p, want[lo:hi]))
						return
					}
				}
			})
		}
		wg.Wait()
		// Past the end: io.EOF with what there is.
		p := make([]byte, 10)
		if n, err := r.ReadAt(p, int64(len(want))); n != 0 || err == nil {
			t.Errorf("%s: ReadAt past the end gives %d, %v", k, n, err)
		}
	}
	if _, _, _, ok := s.Open("runs", len(blocks["runs"])+1); ok {
		t.Error("Open at another size hits")
	}
}

// TestOpenDamaged flips each byte of a multi-chunk file and cuts it at
// many lengths: Open must miss and drop the file, or every byte read
// through it must be the stored block (the checksum covers the table and
// the chunks, so a flip that opens would be a checksum collision).
func TestOpenDamaged(t *testing.T) {
	const key = "dtc/KQKR.lzdtc@v2#0/3"
	want := block(3*chunkBytes+500, 11)
	s, path, good := storedFile(t, key, want)
	try := func(what string, b []byte) {
		t.Helper()
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		r, _, _, ok := s.Open(key, len(want))
		if !ok {
			if _, err := os.Stat(path); !os.IsNotExist(err) {
				t.Fatalf("%s: the damaged file was kept", what)
			}
			return
		}
		got := make([]byte, len(want))
		if _, err := r.ReadAt(got, 0); err == nil && !bytes.Equal(got, want) {
			t.Fatalf("%s: Open served other bytes", what)
		}
	}
	for i := range good {
		bad := bytes.Clone(good)
		bad[i] ^= 1 << (i % 8)
		try("flip", bad)
	}
	for n := 0; n < len(good); n += 1 + n/8 {
		try("cut", good[:n])
	}
	try("extended", append(bytes.Clone(good), 0))
	try("intact", good)
	if _, _, _, ok := s.Open(key, len(want)); !ok {
		t.Fatal("the intact file does not open")
	}
}

// FuzzParseFile feeds parseFile arbitrary files: it must not panic, and a
// file it accepts must read back, whole and in pieces, without panicking
// and to the same bytes either way. Its seeds are files encodeFile made
// (testdata/fuzz/FuzzParseFile holds more, some damaged).
func FuzzParseFile(f *testing.F) {
	for _, b := range [][]byte{nil, block(100, 1), block(2*chunkBytes+7, 2)} {
		raw, err := encodeFile("k", b)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw, int16(len(b)))
		f.Add(raw, int16(-1))
	}
	f.Fuzz(func(t *testing.T, raw []byte, size int16) {
		readBack(t, raw, int(size))
		// The same file with its checksums made to fit, so the fuzzer
		// reaches the table's checks and the chunks' decoding.
		if sealed, ok := seal(raw); ok {
			readBack(t, sealed, int(size))
		}
	})
}

// seal returns raw, a file of key "k", with every checksum it holds set to
// fit the bytes it covers, where the lengths let it be found.
func seal(raw []byte) ([]byte, bool) {
	hb, ok := headBytes(raw, "k")
	if !ok || hb > len(raw) {
		return nil, false
	}
	sealed := bytes.Clone(raw)
	table := sealed[prefixBytes+len("k")+fixedBytes : hb]
	off := hb
	for i := 0; i+entryBytes <= len(table); i += entryBytes {
		n := int(binary.LittleEndian.Uint32(table[i:]) &^ rawChunk)
		if off+n > len(sealed) {
			break
		}
		binary.LittleEndian.PutUint64(table[i+4:], xxhash.Sum64(sealed[off:off+n]))
		off += n
	}
	binary.LittleEndian.PutUint64(sealed[len(magic):], xxhash.Sum64(sealed[len(magic)+8:hb]))
	return sealed, true
}

// readBack parses raw as the file of key "k" and, when it is accepted,
// reads it whole and in pieces, which must agree.
func readBack(t *testing.T, raw []byte, size int) {
	c, err := parseFile(raw, "k", size)
	if err != nil {
		return
	}
	{
		whole := make([]byte, c.size)
		if _, err := c.ReadAt(whole, 0); err != nil {
			return // chunks that do not decode: a miss
		}
		for lo := 0; lo < c.size; lo += 1 + c.size/7 {
			p := make([]byte, min(c.size-lo, 1000))
			if _, err := c.ReadAt(p, int64(lo)); err != nil || !bytes.Equal(p, whole[lo:lo+len(p)]) {
				t.Fatalf("ReadAt at %d: %v, or other bytes than the whole read", lo, err)
			}
		}
	}
}

// BenchmarkOpenSparse opens a 1 MiB block and reads 64 eight-byte spans of
// it at random, into a buffer of the block's length, as a table lookup
// through a block from the second tier does: the cost a tier hit adds when
// only some chunks are read (compare BenchmarkLoad, the whole block).
func BenchmarkOpenSparse(b *testing.B) {
	s, data := storedBlock(b)
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, len(data))
	for b.Loop() {
		r, chunk, _, ok := s.Open("k", len(data))
		if !ok {
			b.Fatal("miss")
		}
		for range 64 {
			at := rng.IntN(len(data)-8) / chunk * chunk
			if _, err := r.ReadAt(buf[at:min(len(data), at+chunk)], int64(at)); err != nil {
				b.Fatal(err)
			}
		}
		r.(io.Closer).Close()
	}
}
