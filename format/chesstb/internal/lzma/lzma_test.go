package lzma

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"testing"

	xzlzma "github.com/ulikunitz/xz/lzma"
)

// The arbiter of these tests is github.com/ulikunitz/xz/lzma: its writer
// makes the streams, its reader decodes them, and the input the writer was
// given is what both must decode to.

// encode compresses data with the library into a raw stream without an end
// marker (the shape chesstb stores) and returns the stream and its props.
func encode(t testing.TB, data []byte, lc, lp, pb int) (stream, props []byte) {
	t.Helper()
	var buf bytes.Buffer
	cfg := xzlzma.WriterConfig{
		Properties:   &xzlzma.Properties{LC: lc, LP: lp, PB: pb},
		DictCap:      max(xzlzma.MinDictCap, len(data)),
		SizeInHeader: true,
		Size:         int64(len(data)),
	}
	w, err := cfg.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// The classic header: properties, dictionary size, then the 64-bit size.
	b := buf.Bytes()
	return b[13:], b[:PropsSize]
}

// decodeWithLibrary decodes a raw stream with the library, rebuilding the
// classic header it expects.
func decodeWithLibrary(stream, props []byte, size int) ([]byte, error) {
	if len(props) != PropsSize {
		return nil, errors.New("props")
	}
	var hdr [13]byte
	copy(hdr[:5], props)
	binary.LittleEndian.PutUint64(hdr[5:], uint64(size))
	r, err := xzlzma.NewReader(io.MultiReader(bytes.NewReader(hdr[:]), bytes.NewReader(stream)))
	if err != nil {
		return nil, err
	}
	out := make([]byte, size)
	if _, err := io.ReadFull(r, out); err != nil {
		return nil, err
	}
	return out, nil
}

// samples are inputs of the shapes LZMA meets: tables of small codes with
// long runs and repeats (like the distance blocks), text, incompressible
// bytes, and the degenerate sizes.
func samples() map[string][]byte {
	r := rand.New(rand.NewPCG(1, 2))
	codes := make([]byte, 300_000)
	for i := range codes {
		if r.IntN(8) == 0 {
			codes[i] = byte(r.IntN(16))
		} else if i > 0 {
			codes[i] = codes[i-1]
		}
	}
	repeats := make([]byte, 200_000)
	for i := range repeats {
		switch {
		case i >= 1000 && r.IntN(4) != 0:
			repeats[i] = repeats[i-1-r.IntN(1000)]
		default:
			repeats[i] = byte(r.IntN(256))
		}
	}
	random := make([]byte, 70_000)
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	text := bytes.Repeat([]byte("a king and a rook against a king: mate in sixteen at most. "), 2000)
	return map[string][]byte{
		"empty":   {},
		"one":     {42},
		"zeros":   make([]byte, 100_000),
		"codes":   codes,
		"repeats": repeats,
		"random":  random,
		"text":    text,
	}
}

// TestDecodeAgainstLibrary decodes every sample under several literal and
// position settings whole, resumed in uneven steps, and into an output that
// grows in small steps (so matches are cut at its end), and compares with
// the input and the library's decode.
func TestDecodeAgainstLibrary(t *testing.T) {
	props := []struct{ lc, lp, pb int }{{3, 0, 2}, {0, 2, 0}, {4, 0, 0}, {1, 3, 4}, {8, 0, 2}}
	for name, data := range samples() {
		for _, pr := range props {
			stream, ps := encode(t, data, pr.lc, pr.lp, pr.pb)
			want, err := decodeWithLibrary(stream, ps, len(data))
			if err != nil || !bytes.Equal(want, data) {
				t.Fatalf("%s %v: the library does not round-trip (%v)", name, pr, err)
			}
			got, err := DecodeAll(stream, ps, len(data))
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%s %v: whole decode differs (err %v)", name, pr, err)
			}
			// Resumed in uneven steps into a full-size buffer.
			z, err := NewDecoder(stream, ps, len(data))
			if err != nil {
				t.Fatal(err)
			}
			out := make([]byte, len(data))
			for step := 1; z.Pos() < len(out); step = step*3 + 7 {
				before := z.Pos()
				n, err := z.Decode(out, before+step)
				if err != nil {
					t.Fatalf("%s %v: resumed decode at %d: %v", name, pr, before, err)
				}
				if n < min(before+step, len(out)) {
					t.Fatalf("%s %v: decode to %d stopped at %d", name, pr, before+step, n)
				}
			}
			if !bytes.Equal(out, want) {
				t.Fatalf("%s %v: resumed decode differs", name, pr)
			}
			// Into a buffer that grows by a few bytes at a time.
			if z, err = NewDecoder(stream, ps, len(data)); err != nil {
				t.Fatal(err)
			}
			var grow []byte
			for z.Pos() < len(data) {
				grow = append(grow, make([]byte, min(len(data)-len(grow), 1+len(grow)/3))...)
				n, err := z.Decode(grow, len(grow))
				if err != nil {
					t.Fatalf("%s %v: growing decode at %d: %v", name, pr, len(grow), err)
				}
				if n != len(grow) {
					t.Fatalf("%s %v: decode into %d bytes stopped at %d", name, pr, len(grow), n)
				}
			}
			if !bytes.Equal(grow, want) {
				t.Fatalf("%s %v: growing decode differs", name, pr)
			}
		}
	}
}

