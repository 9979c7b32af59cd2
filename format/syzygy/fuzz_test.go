package syzygy

import (
	"context"
	"errors"
	"os"
	"testing"
	"testing/fstest"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/source/fssource"
)

// fuzzPositions are legal positions of the fuzzed materials.
var fuzzPositions = map[string][]string{
	"KRvKR": {"8/8/3k4/8/2r5/8/5R2/4K3 w - - 0 1", "R7/8/8/4k3/8/8/1r6/K7 b - - 0 1"},
	"KPvK":  {"8/8/8/3k4/8/8/4P3/3K4 b - - 0 1", "8/1P6/8/8/8/k7/8/7K w - - 0 1"},
}

// FuzzHeader opens arbitrary bytes as a table and probes it: the reader
// must fail with ErrCorrupt or answer, never panic or hang.
func FuzzHeader(f *testing.F) {
	for _, name := range []string{"KRvKR.rtbw", "KRvKR.rtbz", "KPvK.rtbw", "KPvK.rtbz"} {
		b, err := os.ReadFile(testenv.Testdata(f, "syzygy", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, name[len(name)-1] == 'z', name[1] == 'P')
	}
	f.Fuzz(func(t *testing.T, data []byte, dtz, pawns bool) {
		mat, kind := "KRvKR", KindWDL
		if pawns {
			mat = "KPvK"
		}
		if dtz {
			kind = KindDTZ
		}
		name := mat + kind.Ext()
		fsys := fstest.MapFS{name: {Data: data}}
		// The other kind of the same material and the sub-tables are
		// missing; probes that need them fail with ErrNoTable.
		tb, err := Open(Options{SkipChecksums: true}, fssource.New(fsys, "fuzz"))
		if err != nil {
			t.Fatal(err)
		}
		defer tb.Close()
		ctx := context.Background()
		for _, fen := range fuzzPositions[mat] {
			pos, err := chess.ParseFEN(fen)
			if err != nil {
				t.Fatal(err)
			}
			if _, _, _, err := tb.probeTable(ctx, &pos, kind, 2); err != nil && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%s: %v", fen, err)
			}
		}
	})
}

// FuzzPairs decodes arbitrary bytes as a sub-table's pairs header, block
// index, size table and blocks: ErrCorrupt or values, never a panic.
func FuzzPairs(f *testing.F) {
	b, err := os.ReadFile(testenv.Testdata(f, "syzygy", "KRvKR.rtbw"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b[12:], uint64(1000), uint64(17))
	f.Add([]byte{0x80, 3}, uint64(5), uint64(0))
	f.Fuzz(func(t *testing.T, data []byte, size, idx uint64) {
		size = size%(1<<24) + 1
		d, n, err := parsePairs(data, size, true)
		if err != nil {
			return
		}
		if d.constant {
			return
		}
		rest := data[n:]
		if uint64(len(rest)) < d.indexBytes+d.sizesBytes || d.dataBytes > 1<<20 {
			return
		}
		d.index = rest[:d.indexBytes]
		d.sizes = make([]uint16, d.numBlocks)
		for i := range d.sizes {
			d.sizes[i] = uint16(rest[d.indexBytes+2*uint64(i)]) | uint16(rest[d.indexBytes+2*uint64(i)+1])<<8
		}
		blocks := rest[d.indexBytes+d.sizesBytes:]
		block, lit, err := d.locate(context.Background(), idx%size)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatal(err)
			}
			return
		}
		buf := make([]byte, 1<<d.blockSize)
		if off := uint64(block) << d.blockSize; off < uint64(len(blocks)) {
			copy(buf, blocks[off:])
		}
		db, err := d.decodeBlock(context.Background(), buf, block)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatal(err)
			}
			return
		}
		if v := d.value(db, lit); v > d.maxValue {
			t.Fatalf("value %d above the largest leaf %d", v, d.maxValue)
		}
	})
}

