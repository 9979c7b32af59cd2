package syzygy

import (
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/source"
)

// TestSharedChecksums checks every shared table's embedded checksum; the
// README says tbcheck found all 80 correct and equal to syzygy1/tb's
// published lists (arbiter: the generator's own tool).
func TestSharedChecksums(t *testing.T) {
	dir := testenv.Shared(t, "syzygy", "tables")
	checkAllChecksums(t, dir, 80)
}

// TestFixtureChecksums does the same for the committed copies.
func TestFixtureChecksums(t *testing.T) {
	checkAllChecksums(t, testenv.Testdata(t, "syzygy"), 12)
}

func checkAllChecksums(t *testing.T, dir string, want int) {
	tb := openDir(t, dir)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		kind, mat, ok := ParseTableName(e.Name())
		if !ok {
			continue
		}
		n++
		if err := tb.VerifyChecksum(context.Background(), kind, mat); err != nil {
			t.Errorf("%s: %v", e.Name(), err)
		}
		// Open the table, then ask again: the gate's run must agree.
		m, _ := parseMaterial(mat)
		if _, err := tb.table(context.Background(), kind, m); err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		if err := tb.VerifyChecksum(context.Background(), kind, mat); err != nil {
			t.Errorf("%s, open: %v", e.Name(), err)
		}
	}
	if n != want {
		t.Errorf("%d tables, want %d", n, want)
	}
}

// TestChecksumFlippedByte flips one byte at several places of a copy of a
// table (header, index, data, the stored checksum): every copy must fail.
func TestChecksumFlippedByte(t *testing.T) {
	orig, err := os.ReadFile(testenv.Testdata(t, "syzygy", "KRvKR.rtbw"))
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []int{0, 5, 40, len(orig) / 2, len(orig) - 17, len(orig) - 1} {
		dir := t.TempDir()
		b := append([]byte(nil), orig...)
		b[at] ^= 0x10
		if err := os.WriteFile(filepath.Join(dir, "KRvKR.rtbw"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		tb := openDir(t, dir)
		err := tb.VerifyChecksum(context.Background(), KindWDL, "KRvKR")
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("byte %d flipped: %v, want ErrCorrupt", at, err)
		}
		// Once the table is open, its gate's run answers: the same verdict.
		pos := mustFEN(t, "8/8/3k4/8/2r5/8/5R2/4K3 w - - 0 1")
		tb.WDL(context.Background(), &pos)
		if err := tb.VerifyChecksum(context.Background(), KindWDL, "KRvKR"); !errors.Is(err, ErrCorrupt) {
			t.Errorf("byte %d flipped, table open: %v, want ErrCorrupt", at, err)
		}
	}
}

func TestParseTableName(t *testing.T) {
	for _, c := range []struct {
		name string
		kind Kind
		mat  string
		ok   bool
	}{
		{"KQvKR.rtbw", KindWDL, "KQvKR", true},
		{"KPvK.rtbz", KindDTZ, "KPvK", true},
		{"KNNvKQ.rtbz", KindDTZ, "KNNvKQ", true},
		{"KRvKQ.rtbw", 0, "", false}, // the generator writes the stronger side first
		{"KQvKR.rtbm", 0, "", false},
		{"KQ.rtbw", 0, "", false},
		{"KQKvK.rtbw", 0, "", false},
		{strings.Repeat("Q", 3) + "KvK.rtbw", 0, "", false},
		// The reader opens kind/NAME before NAME (tablebase.go openTable),
		// so those are table names; no other folder is.
		{"wdl/KQvKR.rtbw", KindWDL, "KQvKR", true},
		{"dtz/KPvK.rtbz", KindDTZ, "KPvK", true},
		{"dtz/KQvKR.rtbw", 0, "", false},
		{"wdl/KPvK.rtbz", 0, "", false},
		{"tables/KQvKR.rtbw", 0, "", false},
		{"wdl/x/KQvKR.rtbw", 0, "", false},
		{"/KQvKR.rtbw", 0, "", false},
	} {
		kind, mat, ok := ParseTableName(c.name)
		if ok != c.ok || (ok && (kind != c.kind || mat != c.mat)) {
			t.Errorf("ParseTableName(%q) = %v %q %v", c.name, kind, mat, ok)
		}
	}
}

// TestCRC8 checks the table-driven 8-byte CRC-32C step against the
// standard library's CRC-32C (which inverts before and after).
func TestCRC8(t *testing.T) {
	for i, c := range []struct{ crc, v uint64 }{{0, 0}, {0, 1}, {0xffffffff, 0x0123456789abcdef}, {0x1234, 1 << 63}, {0xdeadbeef, 0xfeedfacecafebeef}} {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], c.v)
		want := uint64(^crc32.Update(^uint32(c.crc), crc32.MakeTable(crc32.Castagnoli), b[:]))
		if got := crc8(c.crc, c.v); got != want {
			t.Errorf("%d: crc8(%#x, %#x) = %#x, want %#x", i, c.crc, c.v, got, want)
		}
	}
}

// TestChecksumWindows: a file of several 16 MiB chunks, read through the
// checksum's 1 MiB window, hashes as the in-memory function hashes each
// chunk (which the 80 shared files tie to tbcheck); the last chunk is
// short and ends inside a window.
func TestChecksumWindows(t *testing.T) {
	if raceEnabled {
		t.Skip("hashes 33 MiB; the race build's sweep covers the window code on the shared files")
	}
	body := 2*checksumChunk + 3*checksumWindow + 4160
	data := make([]byte, body+16)
	x := uint64(1)
	for i := range data[:body] {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		data[i] = byte(x)
	}
	var sums []byte
	for off := 0; off < body; off += checksumChunk {
		for _, v := range cityCrc256(data[off:min(off+checksumChunk, body)]) {
			sums = binary.LittleEndian.AppendUint64(sums, v)
		}
	}
	lo, hi := cityCrc128(sums)
	binary.LittleEndian.PutUint64(data[body:], lo)
	binary.LittleEndian.PutUint64(data[body+8:], hi)
	obj := memObject(data)
	got, stored, err := fileChecksum(context.Background(), obj)
	if err != nil || got != stored {
		t.Fatalf("windowed checksum %x, stored %x, %v", got, stored, err)
	}
}

// memObject is a source.Object over bytes in memory.
type memObject []byte

func (m memObject) Size() int64  { return int64(len(m)) }
func (m memObject) Close() error { return nil }
func (m memObject) ReadAt(_ context.Context, p []byte, off int64, _ source.Hint) (int, error) {
	if off < 0 || off > int64(len(m)) {
		return 0, source.ErrInvalid
	}
	n := copy(p, m[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}