// TestMalformed checks the failures the decoder must report rather than
// decode past: every one wraps ErrMalformed, and a broken decoder stays
// broken.
func TestMalformed(t *testing.T) {
	data := samples()["repeats"]
	stream, props := encode(t, data, 3, 0, 2)
	for _, tc := range []struct {
		name          string
		stream, props []byte
		size          int
	}{
		{"no props", stream, nil, len(data)},
		{"props byte past 9*5*5", stream, []byte{225, 0, 0, 1, 0}, len(data)},
		{"lc+lp over 8", stream, []byte{byte(4*45 + 4*9 + 8), 0, 0, 1, 0}, len(data)},
		{"first byte not 0", append([]byte{1}, stream[1:]...), props, len(data)},
		{"stream of 4 bytes", stream[:4], props, len(data)},
		{"stream cut in half", stream[:len(stream)/2], props, len(data)},
		{"negative size", stream, props, -1},
	} {
		out, err := DecodeAll(tc.stream, tc.props, tc.size)
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: got %d bytes and error %v, want ErrMalformed", tc.name, len(out), err)
		}
	}
	// A truncated stream fails, and keeps failing.
	z, err := NewDecoder(stream[:len(stream)/2], props, len(data))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]byte, len(data))
	_, err1 := z.Decode(out, len(data))
	_, err2 := z.Decode(out, len(data))
	if !errors.Is(err1, ErrMalformed) || err2 != err1 {
		t.Errorf("truncated stream: errors %v then %v", err1, err2)
	}
}

// FuzzDecode decodes arbitrary streams whole, resumed and into a growing
// buffer: none may panic, the three must agree, and where the library
// decodes the stream too the bytes must be the library's.
func FuzzDecode(f *testing.F) {
	for _, name := range []string{"one", "codes", "text"} {
		data := samples()[name]
		if len(data) > 4000 {
			data = data[:4000]
		}
		stream, props := encode(f, data, 3, 0, 2)
		f.Add(append(props, stream...), uint16(len(data)))
	}
	f.Add([]byte{0x5d, 0, 0, 0x10, 0, 0, 0, 0, 0, 0}, uint16(16))
	f.Fuzz(func(t *testing.T, in []byte, size16 uint16) {
		size := int(size16)
		if len(in) < PropsSize {
			return
		}
		props, stream := in[:PropsSize], in[PropsSize:]
		got, err := DecodeAll(stream, props, size)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		if len(got) != size {
			t.Fatalf("decoded %d bytes, want %d", len(got), size)
		}
		if want, lerr := decodeWithLibrary(stream, props, size); lerr == nil && !bytes.Equal(got, want) {
			t.Fatal("differs from the library")
		}
		z, err := NewDecoder(stream, props, size)
		if err != nil {
			t.Fatal(err)
		}
		var grow []byte
		for z.Pos() < size {
			grow = append(grow, make([]byte, min(size-len(grow), 17))...)
			if _, err := z.Decode(grow, z.Pos()+5); err != nil {
				t.Fatalf("resumed decode fails where the whole one did not: %v", err)
			}
		}
		if !bytes.Equal(grow, got) {
			t.Fatal("resumed decode differs")
		}
	})
}

// BenchmarkDecode decodes the larger samples whole with our decoder and
// with the library.
func BenchmarkDecode(b *testing.B) {
	for _, name := range []string{"codes", "repeats", "text"} {
		data := samples()[name]
		stream, props := encode(b, data, 3, 0, 2)
		b.Run(name+"/ours", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := DecodeAll(stream, props, len(data)); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/library", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := decodeWithLibrary(stream, props, len(data)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecodeResumed decodes the codes sample in 4 KiB steps, the way
// a prober walks into a block.
func BenchmarkDecodeResumed(b *testing.B) {
	data := samples()["codes"]
	stream, props := encode(b, data, 3, 0, 2)
	out := make([]byte, len(data))
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		z, err := NewDecoder(stream, props, len(data))
		if err != nil {
			b.Fatal(err)
		}
		for z.Pos() < len(data) {
			if _, err := z.Decode(out, z.Pos()+4096); err != nil {
				b.Fatal(err)
			}
		}
	}
}
