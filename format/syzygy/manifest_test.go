package syzygy

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/cespare/xxhash/v2"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/internal/testkit/chesstboracle"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/fssource"
	"github.com/tbfs/tbfs/source/metrics"
	"github.com/tbfs/tbfs/source/mmap"
)

// writeManifests writes a manifest with pages of 1<<shift bytes for every
// table file in dir into out (out == dir: beside the tables). At the
// default page size it goes through Tablebase.Manifest, the API the CLI
// uses.
func writeManifests(t testing.TB, dir, out string, shift uint8) {
	t.Helper()
	ctx := context.Background()
	src, err := mmap.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	tb, err := Open(Options{NoManifests: true}, src)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		k, mat, ok := ParseTableName(e.Name())
		if !ok {
			continue
		}
		var name string
		var data []byte
		if shift == ManifestPageShift {
			name, data, err = tb.Manifest(ctx, k, mat)
		} else {
			var obj source.Object
			if obj, err = src.Open(ctx, e.Name()); err == nil {
				var m *manifest
				if m, err = manifestOf(ctx, obj, shift); err == nil {
					data = m.encode()
				}
				obj.Close()
			}
			name = e.Name()
		}
		if err != nil {
			t.Fatalf("manifest of %s: %v", e.Name(), err)
		}
		if err := os.WriteFile(filepath.Join(out, name+ManifestSuffix), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// fixturesWithManifests copies the fixture tables and writes their
// manifests beside them.
func fixturesWithManifests(t *testing.T, shift uint8) string {
	dir := copyFixtures(t, "")
	writeManifests(t, dir, dir, shift)
	return dir
}

// openWith opens a Tablebase over srcs and closes it with the test.
func openWith(t testing.TB, opts Options, srcs ...source.Source) *Tablebase {
	t.Helper()
	tb, err := Open(opts, srcs...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	return tb
}

// mmapSource opens dir and closes it with the test.
func mmapSource(t testing.TB, dir string) source.Source {
	t.Helper()
	src, err := mmap.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src
}

// checkAllManifested fails unless every table tb opened checks its reads
// against a manifest (and so answered without the whole-file gate).
func checkAllManifested(t *testing.T, tb *Tablebase) {
	t.Helper()
	n := 0
	for key, f := range tb.tables.All() {
		n++
		if f.sums == nil || f.gate != nil {
			t.Errorf("%s%s opened without its manifest: %v", key.mat.name(), key.kind.Ext(), f.sumsIgnored)
		}
	}
	if n == 0 {
		t.Error("no table opened")
	}
}

// TestManifestFixtureOracle sweeps every fixture row with manifests beside
// the tables, at the writer's page size and at the smallest a reader
// accepts (so that reads straddle pages), and with the indexes read lazily:
// the values are Fathom's, and no table waited for its whole-file checksum
// (arbiter: Fathom's rows).
func TestManifestFixtureOracle(t *testing.T) {
	rows := readOracle(t, testenv.Testdata(t, "syzygy", "probe.tsv"))
	for _, shift := range []uint8{ManifestPageShift, minPageShift} {
		dir := fixturesWithManifests(t, shift)
		tb := openWith(t, Options{}, mmapSource(t, dir))
		checkWDLRows(t, tb, rows)
		checkDTZRows(t, tb, rows)
		checkRootRows(t, tb, rows)
		checkAllManifested(t, tb)
	}
	// The indexes read in pages as probes need them (as the largest
	// tables' are), through the manifest's smaller pages.
	saved := eagerIndexBytes
	eagerIndexBytes = 0
	t.Cleanup(func() { eagerIndexBytes = saved }) // after the Tablebases close
	tb := openWith(t, Options{}, mmapSource(t, fixturesWithManifests(t, minPageShift)))
	checkWDLRows(t, tb, rows)
	checkDTZRows(t, tb, rows)
	checkAllManifested(t, tb)
}

// TestSharedManifestOracle sweeps the shared oracle with manifests in a
// folder of their own (Options.Manifests), at the writer's page size
// (arbiter: Fathom).
func TestSharedManifestOracle(t *testing.T) {
	tables := testenv.Shared(t, "syzygy", "tables")
	rows := readOracle(t, testenv.Shared(t, "syzygy", "oracle", "probe.tsv"))
	if raceEnabled {
		rows = chesstboracle.Sample(rows, 300, true)
	}
	sums := t.TempDir()
	writeManifests(t, tables, sums, ManifestPageShift)
	tb := openWith(t, Options{Manifests: mmapSource(t, sums)}, mmapSource(t, tables))
	checkWDLRows(t, tb, rows)
	checkDTZRows(t, tb, rows)
	checkRootRows(t, tb, rows)
	checkAllManifested(t, tb)
}

// flipSource serves its source's objects with the byte at offset at of
// the object called file toggled, as a damaged disk or transfer would.
type flipSource struct {
	source.Source
	file string
	at   int64
}

func (s flipSource) Open(ctx context.Context, name string) (source.Object, error) {
	obj, err := s.Source.Open(ctx, name)
	if err != nil || name != s.file {
		return obj, err
	}
	return flipObject{obj, s.at}, nil
}

type flipObject struct {
	source.Object
	at int64
}

func (o flipObject) ReadAt(ctx context.Context, p []byte, off int64, hint source.Hint) (int, error) {
	n, err := o.Object.ReadAt(ctx, p, off, hint)
	if o.at >= off && o.at < off+int64(n) {
		p[o.at-off] ^= 0x5a
	}
	return n, err
}

// rowsOf returns the rows whose position has material mat ("KRvKR"), in
// either orientation.
func rowsOf(t testing.TB, rows []oracleRow, mat string) []oracleRow {
	var out []oracleRow
	for _, r := range rows {
		pos := mustFEN(t, r.FEN)
		m, _ := materialOf(&pos).canonical()
		if m.name() == mat {
			out = append(out, r)
		}
	}
	return out
}

// probeWant probes the kind-k value of r's position and reports the value
// and whether it is the one the oracle gives.
func probeWant(ctx context.Context, tb *Tablebase, k Kind, r oracleRow, pos *chess.Position) (int, bool, error) {
	if k == KindWDL {
		v, err := tb.WDL(ctx, pos)
		return v, v == tableWDL(r.WDL, r.DTZ), err
	}
	v, err := tb.DTZ(ctx, pos)
	want := sign(r.WDL) * r.DTZ
	if pos.IsCheckmate() {
		want = -1
	}
	return v, v == want, err
}

// checkFlips probes, for each row, the table file (named as in src) with
// its manifest, once clean to see which pages the probe reads, then with a
// byte flipped in the middle of one page it read (the header page and its
// last data page) and of one it did not: a page read gives ErrCorrupt, a
// page not read leaves the oracle's value (arbiter: Fathom's rows; the
// manifest's promise that a probe checks exactly what it reads). A row
// whose value a capture decides reads no value from the table, and must
// keep its value whatever is flipped.
func checkFlips(t *testing.T, src source.Source, opts Options, file string, rows []oracleRow) {
	ctx := context.Background()
	k, _, _ := ParseTableName(file)
	obj, err := src.Open(ctx, file)
	if err != nil {
		t.Fatal(err)
	}
	size := obj.Size()
	obj.Close()
	if len(rows) == 0 {
		t.Fatalf("no rows for %s", file)
	}
	var page int64
	checked := 0
	for _, r := range rows {
		pos := mustFEN(t, r.FEN)
		rec := &recordingSource{Source: src}
		tb := openWith(t, opts, rec)
		if _, ok, err := probeWant(ctx, tb, k, r, &pos); err != nil || !ok {
			t.Fatalf("%s line %d: clean probe: %v (or not the oracle's value)", file, r.Line, err)
		}
		f := tb.openedFile(k, mustMaterial(t, strings.TrimSuffix(file, k.Ext())))
		read := map[int64]bool{}
		var lastData int64 = -1
		if f != nil { // else a capture decided and the table was not needed
			if f.sums == nil {
				t.Fatalf("%s: opened without its manifest: %v", file, f.sumsIgnored)
			}
			page = int64(1) << f.sums.pageShift
		}
		if page == 0 {
			page = int64(1) << minPageShift
		}
		tb.Close() // waits for the opens it started ahead of the probe
		for _, rd := range rec.reads {
			if rd.name != file || rd.off%page != 0 {
				continue // another table, or the embedded checksum's 16 bytes
			}
			for p := rd.off / page; p*page < rd.off+int64(rd.n); p++ {
				read[p] = true
				if rd.hint == source.HintData {
					lastData = p
				}
			}
		}
		last := (size - 1) / page
		unread := int64(-1)
		for p := last - 1; p > 0; p-- {
			if !read[p] {
				unread = p
				break
			}
		}
		// want: 1 ErrCorrupt, 0 the oracle's value, -1 either.
		cases := []struct {
			page int64
			want int
		}{
			// The header page: an error when the probe read a value from
			// the table; either when it only opened it (a DTZ probe of
			// the side not stored, or a background open ahead of the
			// probe, which may need no value from it).
			{0, map[bool]int{true: 1, false: -1}[lastData >= 0]},
			{lastData, 1},
			{unread, 0},
		}
		for _, c := range cases {
			if c.page < 0 || c.page > last {
				continue
			}
			at := min(c.page*page+page/2, size-17)
			tb := openWith(t, opts, flipSource{src, file, at})
			v, ok, err := probeWant(ctx, tb, k, r, &pos)
			corrupt, right := errors.Is(err, ErrCorrupt), err == nil && ok
			if c.want == 1 && !corrupt || c.want == 0 && !right || c.want == -1 && !corrupt && !right {
				t.Errorf("%s line %d %s: byte %d (page %d; want %d: 1 ErrCorrupt, 0 the value, -1 either) flipped: %d, %v", file, r.Line, r.FEN, at, c.page, c.want, v, err)
			}
			tb.Close()
			checked++
		}
	}
	t.Logf("%s: %d rows, %d flips, %d-byte pages", file, len(rows), checked, page)
}

// TestManifestFlippedPages runs checkFlips over every fixture row of the
// larger fixture tables, with the smallest pages so each file has many.
func TestManifestFlippedPages(t *testing.T) {
	// The fixture files are smaller than a first header read: make it
	// tiny, so the data pages are read only by the probes that need them.
	saved := firstHeaderRead
	firstHeaderRead = 64
	t.Cleanup(func() { firstHeaderRead = saved }) // after the Tablebases close
	dir := fixturesWithManifests(t, minPageShift)
	src := mmapSource(t, dir)
	all := readOracle(t, testenv.Testdata(t, "syzygy", "probe.tsv"))
	for _, file := range []string{"KRvKR.rtbw", "KPvK.rtbw", "KPvK.rtbz", "KQvK.rtbz", "KRvK.rtbz"} {
		rows := rowsOf(t, all, strings.TrimSuffix(strings.TrimSuffix(file, ".rtbw"), ".rtbz"))
		if raceEnabled {
			rows = chesstboracle.Sample(rows, 10, true)
		}
		checkFlips(t, src, Options{}, file, rows)
	}
}

// TestSharedManifestFlippedPages is checkFlips on a 13 MiB shared table at
// the writer's page size.
func TestSharedManifestFlippedPages(t *testing.T) {
	tables := testenv.Shared(t, "syzygy", "tables")
	sums := t.TempDir()
	writeManifests(t, tables, sums, ManifestPageShift)
	rows := rowsOf(t, readOracle(t, testenv.Shared(t, "syzygy", "oracle", "probe.tsv")), "KNNvKP")
	rows = chesstboracle.Sample(rows, 40, true)
	if raceEnabled {
		rows = rows[:min(len(rows), 8)]
	}
	checkFlips(t, mmapSource(t, tables), Options{Manifests: mmapSource(t, sums)}, "KNNvKP.rtbw", rows)
}

// coldBytes probes one position of material mat with a fresh Tablebase
// whose tables of that material come through a counting source (the
// metrics wrapper every remote stack has) over dir, the others from
// rest; it returns the bytes read from dir and the probe's answer.
func coldBytes(t *testing.T, dir string, rest source.Source, opts Options, k Kind, r oracleRow) (int64, bool) {
	counted := metrics.Wrap(mmapSource(t, dir), &metrics.Counters{})
	tb := openWith(t, opts, counted, rest)
	pos := mustFEN(t, r.FEN)
	_, ok, err := probeWant(context.Background(), tb, k, r, &pos)
	if err != nil {
		t.Fatalf("line %d: %v", r.Line, err)
	}
	tb.Close()
	return counted.Stats().Bytes, ok
}

// TestManifestFirstProbeBytes counts the bytes a first probe of a 13 MiB
// table reads: without a manifest the whole file (the embedded checksum
// must pass first), with one a small part of it, the manifest included
// (arbiter: the file's size; the value is Fathom's).
func TestManifestFirstProbeBytes(t *testing.T) {
	tables := testenv.Shared(t, "syzygy", "tables")
	const file = "KNNvKP.rtbw"
	info, err := os.Stat(filepath.Join(tables, file))
	if err != nil {
		t.Fatal(err)
	}
	size := info.Size()
	bare, with := t.TempDir(), t.TempDir()
	data, err := os.ReadFile(filepath.Join(tables, file))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{bare, with} {
		if err := os.WriteFile(filepath.Join(d, file), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeManifests(t, with, with, ManifestPageShift)
	rows := rowsOf(t, readOracle(t, testenv.Shared(t, "syzygy", "oracle", "probe.tsv")), "KNNvKP")
	rows = chesstboracle.Sample(rows, 5, true)
	rest := mmapSource(t, tables)
	for _, r := range rows {
		without, ok1 := coldBytes(t, bare, rest, Options{}, KindWDL, r)
		withM, ok2 := coldBytes(t, with, rest, Options{}, KindWDL, r)
		if !ok1 || !ok2 {
			t.Errorf("line %d: not the oracle's value (without a manifest %v, with %v)", r.Line, ok1, ok2)
		}
		if without < size {
			t.Errorf("line %d: without a manifest the first probe read %d bytes of a %d-byte table; the whole-file checksum needs them all", r.Line, without, size)
		}
		if withM > size/16 {
			t.Errorf("line %d: with a manifest the first probe read %d bytes of a %d-byte table", r.Line, withM, size)
		}
		t.Logf("line %d: first probe read %d bytes without a manifest, %d with (%.4f of the file)", r.Line, without, withM, float64(withM)/float64(size))
	}
}

// versionedSource gives every object it opens the version v, as a remote
// transport names an ETag.
type versionedSource struct {
	source.Source
	v string
}

func (s versionedSource) Open(ctx context.Context, name string) (source.Object, error) {
	obj, err := s.Source.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	return versionedObject{obj, s.v}, nil
}

type versionedObject struct {
	source.Object
	v string
}

func (o versionedObject) Version() string { return o.v }

// rehash recomputes a manifest's own hash after a test edited it, as a
// forger would.
func rehash(b []byte) []byte {
	body := b[:len(b)-8]
	return binary.LittleEndian.AppendUint64(append([]byte(nil), body...), xxhash.Sum64(body))
}

// TestManifestNotTrusted gives KRvKR.rtbw manifests that must not be
// used: written for another version or another file of another size,
// damaged, cut short, forged from a damaged copy of the table
// (with a valid own hash), and one for a file with another embedded
// checksum. Each is ignored: the table falls back to the whole-file gate
// and every fixture row of the material gets the oracle's value; over the
// damaged copy the forged manifest still leaves only ErrCorrupt (arbiter:
// Fathom's rows; the gate's checksum).
func TestManifestNotTrusted(t *testing.T) {
	const file = "KRvKR.rtbw"
	dir := fixturesWithManifests(t, minPageShift)
	good, err := os.ReadFile(filepath.Join(dir, file+ManifestSuffix))
	if err != nil {
		t.Fatal(err)
	}
	other, err := os.ReadFile(filepath.Join(dir, "KPvK.rtbw"+ManifestSuffix))
	if err != nil {
		t.Fatal(err)
	}
	table, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	v1 := func() []byte {
		m, err := manifestOf(ctx, versionedObject{memObject(table), "v1"}, minPageShift)
		if err != nil {
			t.Fatal(err)
		}
		return m.encode()
	}()
	damaged := append([]byte(nil), good...)
	damaged[len(damaged)/2] ^= 1
	// A manifest written, without the checksum check, from a copy of the
	// table with one byte changed: self-consistent, but its chunk hashes
	// do not combine to the stored checksum.
	bad := append([]byte(nil), table...)
	bad[len(bad)/2] ^= 0x5a
	forged := func() []byte {
		m, err := manifestOf(ctx, memObject(bad), minPageShift)
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("manifest of a damaged table: %v, want ErrCorrupt", err)
		}
		m = &manifest{size: int64(len(bad)), pageShift: minPageShift, stored: [2]uint64{binary.LittleEndian.Uint64(bad[len(bad)-16:]), binary.LittleEndian.Uint64(bad[len(bad)-8:])}}
		body := int64(len(bad)) &^ 63
		for _, v := range cityCrc256(bad[:body]) {
			m.chunks = binary.LittleEndian.AppendUint64(m.chunks, v)
		}
		for at := 0; at < len(bad); at += 1 << minPageShift {
			m.pages = append(m.pages, xxhash.Sum64(bad[at:min(at+1<<minPageShift, len(bad))]))
		}
		return m.encode()
	}()
	// The good manifest with its checksum and chunk hashes swapped for
	// those of another table: consistent in itself, not this file's.
	swapped := func() []byte {
		m, err := decodeManifest(good)
		if err != nil {
			t.Fatal(err)
		}
		o, err := decodeManifest(other)
		if err != nil {
			t.Fatal(err)
		}
		m.stored, m.chunks = o.stored, o.chunks
		return m.encode()
	}()
	rows := rowsOf(t, readOracle(t, testenv.Testdata(t, "syzygy", "probe.tsv")), "KRvKR")
	for _, c := range []struct {
		name     string
		manifest []byte
		version  string // the object's, "" for none
		table    []byte // the table served, nil for the good one
	}{
		{"other version", v1, "v2", nil},
		{"another file's", other, "", nil},
		{"damaged", damaged, "", nil},
		{"truncated", good[:len(good)-9], "", nil},
		{"empty", []byte{}, "", nil},
		{"checksum of another table", swapped, "", nil},
		{"a page hash changed", rehash(func() []byte { b := append([]byte(nil), good...); b[len(b)-20] ^= 1; return b }()), "", nil},
		{"forged from a damaged copy", forged, "", bad},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := t.TempDir()
			tableBytes := table
			if c.table != nil {
				tableBytes = c.table
			}
			if err := os.WriteFile(filepath.Join(d, file), tableBytes, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(d, file+ManifestSuffix), c.manifest, 0o644); err != nil {
				t.Fatal(err)
			}
			var src source.Source = mmapSource(t, d)
			if c.version != "" {
				src = versionedSource{src, c.version}
			}
			tb := openWith(t, Options{}, src, mmapSource(t, dir))
			wrong, corrupt := 0, 0
			for _, r := range rows {
				pos := mustFEN(t, r.FEN)
				v, ok, err := probeWant(ctx, tb, KindWDL, r, &pos)
				switch {
				case (c.table != nil || c.name == "a page hash changed") && errors.Is(err, ErrCorrupt):
					// The damaged table behind a forged manifest, or a
					// page the forger lied about: an error, never a value.
					corrupt++
				case err != nil || !ok:
					wrong++
					if wrong < 5 {
						t.Errorf("line %d %s: %d, %v; the oracle's value expected", r.Line, r.FEN, v, err)
					}
				}
			}
			f := tb.openedFile(KindWDL, mustMaterial(t, "KRvKR"))
			switch {
			case c.name == "a page hash changed":
				// Self-consistent and bound to this file, so used: the
				// page it lies about fails wherever it is read (here at
				// open, the file being one header read).
				if f != nil && f.sums == nil || corrupt == 0 {
					t.Errorf("manifest with one wrong page hash: not used, or no ErrCorrupt")
				}
			case c.table != nil:
				if f != nil && f.sums != nil || corrupt == 0 {
					t.Errorf("forged manifest used, or no ErrCorrupt from the damaged table")
				}
			case f == nil:
				t.Errorf("table not opened")
			case f.sums != nil || f.gate == nil:
				t.Errorf("manifest used, or no whole-file gate")
			default:
				t.Logf("ignored: %v", f.sumsIgnored)
			}
		})
	}
}

// TestRequireManifest refuses a table without a usable manifest as
// corrupt, and answers from one with it (arbiter: Fathom's rows).
func TestRequireManifest(t *testing.T) {
	rows := rowsOf(t, readOracle(t, testenv.Testdata(t, "syzygy", "probe.tsv")), "KRvKR")[:5]
	ctx := context.Background()
	with := openWith(t, Options{RequireManifest: true}, mmapSource(t, fixturesWithManifests(t, ManifestPageShift)))
	without := openWith(t, Options{RequireManifest: true}, mmapSource(t, testenv.Testdata(t, "syzygy")))
	for _, r := range rows {
		pos := mustFEN(t, r.FEN)
		if _, ok, err := probeWant(ctx, with, KindWDL, r, &pos); err != nil || !ok {
			t.Errorf("line %d with manifests: %v (or not the oracle's value)", r.Line, err)
		}
		if _, _, err := probeWant(ctx, without, KindWDL, r, &pos); !errors.Is(err, ErrCorrupt) {
			t.Errorf("line %d without manifests: %v, want ErrCorrupt", r.Line, err)
		}
	}
}

// TestManifestOfCorruptTable refuses to write a manifest for a table
// whose embedded checksum does not match (arbiter: tbcheck's checksum,
// which the fixture files pass).
func TestManifestOfCorruptTable(t *testing.T) {
	dir := copyFixtures(t, "KPvK.rtbw", 3000)
	tb := openWith(t, Options{}, mmapSource(t, dir))
	if _, _, err := tb.Manifest(context.Background(), KindWDL, "KPvK"); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Manifest of a damaged table: %v, want ErrCorrupt", err)
	}
	name, b, err := tb.Manifest(context.Background(), KindDTZ, "KPvK")
	if err != nil || name != "KPvK.rtbz" || len(b) == 0 {
		t.Fatalf("Manifest of an intact table: %q, %d bytes, %v", name, len(b), err)
	}
}

// FuzzManifest hands arbitrary bytes to the manifest parser, and then to a
// table opened with them as its manifest: the parser never panics, what it
// accepts re-encodes to the same bytes with counts that fit its size and
// chunk hashes that combine to its checksum, and a probe with any manifest
// at all gives the oracle's value or ErrCorrupt (arbiter: Fathom's rows).
func FuzzManifest(f *testing.F) {
	const file = "KRvKR.rtbw"
	table, err := os.ReadFile(testenv.Testdata(f, "syzygy", file))
	if err != nil {
		f.Fatal(err)
	}
	rows := rowsOf(f, readOracle(f, testenv.Testdata(f, "syzygy", "probe.tsv")), "KRvKR")
	rows = chesstboracle.Sample(rows, 4, true)
	for _, shift := range []uint8{minPageShift, ManifestPageShift} {
		m, err := manifestOf(context.Background(), memObject(table), shift)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(m.encode())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if m, err := decodeManifest(data); err == nil {
			if !bytes.Equal(m.encode(), data) {
				t.Fatal("an accepted manifest does not re-encode to itself")
			}
			chunks, pages := shapeOf(m.size, m.pageShift)
			if int64(len(m.chunks)) != 32*chunks || int64(len(m.pages)) != pages {
				t.Fatalf("%d chunk bytes, %d pages for a %d-byte file", len(m.chunks), len(m.pages), m.size)
			}
			if a, b := cityCrc128(m.chunks); [2]uint64{a, b} != m.stored {
				t.Fatal("accepted chunk hashes that do not combine to the checksum")
			}
		}
		fsys := fstest.MapFS{file: {Data: table}, file + ManifestSuffix: {Data: data}}
		tb, err := Open(Options{}, fssource.New(fsys, "fuzz"), mmapSource(t, testenv.Testdata(t, "syzygy")))
		if err != nil {
			t.Fatal(err)
		}
		defer tb.Close()
		for _, r := range rows {
			pos := mustFEN(t, r.FEN)
			v, ok, err := probeWant(context.Background(), tb, KindWDL, r, &pos)
			if err != nil && !errors.Is(err, ErrCorrupt) || err == nil && !ok {
				t.Fatalf("line %d: %d, %v", r.Line, v, err)
			}
		}
	})
}

