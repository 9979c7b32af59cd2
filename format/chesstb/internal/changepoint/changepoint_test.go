package changepoint

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// drawRank marks a DRAW layer in a test cell's per-layer ranks.
const drawRank = 0xffff

// encode writes a block payload for cells, each a per-layer rank list, the
// way the format describes it (a test-side writer: the decoder must read back
// exactly the step functions given to it).
func encode(cells [][]uint16, layers, eb int) []byte {
	n := len(cells)
	states := make([]byte, (2*n+7)/8)
	var cst, sst, dst, mst []byte
	dir := []uint32{0}
	var ns, nd uint32
	put := func(dst []byte, r uint16) []byte {
		if eb == 1 {
			return append(dst, byte(r))
		}
		return binary.LittleEndian.AppendUint16(dst, r)
	}
	for i, c := range cells {
		var cp []int
		var cr []uint16
		for h := 0; h < layers; h++ {
			if h == 0 || c[h] != c[h-1] {
				cp = append(cp, h)
				cr = append(cr, c[h])
				if c[h] == drawRank {
					break
				}
			}
		}
		k := len(cp)
		drawEnd := cr[k-1] == drawRank
		var hint byte
		if drawEnd {
			hint = 0x80
		}
		switch {
		case cr[0] == drawRank || k == 1:
			r := cr[0]
			if r == drawRank {
				r = 0
			}
			cst = put(cst, r)
		case k == 2:
			states[i/4] |= 1 << (2 * (i % 4))
			sst = append(sst, byte(cp[1])|hint)
			for _, r := range cr[:k-int(hint>>7)] {
				sst = put(sst, r)
			}
			ns++
		case k == 3:
			states[i/4] |= 2 << (2 * (i % 4))
			dst = append(dst, byte(cp[1]), byte(cp[2])|hint)
			for _, r := range cr[:k-int(hint>>7)] {
				dst = put(dst, r)
			}
			nd++
		default:
			states[i/4] |= 3 << (2 * (i % 4))
			rec := []byte{byte(k) | hint}
			bm := make([]byte, BitmapBytes(layers))
			for _, h := range cp {
				bm[h/8] |= 1 << (h % 8)
			}
			rec = append(rec, bm...)
			for _, r := range cr[:k-int(hint>>7)] {
				rec = put(rec, r)
			}
			mst = append(mst, rec...)
			dir = append(dir, uint32(len(mst)))
		}
	}
	out := binary.LittleEndian.AppendUint32(nil, uint32(n))
	out = binary.LittleEndian.AppendUint32(out, ns)
	out = binary.LittleEndian.AppendUint32(out, nd)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(dir)-1))
	out = binary.LittleEndian.AppendUint32(out, uint32(len(sst)))
	out = binary.LittleEndian.AppendUint32(out, uint32(len(dst)))
	out = append(out, states...)
	out = append(out, cst...)
	out = append(out, sst...)
	out = append(out, dst...)
	for len(out)%4 != 0 {
		out = append(out, 0)
	}
	for _, d := range dir {
		out = binary.LittleEndian.AppendUint32(out, d)
	}
	out = append(out, mst...)
	for len(out)%4 != 0 {
		out = append(out, 0)
	}
	return out
}

// randomCell draws a monotone step function with the given number of
// changes, ending in DRAW or not.
func randomCell(rng *rand.Rand, layers, changes int, drawEnd bool, ranks int) []uint16 {
	c := make([]uint16, layers)
	pts := rng.Perm(layers - 1)[:changes]
	mark := make([]bool, layers)
	for _, p := range pts {
		mark[p+1] = true
	}
	last := -1
	for h := range layers {
		if h == 0 || mark[h] {
			r := rng.IntN(ranks)
			for r == last {
				r = (r + 1) % ranks
			}
			last = r
		}
		c[h] = uint16(last)
	}
	if drawEnd && changes > 0 {
		// The last change turns the cell DRAW for good.
		flip := layers - 1
		for h := layers - 1; h > 0; h-- {
			if mark[h] {
				flip = h
				break
			}
		}
		for h := flip; h < layers; h++ {
			c[h] = drawRank
		}
	}
	return c
}

func stateOf(c []uint16, layers int) State {
	k := 0
	for h := 0; h < layers; h++ {
		if h == 0 || c[h] != c[h-1] {
			k++
		}
	}
	switch k {
	case 1:
		return Const
	case 2:
		return Single
	case 3:
		return Double
	}
	return Multi
}