// FuzzIndex places the men of a fixture table's material on arbitrary
// squares and checks the index against the rules of the board: a position
// and its images under the board's symmetries (all eight for a pawnless
// table, the left-right mirror with pawns) have one index, inside the table.
func FuzzIndex(f *testing.F) {
	f.Add([]byte{4, 60, 0, 63}, false)
	f.Add([]byte{3, 12, 59}, true)
	ctx := context.Background()
	tb := openDir(f, testenv.Testdata(f, "syzygy"))
	f.Fuzz(func(t *testing.T, sq []byte, pawns bool) {
		mat := "KRvKR"
		if pawns {
			mat = "KPvK"
		}
		m, _ := parseMaterial(mat)
		tf, err := tb.table(ctx, KindWDL, m)
		if err != nil {
			t.Fatal(err)
		}
		lay := &tf.lay
		if len(sq) < lay.num {
			return
		}
		e := tf.parts[0][0]
		p := make([]int, lay.num)
		used := map[int]bool{}
		for i := range p {
			p[i] = int(sq[i] % 64)
			if used[p[i]] {
				return
			}
			used[p[i]] = true
			if e.pieces[i]&7 == 1 && (p[i] < 8 || p[i] >= 56) {
				return // pawns stand on ranks 2-7
			}
		}
		if pawns {
			q := append([]int(nil), p...)
			file := leadingPawn(lay, q)
			idx, ok := tf.parts[file][0].encode(lay, q, encFile)
			mirrored := make([]int, len(p))
			for i := range p {
				mirrored[i] = p[i] ^ 7
			}
			file2 := leadingPawn(lay, mirrored)
			idx2, ok2 := tf.parts[file2][0].encode(lay, mirrored, encFile)
			if ok != ok2 || (ok && (idx != idx2 || file != file2 || idx >= tf.parts[file][0].size)) {
				t.Fatalf("%v: index %d/%v (file %d), mirrored %d/%v (file %d)", p, idx, ok, file, idx2, ok2, file2)
			}
			return
		}
		if kingsTouch(p[0], p[1]) {
			return
		}
		var first uint64
		for s := range 8 {
			q := make([]int, len(p))
			for i := range p {
				q[i] = symmetry(p[i], s)
			}
			idx, ok := e.encode(lay, q, encPiece)
			if !ok || idx >= e.size {
				t.Fatalf("%v under symmetry %d: index %d/%v of %d", p, s, idx, ok, e.size)
			}
			if s == 0 {
				first = idx
			} else if idx != first && !onDiagonalTie(p, lay) {
				t.Fatalf("%v: symmetry %d gives index %d, identity %d", p, s, idx, first)
			}
		}
	})
}

// symmetry maps sq by the s-th symmetry of the board (bit 0: files, bit 1:
// ranks, bit 2: the a1-h8 diagonal).
func symmetry(sq, s int) int {
	if s&1 != 0 {
		sq ^= 7
	}
	if s&2 != 0 {
		sq ^= 0x38
	}
	if s&4 != 0 {
		sq = int(flipDiag[sq])
	}
	return sq
}

func kingsTouch(a, b int) bool {
	df, dr := a&7-b&7, a>>3-b>>3
	return max(df, -df) <= 1 && max(dr, -dr) <= 1
}

// onDiagonalTie reports positions whose leading men (the first three, or
// the two kings of a king-pair index) all stand on the diagonal that the
// index folds onto: the index then has two images of the position (one
// the diagonal mirror of the other), both stored.
func onDiagonalTie(p []int, lay *layout) bool {
	q := append([]int(nil), p...)
	if q[0]&4 != 0 {
		for i := range q {
			q[i] ^= 7
		}
	}
	if q[0]&0x20 != 0 {
		for i := range q {
			q[i] ^= 0x38
		}
	}
	first := 3
	if lay.kk {
		first = 2
	}
	for i := range first {
		if offDiag[q[i]] != 0 {
			return false
		}
	}
	return true
}