// TestManifestChunkBoundaries writes manifests of synthetic files around
// the 16 MiB checksum chunk (no shared table is that large): a body of
// exactly one chunk, one chunk and 64 bytes (a second chunk shorter than
// the hash's long form), and one chunk and 4 KiB. The embedded checksum is
// the one fileChecksum computes (which matches tbcheck on every shared
// file, TestSharedChecksums); the manifest must accept the file, decode,
// and hand out through its pages exactly the file's bytes at every kind of
// offset, and refuse the file with one byte changed (arbiters: the file's
// bytes; the checksum).
func TestManifestChunkBoundaries(t *testing.T) {
	ctx := context.Background()
	bodies := []int{checksumChunk, checksumChunk + 64, checksumChunk + 4096}
	if raceEnabled {
		bodies = bodies[1:2] // two chunks, the second short: the slow hashes once
	}
	for _, body := range bodies {
		file := make([]byte, body+16)
		for i := range body {
			file[i] = byte(i*7 + i>>13)
		}
		got, _, err := fileChecksum(ctx, memObject(file))
		if err != nil {
			t.Fatal(err)
		}
		binary.LittleEndian.PutUint64(file[body:], got[0])
		binary.LittleEndian.PutUint64(file[body+8:], got[1])
		m, err := manifestOf(ctx, memObject(file), ManifestPageShift)
		if err != nil {
			t.Fatalf("body %d: %v", body, err)
		}
		m, err = decodeManifest(m.encode())
		if err != nil {
			t.Fatalf("body %d: %v", body, err)
		}
		rd := &checkedObject{Object: memObject(file), m: m}
		for _, r := range [][2]int{{0, 64}, {1 << 16, 1}, {1<<16 - 3, 6}, {checksumChunk - 10, 20}, {body - 8, 24}, {body, 16}, {0, len(file)}} {
			buf := make([]byte, r[1])
			n, err := rd.ReadAt(ctx, buf, int64(r[0]), source.HintData)
			if err != nil || n != r[1] || !bytes.Equal(buf, file[r[0]:r[0]+r[1]]) {
				t.Errorf("body %d: read %v: %d, %v, or other bytes", body, r, n, err)
			}
		}
		file[body-100] ^= 1
		if _, err := manifestOf(ctx, memObject(file), ManifestPageShift); !errors.Is(err, ErrCorrupt) {
			t.Errorf("body %d: manifest of a changed file: %v, want ErrCorrupt", body, err)
		}
		buf := make([]byte, 10)
		if _, err := rd.ReadAt(ctx, buf, int64(body-105), source.HintData); !errors.Is(err, ErrCorrupt) {
			t.Errorf("body %d: read of a changed page: %v, want ErrCorrupt", body, err)
		}
	}
}
