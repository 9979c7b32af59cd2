package geister

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/geister"
	"github.com/tbfs/tbfs/internal/testkit/geisteroracle"
)

// TestManifest checks the SHA256SUMS and builder sidecar handling on copies of the shared
// id000 table (the reference's file and the reference's manifest): each
// row names the files put beside each other and whether the table may
// answer. The probe is a values.tsv row of id000, its value the oracle's.
func TestManifest(t *testing.T) {
	shared := sharedTables(t)
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(shared, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	const bin, zst = "id000_pb1pr1ob1or1_obsblk.bin", "id000_pb1pr1ob1or1_obsblk.bin.zst"
	sums, raw, packed := read(SumsFile), read(bin), read(zst)
	flipped := func(b []byte) []byte {
		c := append([]byte(nil), b...)
		c[len(c)/2] ^= 1
		return c
	}
	// Only the manifest's line for the raw file: a recompressed .zst is
	// checked by what it decompresses to.
	var rawLine string
	for _, l := range strings.Split(string(sums), "\n") {
		if strings.HasSuffix(l, "  "+bin) {
			rawLine = l + "\n"
		}
	}
	recompressed := seekableZstd(t, raw, 8192)
	row := geisteroracle.Shared(t, "values.tsv")[0]
	if row["id"] != "0" {
		t.Fatalf("first values.tsv row is of id %s", row["id"])
	}
	p, err := geister.ParseBoard(row["board"])
	if err != nil {
		t.Fatal(err)
	}
	want := uint8(row.Int(t, "value"))
	for _, c := range []struct {
		name    string
		files   map[string][]byte
		corrupt bool
	}{
		{"intact raw", map[string][]byte{bin: raw, SumsFile: sums}, false},
		{"intact zst", map[string][]byte{zst: packed, SumsFile: sums}, false},
		{"flipped raw", map[string][]byte{bin: flipped(raw), SumsFile: sums}, true},
		{"flipped zst", map[string][]byte{zst: flipped(packed), SumsFile: sums}, true},
		{"recompressed zst, manifest of the shipped one", map[string][]byte{zst: recompressed, SumsFile: sums}, false},
		{"recompressed zst, raw sum only", map[string][]byte{zst: recompressed, SumsFile: []byte(rawLine)}, false},
		{"table not listed", map[string][]byte{bin: flipped(raw), SumsFile: []byte("")}, false},
		{"builder's sidecar, intact", map[string][]byte{bin: raw, bin + ".sha256": []byte(rawLine)}, false},
		{"builder's sidecar, flipped raw", map[string][]byte{bin: flipped(raw), bin + ".sha256": []byte(rawLine)}, true},
		{"sidecar and manifest disagree", map[string][]byte{bin: raw, SumsFile: sums, bin + ".sha256": []byte(strings.Replace(rawLine, "7", "8", 1))}, true},
		{"malformed manifest", map[string][]byte{bin: raw, SumsFile: []byte("not a sum  " + bin + "\n")}, true},
		{"manifest lists a table twice", map[string][]byte{bin: raw, SumsFile: []byte(rawLine + strings.Replace(rawLine, "7", "8", 1))}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, b := range c.files {
				if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			tb, closeTB := openTemp(t, dir, Options{})
			defer closeTB()
			got, err := tb.DTW(context.Background(), p)
			switch {
			case c.corrupt && !errors.Is(err, ErrCorrupt):
				t.Errorf("DTW = %d, %v; want ErrCorrupt", got, err)
			case c.corrupt:
				t.Logf("error: %v", err)
			case c.name == "table not listed":
				// Unchecked, so the flip (not at this entry) goes unseen.
				if err != nil {
					t.Errorf("DTW: %v", err)
				}
			case err != nil || got != want:
				t.Errorf("DTW = %d, %v; oracle %d", got, err, want)
			}
		})
	}
}

// TestFrameChecksums: a seek table that carries per-frame checksums (the
// seekable format's optional field, written here by another writer) has
// them checked; a checksum that does not match its frame's decompressed
// bytes fails every read of that frame and no other.
func TestFrameChecksums(t *testing.T) {
	shared := sharedTables(t)
	raw, err := os.ReadFile(filepath.Join(shared, "id000_pb1pr1ob1or1_obsblk.bin"))
	if err != nil {
		t.Fatal(err)
	}
	data := seekableZstd(t, raw, 8192)
	tail := seekTail(t, data)
	st, err := parseSeekTable(data[len(data)-tail:], int64(len(data)))
	if err != nil || st.sums == nil {
		t.Fatalf("seek table %v, checksums %v", err, st != nil && st.sums != nil)
	}
	const bad = 5
	// Entry bad's checksum is bytes 8..12 of its 12-byte seek table entry.
	at := len(data) - tail + seekHeaderSize + 12*bad + 8
	binary.LittleEndian.PutUint32(data[at:], binary.LittleEndian.Uint32(data[at:])^1)
	dir := t.TempDir()
	m := Material{1, 1, 1, 1}
	if err := os.WriteFile(filepath.Join(dir, m.FileName()+".zst"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	tb, closeTB := openTemp(t, dir, Options{})
	defer closeTB()
	ctx := context.Background()
	checked := 0
	for _, f := range []int{bad - 1, bad, bad + 1} {
		for idx := st.dOff[f]; idx < st.dOff[f+1]; idx += 97 {
			p, err := Unrank(m, idx)
			if err != nil {
				continue
			}
			if _, term := p.Terminal(); term {
				continue
			}
			if _, gidx, _ := Rank(p); gidx < st.dOff[f] || gidx >= st.dOff[f+1] {
				continue // stored in another frame
			}
			got, err := tb.DTW(ctx, p)
			switch {
			case f == bad && !errors.Is(err, ErrCorrupt):
				t.Errorf("frame %d entry %d: DTW = %d, %v; want ErrCorrupt", f, idx, got, err)
			case f != bad && (err != nil || got != raw[idx]):
				t.Errorf("frame %d entry %d: DTW = %d, %v; raw byte %d", f, idx, got, err, raw[idx])
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no position probed")
	}
}

// TestWinsInOne: over every values.tsv row, the reference's value is 1
// exactly where winsInOne holds (the arbiter: the oracle's values, and
// FORMAT.md §2's definition of 1), so the check that relies on it never
// refuses an intact table.
func TestWinsInOne(t *testing.T) {
	ones := 0
	for _, r := range geisteroracle.Shared(t, "values.tsv") {
		p, err := geister.ParseBoard(r["board"])
		if err != nil {
			t.Fatal(err)
		}
		v := r.Int(t, "value")
		if (v == 1) != winsInOne(p) {
			t.Errorf("pos %s %s: value %d, winsInOne %v", r["pos_id"], r["board"], v, winsInOne(p))
		}
		if v == 1 {
			ones++
		}
	}
	if ones == 0 {
		t.Fatal("no row of value 1")
	}
	t.Logf("%d rows of value 1", ones)
}