// blockShapes are the table shapes the encoded test blocks take: both
// stacks, both rank widths, and a block of a few positions.
var blockShapes = []struct {
	name   string
	layers int
	eb     int
	ranks  int
	n      int
}{
	{"dtm50-1byte", DTM50Layers, 1, 200, 3000},
	{"dtm50-2byte", DTM50Layers, 2, 700, 1500},
	{"dtc-1byte", DTCLayers, 1, 90, 3000},
	{"dtc-tiny", DTCLayers, 1, 5, 7},
}

// TestRoundTrip is a property test: random step functions, written by the
// test-side encoder, read back layer by layer and segment by segment.
func TestRoundTrip(t *testing.T) {
	for _, tc := range blockShapes {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(tc.n)))
			cells := make([][]uint16, tc.n)
			for i := range cells {
				changes := rng.IntN(5)
				if rng.IntN(10) == 0 {
					changes = rng.IntN(tc.layers - 1)
				}
				cells[i] = randomCell(rng, tc.layers, changes, rng.IntN(2) == 0, tc.ranks)
			}
			b, err := Decode(encode(cells, tc.layers, tc.eb), Params{Layers: tc.layers, EntryBytes: tc.eb, Positions: tc.n, Ranks: tc.ranks})
			if err != nil {
				t.Fatal(err)
			}
			seen := map[State]int{}
			for i, c := range cells {
				r, err := b.Lookup(i)
				if err != nil {
					t.Fatal(err)
				}
				if want := stateOf(c, tc.layers); r.State != want {
					t.Fatalf("cell %d: state %v, want %v", i, r.State, want)
				}
				seen[r.State]++
				for h := 0; h < tc.layers; h++ {
					rank, draw := r.At(h)
					if draw != (c[h] == drawRank) || (!draw && rank != c[h]) {
						t.Fatalf("cell %d layer %d: got (%d,%v), want %d", i, h, rank, draw, c[h])
					}
				}
				// The segments tile the stack.
				for s := 0; s < r.Segments(); s++ {
					start, rank, draw := r.Segment(s)
					if draw != (c[start] == drawRank) || (!draw && rank != c[start]) || (start > 0 && c[start] == c[start-1]) {
						t.Fatalf("cell %d segment %d at %d: (%d,%v)", i, s, start, rank, draw)
					}
				}
				flip := 0
				for h := 1; h < tc.layers; h++ {
					if c[h] == drawRank && c[h-1] != drawRank {
						flip = h
					}
				}
				if r.DrawFlip() != flip {
					t.Fatalf("cell %d: draw flip %d, want %d", i, r.DrawFlip(), flip)
				}
			}
			if tc.n > 100 && len(seen) != 4 {
				t.Fatalf("only states %v exercised", seen)
			}
		})
	}
}

// TestMalformed damages a valid payload in the ways a broken file can and
// checks that each is refused with ErrCorrupt.
func TestMalformed(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	cells := make([][]uint16, 600)
	for i := range cells {
		cells[i] = randomCell(rng, DTCLayers, i%6, i%2 == 0, 40)
	}
	good := encode(cells, DTCLayers, 1)
	p := Params{Layers: DTCLayers, EntryBytes: 1, Positions: len(cells), Ranks: 40}
	if _, err := Decode(good, p); err != nil {
		t.Fatal(err)
	}
	mut := func(f func(b []byte) []byte) []byte {
		return f(append([]byte(nil), good...))
	}
	le := binary.LittleEndian
	for _, tc := range []struct {
		name    string
		payload []byte
		p       Params
	}{
		{"empty", nil, p},
		{"truncated header", good[:10], p},
		{"truncated", good[:len(good)-9], p},
		{"wrong position count", good, Params{Layers: DTCLayers, EntryBytes: 1, Positions: len(cells) + 1, Ranks: 40}},
		{"rank outside table", good, Params{Layers: DTCLayers, EntryBytes: 1, Positions: len(cells), Ranks: 3}},
		{"counts overflow", mut(func(b []byte) []byte { le.PutUint32(b[4:], 1<<31); return b }), p},
		{"single stream too long", mut(func(b []byte) []byte { le.PutUint32(b[16:], le.Uint32(b[16:])+1); return b }), p},
		{"state vector disagrees", mut(func(b []byte) []byte { b[24] ^= 0x3; return b }), p},
		{"huge double stream", mut(func(b []byte) []byte { le.PutUint32(b[20:], 0xffffffff); return b }), p},
		{"trailing garbage", mut(func(b []byte) []byte { return append(b, 1, 2, 3, 4, 5, 6, 7, 8) }), p},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode(tc.payload, tc.p)
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("got %v, want ErrCorrupt", err)
			}
		})
	}
}

