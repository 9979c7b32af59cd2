package syzygy

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/source/mmap"
)

// widenMaps rewrites a DTZ table whose value maps have one-byte entries
// into the same table with two-byte entries (flag 16), the form large
// tables use: the same values, laid out as the format lays out wide maps.
func widenMaps(t *testing.T, orig []byte, f *tableFile) []byte {
	t.Helper()
	out := append([]byte(nil), orig[:f.where.maps]...)
	for fl := range f.numFiles {
		if f.dtzFlags[fl]&dtzMapped == 0 {
			continue
		}
		out[f.where.flags[fl]] |= dtzWideMap
		if len(out)&1 != 0 {
			out = append(out, 0)
		}
		for i := range 4 {
			m := f.dtzMaps[fl][i]
			out = binary.LittleEndian.AppendUint16(out, uint16(len(m)))
			for _, v := range m {
				out = binary.LittleEndian.AppendUint16(out, v)
			}
		}
	}
	if len(out)&1 != 0 {
		out = append(out, 0)
	}
	out = append(out, orig[f.where.index:f.where.indexEnd]...)
	for fl := range f.numFiles {
		for side := range 2 {
			e := f.parts[fl][side]
			if e == nil {
				continue
			}
			for len(out)%64 != 0 {
				out = append(out, 0)
			}
			d := e.pairs
			out = append(out, orig[d.dataOff:d.dataOff+int64(d.dataBytes)]...)
		}
	}
	for len(out)%64 != 0 {
		out = append(out, 0)
	}
	return append(out, make([]byte, 16)...) // no valid checksum: probed with SkipChecksums
}

// TestWideDTZMaps probes the fixture rows through copies of the mapped
// DTZ tables rewritten with two-byte map entries (none of the shipped
// tables has them, large ones do): every value must stay the oracle's
// (arbiter: Fathom's rows).
func TestWideDTZMaps(t *testing.T) {
	checkWidened(t, testenv.Testdata(t, "syzygy"), readOracle(t, testenv.Testdata(t, "syzygy", "probe.tsv")))
}

// TestSharedWideDTZMaps does the same over the shared tables (pawnful ones
// among them, with maps for some leading-pawn files only) and the whole
// oracle.
func TestSharedWideDTZMaps(t *testing.T) {
	_, rows := sharedRows(t)
	checkWidened(t, testenv.Shared(t, "syzygy", "tables"), rows)
}

func checkWidened(t *testing.T, src string, rows []oracleRow) {
	dir := t.TempDir()
	tb := openDir(t, src)
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	var widened []material
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if kind, mat, ok := ParseTableName(e.Name()); ok && kind == KindDTZ {
			m, _ := parseMaterial(mat)
			f, err := tb.table(context.Background(), kind, m)
			if err != nil {
				t.Fatal(err)
			}
			for fl := range f.numFiles {
				if f.dtzFlags[fl]&dtzMapped != 0 {
					b = widenMaps(t, b, f)
					widened = append(widened, m)
					break
				}
			}
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if len(widened) == 0 {
		t.Fatal("no fixture DTZ table has maps to widen")
	}
	s, err := mmap.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	wide, err := Open(Options{SkipChecksums: true}, s)
	if err != nil {
		t.Fatal(err)
	}
	defer wide.Close()
	for _, m := range widened {
		f, err := wide.table(context.Background(), KindDTZ, m)
		if err != nil {
			t.Fatal(err)
		}
		wideAny := false
		for fl := range f.numFiles {
			wideAny = wideAny || f.dtzFlags[fl]&dtzWideMap != 0
		}
		if !wideAny {
			t.Fatalf("%s was not rewritten with wide maps", m.name())
		}
	}
	checkDTZRows(t, wide, rows)
	t.Logf("%d tables widened", len(widened))
}

// TestSmallHeaderReads opens the fixture tables reading their headers a
// few bytes at a time (as a transport with a short first read would make
// the parser grow its buffer again and again) and sweeps the fixture rows
// (arbiter: Fathom's rows).
func TestSmallHeaderReads(t *testing.T) {
	saved := firstHeaderRead
	firstHeaderRead = 7
	// Restored after the Tablebase's Close (cleanups run last first), so
	// no background open is still reading it.
	t.Cleanup(func() { firstHeaderRead = saved })
	tb := openDir(t, testenv.Testdata(t, "syzygy"))
	rows := readOracle(t, testenv.Testdata(t, "syzygy", "probe.tsv"))
	checkWDLRows(t, tb, rows)
	checkDTZRows(t, tb, rows)
}

// TestLazyIndex reads every table's sparse index and size table in pages
// on demand, as large tables do, and sweeps the oracle: fixture rows
// always, the whole shared oracle when it is there (arbiter: Fathom's
// rows).
func TestLazyIndex(t *testing.T) {
	saved := eagerIndexBytes
	eagerIndexBytes = 0
	t.Cleanup(func() { eagerIndexBytes = saved }) // after the Tablebases close
	tb := openDir(t, testenv.Testdata(t, "syzygy"))
	rows := readOracle(t, testenv.Testdata(t, "syzygy", "probe.tsv"))
	checkWDLRows(t, tb, rows)
	checkDTZRows(t, tb, rows)
	if testenv.HasShared(t, "syzygy") {
		shared, rows := sharedRows(t)
		checkWDLRows(t, shared, rows)
		checkDTZRows(t, shared, rows)
		checkRootRows(t, shared, rows)
	}
	f, err := tb.table(context.Background(), KindWDL, mustMaterial(t, "KRvKR"))
	if err != nil {
		t.Fatal(err)
	}
	if f.parts[0][0].pairs.lazy == nil {
		t.Error("KRvKR.rtbw's index was read whole")
	}
}

func mustMaterial(t *testing.T, s string) material {
	t.Helper()
	m, ok := parseMaterial(s)
	if !ok {
		t.Fatalf("bad material %q", s)
	}
	return m
}