// FuzzDecode feeds arbitrary payloads to the decoder: it must either refuse
// them or answer every lookup of every position at every layer without
// panicking, with ranks inside the table.
func FuzzDecode(f *testing.F) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, layers := range []int{DTCLayers, DTM50Layers} {
		cells := make([][]uint16, 40)
		for i := range cells {
			cells[i] = randomCell(rng, layers, i%5, i%3 == 0, 20)
		}
		f.Add(encode(cells, layers, 1), uint8(layers), uint8(1), uint16(40))
		f.Add(encode(cells, layers, 2), uint8(layers), uint8(2), uint16(40))
	}
	f.Fuzz(func(t *testing.T, payload []byte, layers, eb uint8, n uint16) {
		p := Params{Layers: int(layers), EntryBytes: int(eb), Positions: int(n), Ranks: 20}
		b, err := Decode(payload, p)
		if err != nil {
			return
		}
		for i := 0; i < p.Positions; i++ {
			r, err := b.Lookup(i)
			if err != nil {
				t.Fatal(err)
			}
			for h := 0; h < p.Layers; h++ {
				if rank, draw := r.At(h); !draw && int(rank) >= p.Ranks {
					t.Fatalf("rank %d outside table", rank)
				}
			}
			for s := 0; s < r.Segments(); s++ {
				r.Segment(s)
			}
			r.DrawFlip()
		}
	})
}

// FuzzPartial feeds arbitrary payloads to Partial, in growing prefixes as it
// asks: it must refuse them or answer without panicking, with ranks inside
// the table, and where Decode accepts the payload, with Decode's records.
func FuzzPartial(f *testing.F) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, layers := range []int{DTCLayers, DTM50Layers} {
		cells := make([][]uint16, 40)
		for i := range cells {
			cells[i] = randomCell(rng, layers, i%5, i%3 == 0, 20)
		}
		f.Add(encode(cells, layers, 1), uint8(layers), uint8(1), uint16(40), uint16(7))
		f.Add(encode(cells, layers, 2), uint8(layers), uint8(2), uint16(40), uint16(29))
	}
	f.Fuzz(func(t *testing.T, payload []byte, layers, eb uint8, n, step uint16) {
		p := Params{Layers: int(layers), EntryBytes: int(eb), Positions: int(n), Ranks: 20}
		pa, err := NewPartial(p, len(payload))
		if err != nil {
			return
		}
		whole, _ := Decode(payload, p)
		have := 0
		for i := 0; i < p.Positions; i++ {
			pos := (i * (int(step) | 1)) % p.Positions
			var r Record
			for {
				var need int
				r, need, err = pa.Lookup(payload[:have], pos)
				if err != nil {
					if whole != nil {
						t.Fatalf("position %d: %v on a payload Decode accepts", pos, err)
					}
					return
				}
				if need == 0 {
					break
				}
				if need <= have || need > len(payload) {
					t.Fatalf("position %d: asked for %d bytes holding %d of %d", pos, need, have, len(payload))
				}
				have = need
			}
			for h := 0; h < p.Layers; h++ {
				if rank, draw := r.At(h); !draw && int(rank) >= p.Ranks {
					t.Fatalf("rank %d outside table", rank)
				}
			}
			if whole != nil {
				want, _ := whole.Lookup(pos)
				if r.State != want.State || r.DrawEnd != want.DrawEnd || !bytes.Equal(r.entry, want.entry) {
					t.Fatalf("position %d: partial lookup differs from Decode", pos)
				}
			}
		}
	})
}

// FuzzParseHeader feeds arbitrary file prefixes to the header parser: it must
// refuse them or hand out block locations without panicking.
func FuzzParseHeader(f *testing.F) {
	for _, name := range []string{"KPK.lzdtc", "KQK.lzdtm50"} {
		data, err := os.ReadFile(testenv.Testdata(f, "chesstb", "packs", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data[:min(len(data), 512)], int64(len(data)), strings.HasSuffix(name, "dtc"))
	}
	f.Fuzz(func(t *testing.T, buf []byte, size int64, dtc bool) {
		magic := uint32(MagicDTM50)
		if dtc {
			magic = MagicDTC
		}
		h, err := ParseHeader(buf, size, magic)
		if err != nil {
			return
		}
		for c := range h.Frames {
			fr := &h.Frames[c]
			if fr.Singular || fr.Dropped {
				continue
			}
			for i := uint64(0); i < min(fr.BlockCount, 64); i++ {
				if bi, err := fr.Block(i); err == nil && (bi.Offset < 0 || bi.Offset+bi.Size > size) {
					t.Fatalf("block %d at %d+%d outside %d bytes", i, bi.Offset, bi.Size, size)
				}
			}
		}
	})
}
