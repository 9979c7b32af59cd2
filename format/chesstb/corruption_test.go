package chesstb

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/fssource"
	"github.com/tbfs/tbfs/source/mmap"
)

// damagedSource serves one object from memory (a damaged copy) and every
// other name from the wrapped source.
type damagedSource struct {
	source.Source
	name string
	data []byte
}

func (d *damagedSource) Open(ctx context.Context, name string) (source.Object, error) {
	if name == d.name {
		return memObject(d.data), nil
	}
	return d.Source.Open(ctx, name)
}

func (d *damagedSource) Close() error { return nil }

// corruption is one damaged copy of a table file.
type corruption struct {
	kind   Kind
	file   string // object name, e.g. "dtz/KQKR.lzdtz"
	intact []byte
	what   string // e.g. "flip 0x2a at 17 (header)"
	data   []byte
}

// sweepMaterials are the materials whose every table kind the sweep damages:
// pawnless (KQKR, KBNK) and pawnful (KPK, KRKP) ones, a symmetric one with a
// single stored colour (KPKP), a 3-man and 4-man mix with dropped frames.
var sweepMaterials = []string{"KQKR", "KRKP", "KBNK", "KPKP", "KPK"}

// corruptions builds the seeded damaged copies of every table file of mat
// found in dir: flips half in the first 256 bytes (the frame headers, value
// maps and block offsets) and half anywhere, then truncations, an
// extension, and another material's file of the same kind in its place.
func corruptions(t *testing.T, dir, mat string, flips int, rng *rand.Rand) []corruption {
	t.Helper()
	var out []corruption
	for k := range numKinds {
		name := kindInfo[k].dir + "/" + mat + kindInfo[k].ext
		intact, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		add := func(what string, data []byte) {
			out = append(out, corruption{kind: k, file: name, intact: intact, what: what, data: data})
		}
		for i := range flips {
			region, limit := "header", min(256, len(intact))
			if i%2 == 1 {
				region, limit = "anywhere", len(intact)
			}
			off := rng.IntN(limit)
			x := byte(1 + rng.IntN(255))
			b := append([]byte(nil), intact...)
			b[off] ^= x
			add(fmt.Sprintf("flip ^%#02x at %d (%s)", x, off, region), b)
		}
		// A cut that keeps the size 8 past a multiple of 64, as the format
		// wants, so the size check alone does not catch it; and a cut
		// anywhere.
		cut := (int64(rng.IntN(len(intact))) &^ 63) + 8
		if cut < int64(len(intact)) {
			add(fmt.Sprintf("truncated to %d aligned bytes", cut), append([]byte(nil), intact[:cut]...))
		}
		cut = int64(rng.IntN(len(intact)))
		add(fmt.Sprintf("truncated to %d bytes", cut), append([]byte(nil), intact[:cut]...))
		ext := make([]byte, 64)
		for i := range ext {
			ext[i] = byte(rng.UintN(256))
		}
		add("extended by 64 bytes", append(append([]byte(nil), intact...), ext...))
		// Another material's table of the same kind under this one's name:
		// a whole, well-formed file whose own checksum holds.
		for _, other := range sweepMaterials {
			b, err := os.ReadFile(filepath.Join(dir, kindInfo[k].dir, other+kindInfo[k].ext))
			if other != mat && err == nil {
				add("swapped with "+other, b)
				break
			}
		}
	}
	return out
}

// answers is everything the sweep asks the tables about one position: the
// full probe and each metric's own entry point, as value or error.
type answers struct {
	res                    Result
	resErr                 error
	wdl, dtz, dtm, dtm50   int
	wdlErr, dtzErr, dtmErr error
	dtm50Err, dtcErr       error
	dtc                    DTC
}

// askAll asks the full probe and, when each is set, every metric's own
// entry point too.
func askAll(ctx context.Context, tb *Tablebase, pos *chess.Position, each bool) answers {
	var a answers
	a.res, a.resErr = tb.Probe(ctx, pos)
	if !each {
		return a
	}
	a.wdl, a.wdlErr = tb.WDL(ctx, pos)
	a.dtz, a.dtzErr = tb.DTZ(ctx, pos)
	a.dtm, a.dtmErr = tb.DTM(ctx, pos)
	a.dtm50, a.dtm50Err = tb.DTM50(ctx, pos)
	a.dtc, a.dtcErr = tb.DTC(ctx, pos)
	return a
}

// wrongValues counts the answers of got that are values differing from the
// intact tables' answers in want (or values where the intact tables gave
// none). An error is never wrong.
func wrongValues(got, want *answers) (n int, first string) {
	note := func(what string, g, w any) {
		if n == 0 {
			first = fmt.Sprintf("%s %v, intact %v", what, g, w)
		}
		n++
	}
	if got.resErr == nil {
		g, w := &got.res, &want.res
		if want.resErr != nil {
			note("Probe", g, want.resErr)
		} else {
			if g.Checkmate != w.Checkmate || g.Stalemate != w.Stalemate {
				note("Probe board flags", g, w)
			}
			type metric struct {
				name     string
				has      bool
				wantHas  bool
				gv, wv   any
				metricID Metric
			}
			for _, m := range []metric{
				{"WDL", g.HasWDL, w.HasWDL, g.WDL, w.WDL, MetricWDL},
				{"DTZ", g.HasDTZ, w.HasDTZ, g.DTZ, w.DTZ, MetricDTZ},
				{"DTM", g.HasDTM, w.HasDTM, g.DTM, w.DTM, MetricDTM},
				{"DTM50", g.HasDTM50, w.HasDTM50, [2]int{g.DTM50, int(g.DTM50Class)}, [2]int{w.DTM50, int(w.DTM50Class)}, MetricDTM50},
				{"DTC", g.HasDTC, w.HasDTC, [2]any{g.DTC, g.DTCClass}, [2]any{w.DTC, w.DTCClass}, MetricDTC},
			} {
				if m.has && (!m.wantHas || m.gv != m.wv) {
					note("Probe "+m.name, m.gv, m.wv)
				}
			}
		}
	}
	for _, m := range []struct {
		name       string
		g, w       any
		gErr, wErr error
	}{
		{"WDL()", got.wdl, want.wdl, got.wdlErr, want.wdlErr},
		{"DTZ()", got.dtz, want.dtz, got.dtzErr, want.dtzErr},
		{"DTM()", got.dtm, want.dtm, got.dtmErr, want.dtmErr},
		{"DTM50()", got.dtm50, want.dtm50, got.dtm50Err, want.dtm50Err},
		{"DTC()", got.dtc, want.dtc, got.dtcErr, want.dtcErr},
	} {
		if m.gErr == nil && (m.wErr != nil || m.g != m.w) {
			note(m.name, m.g, m.w)
		}
	}
	return n, first
}

// catchKind says which means reported a damaged table: the error that
// stopped a value, by the check that raised it.
func catchKind(err error) string {
	var fe *FileError
	switch {
	case errors.Is(err, errBlockHash):
		return "manifest"
	case errors.Is(err, errChecksum):
		return "format checksum"
	case errors.Is(err, errInvariant):
		return "answer invariant"
	case errors.Is(err, ErrCorrupt) && errors.As(err, &fe) && fe.Block < 0:
		return "header/open"
	case errors.Is(err, ErrCorrupt):
		return "block decode"
	case unknownErr(err):
		return "unresolved"
	case errors.Is(err, ErrUnsupported):
		return "unsupported"
	}
	return "other"
}

// meansAlone reports which integrity means, each on its own, would refuse
// a damaged copy of a kind-k table of mat: header validation (the header
// does not parse), the format's checksum (the stored XXH64 does not
// match), the manifest (a byte it covers differs: the size, the header, a
// block, each hashed at the intact file's layout and compared with the
// manifest written from the intact file).
func meansAlone(t *testing.T, k Kind, mat string, intact, damaged []byte) (header, checksum, manifest bool) {
	t.Helper()
	ctx := context.Background()
	m, err := parseMaterial(mat)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := newIndexConfig(m)
	if err != nil {
		t.Fatal(err)
	}
	_, herr := parseHeader(ctx, memObject(damaged), k, cfg)
	header = herr != nil
	checksum = verifyChecksum(ctx, memObject(damaged)) != nil
	name := kindInfo[k].dir + "/" + mat + kindInfo[k].ext + ManifestSuffix
	obj, err := sweepManifests.Open(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	raw, err := source.ReadAll(ctx, obj, source.HintIndex)
	if err != nil {
		t.Fatal(err)
	}
	mf, err := decodeManifest(raw)
	if err != nil {
		t.Fatal(err)
	}
	h, err := parseHeader(ctx, memObject(intact), k, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(damaged)) != mf.size || xxhash.Sum64(damaged[:mf.headerLen]) != mf.headerHash {
		return header, checksum, true
	}
	for c := range 2 {
		f := &h.frames[c]
		if !f.stored() {
			continue
		}
		for b := range f.blockCnt {
			lo, hi := f.dataOff+int64(f.offsets.get(b)), f.dataOff+int64(f.offsets.get(b+1))
			if xxhash.Sum64(damaged[lo:hi]) != mf.blocks[c][b] {
				return header, checksum, true
			}
		}
	}
	return header, checksum, false
}

// firstErr is the first error among a's answers.
func (a *answers) firstErr() error {
	if a.resErr != nil {
		return a.resErr
	}
	for _, e := range a.res.Unavailable {
		if e != nil {
			return e
		}
	}
	for _, e := range []error{a.wdlErr, a.dtzErr, a.dtmErr, a.dtm50Err, a.dtcErr} {
		if e != nil {
			return e
		}
	}
	return nil
}

// sweepPositions is what the sweep probes for mat: the material's oracle
// rows (every clock) and random legal positions.
func sweepPositions(t *testing.T, rows []oracleRow, mat string, random int, seed uint64, stride int) ([]chess.Position, map[int]oracleRow) {
	t.Helper()
	var out []chess.Position
	oracle := map[int]oracleRow{}
	for i, r := range rows {
		if i%stride != 0 {
			continue
		}
		pos := r.position(t)
		if n := canonicalNode(&pos); n.mat.name() != mat {
			continue
		}
		oracle[len(out)] = r
		out = append(out, pos)
	}
	return append(out, randomPositions(t, []string{mat}, random, seed)...), oracle
}

// sweepConfig is one way of opening the damaged tables.
type sweepConfig struct {
	name string
	opts Options
	// mustBeExact: the sweep fails on any wrong value in this
	// configuration.
	mustBeExact bool
}

// sweepConfigs are the ways the sweep opens damaged tables: with the
// structural checks alone (header validation, block decoding, answer
// invariants: the reference prober's unchecked reads, a measurement); as
// they ship, with each table's stored checksum confirmed before its
// answers; and with integrity manifests written from the intact tables.
// The last two must give no wrong value.
func sweepConfigs(t *testing.T, base source.Source) []sweepConfig {
	t.Helper()
	if sweepManifests == nil {
		sweepManifests = manifestSource(t, base, sweepMaterials)
	}
	asserted := []sweepConfig{
		{name: "checksum", mustBeExact: true, opts: Options{NoManifests: true}},
		{name: "manifest", mustBeExact: true, opts: Options{Manifests: sweepManifests}},
	}
	if raceEnabled {
		// The race pass checks the guarantees; the measurement without
		// them runs in the plain pass.
		return asserted
	}
	return append([]sweepConfig{{name: "structural only", opts: Options{NoManifests: true, SkipChecksums: true}}}, asserted...)
}

var sweepManifests source.Source

// manifestSource writes the manifest of every table of mats in base into
// an in-memory source.
func manifestSource(t *testing.T, base source.Source, mats []string) source.Source {
	t.Helper()
	tb, err := Open(Options{NoManifests: true}, base)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	files := fstest.MapFS{}
	for _, mat := range mats {
		for k := range numKinds {
			b, err := tb.Manifest(context.Background(), k, mat)
			if errors.Is(err, ErrNoTable) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			files[kindInfo[k].dir+"/"+mat+kindInfo[k].ext+ManifestSuffix] = &fstest.MapFile{Data: b}
		}
	}
	return fssource.New(files, "manifests")
}

// TestCorruptionSweep damages copies of every table kind of several
// materials (seeded byte flips, half in the first 256 bytes, half anywhere;
// aligned and unaligned truncations; an extension; a swap with another
// material's file) and probes each material's oracle rows and random
// positions through every entry point. The arbiter is the intact tables,
// which match the reference's oracle rows (checked here too): a probe of a
// damaged table must give the intact answer or an error, never another
// value. That is asserted for the tables as they ship (each table's stored
// checksum confirmed before its answers) and with manifests (written from
// the intact tables); with the structural checks alone the wrong values
// left are logged. Each trial logs which check stopped it first, and each
// corruption which means (header validation, format checksum, manifest)
// would refuse it on its own. It takes about 90 s on two cores; under the
// race detector only the asserted configurations run, with two flips per
// file and a sixth of the oracle rows.
func TestCorruptionSweep(t *testing.T) {
	if testing.Short() {
		t.Skip("sweep")
	}
	shipped := testenv.Shared(t, "chesstb", "shipped")
	rows := readOracle(t, filepath.Join(testenv.Shared(t, "chesstb", "oracle"), "probe.tsv"), false)
	// Every position is probed in full; every eachEvery-th one through
	// each metric's own entry point as well.
	flips, random, eachEvery, stride := 8, 100, 4, 1
	if raceEnabled {
		flips, random, stride = 2, 20, 6
	}
	base, err := mmap.New(shipped)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { base.Close() })
	ctx := context.Background()
	intact, err := Open(Options{}, base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { intact.Close() })

	start := time.Now()
	type tally struct {
		trials, wrongTrials, wrong, caught int
		by                                 map[string]int
		took                               time.Duration
	}
	totals := map[string]*tally{}
	for _, cfg := range sweepConfigs(t, base) {
		totals[cfg.name] = &tally{by: map[string]int{}}
	}
	// alone counts, per means, the corruptions it refuses on its own.
	alone := map[string]int{}
	corruptionCount := 0
	rng := rand.New(rand.NewPCG(26, 2026))
	for mi, mat := range sweepMaterials {
		positions, oracle := sweepPositions(t, rows, mat, random, uint64(100+mi), stride)
		want := make([]answers, len(positions))
		for i := range positions {
			want[i] = askAll(ctx, intact, &positions[i], i%eachEvery == 0)
			if r, ok := oracle[i]; ok {
				checkIntactAgainstOracle(t, r, &want[i].res, want[i].resErr)
			}
		}
		for _, c := range corruptions(t, shipped, mat, flips, rng) {
			corruptionCount++
			h, cs, mf := meansAlone(t, c.kind, mat, c.intact, c.data)
			for means, caught := range map[string]bool{"header validation": h, "format checksum": cs, "manifest": mf, "none of these": !h && !cs && !mf} {
				if caught {
					alone[means]++
				}
			}
			for _, cfg := range sweepConfigs(t, base) {
				tl := totals[cfg.name]
				tl.trials++
				t0 := time.Now()
				src := &damagedSource{Source: base, name: c.file, data: c.data}
				tb, err := Open(cfg.opts, src)
				if err != nil {
					t.Fatal(err)
				}
				wrong, caughtBy := 0, ""
				var first string
				for i := range positions {
					got := askAll(ctx, tb, &positions[i], i%eachEvery == 0)
					n, f := wrongValues(&got, &want[i])
					if n > 0 && wrong == 0 {
						first = fmt.Sprintf("%s: %s", positions[i].FEN(), f)
					}
					wrong += n
					if caughtBy == "" {
						if err := got.firstErr(); err != nil && want[i].firstErr() == nil {
							caughtBy = catchKind(err)
						}
					}
				}
				tb.Close()
				tl.took += time.Since(t0)
				tl.wrong += wrong
				if wrong > 0 {
					tl.wrongTrials++
					t.Logf("%s: %s %s: %d wrong values, first %s", cfg.name, c.file, c.what, wrong, first)
				}
				if caughtBy != "" {
					tl.caught++
					tl.by[caughtBy]++
				}
			}
		}
	}
	t.Logf("each means alone, of %d corruptions: header validation refuses %d, the format checksum %d, the manifest %d; none of them %d",
		corruptionCount, alone["header validation"], alone["format checksum"], alone["manifest"], alone["none of these"])
	for _, cfg := range sweepConfigs(t, base) {
		tl := totals[cfg.name]
		var by []string
		for k, v := range tl.by {
			by = append(by, fmt.Sprintf("%s %d", k, v))
		}
		sort.Strings(by)
		t.Logf("%s (%v): %d corruptions, %d gave wrong values (%d values); %d reported by an error (first error per trial: %s)",
			cfg.name, tl.took.Round(time.Millisecond), tl.trials, tl.wrongTrials, tl.wrong, tl.caught, strings.Join(by, ", "))
		if cfg.mustBeExact && tl.wrong > 0 {
			t.Errorf("%s: %d wrong values from damaged tables", cfg.name, tl.wrong)
		}
	}
	t.Logf("sweep took %v", time.Since(start).Round(time.Millisecond))
}

// checkIntactAgainstOracle makes sure the arbiter is right where the
// reference's own answer is known.
func checkIntactAgainstOracle(t *testing.T, r oracleRow, res *Result, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("line %d %s: intact tables fail: %v", r.line, r.fen, err)
	}
	wdl, dtz, dtzOK, dtm, dtmOK := r.expected(t)
	if res.WDL != wdl || (dtzOK && (!res.HasDTZ || res.DTZ != dtz)) || (dtmOK && (!res.HasDTM || res.DTM != dtm)) {
		t.Fatalf("line %d %s: intact tables give wdl %d dtz %d dtm %d, oracle %s %s %s", r.line, r.fen, res.WDL, res.DTZ, res.DTM, r.wdl, r.dtz, r.dtm)
	}
}

// TestMetricPrefersPack: DTM and DTZ read the packs first exactly as Probe
// does, so a damaged standalone dtm/ or dtz/ file that Probe never reads
// does not fail them. Arbiter: the oracle rows (from the reference prober
// over the same tables).
func TestMetricPrefersPack(t *testing.T) {
	shipped := testenv.Shared(t, "chesstb", "shipped")
	rows := readOracle(t, filepath.Join(testenv.Shared(t, "chesstb", "oracle"), "probe.tsv"), false)
	base, err := mmap.New(shipped)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { base.Close() })
	ctx := context.Background()
	for _, tc := range []struct {
		file, mat string
		metric    Metric
	}{
		{"dtm/KQKR.lzdtm", "KQKR", MetricDTM}, // DTM from the DTM50 pack
		{"dtm/KRKP.lzdtm", "KRKP", MetricDTM},
		{"dtz/KRKP.lzdtz", "KRKP", MetricDTZ}, // DTZ from the DTC pack
		{"dtz/KQKR.lzdtz", "KQKR", MetricDTZ}, // DTZ from the DTM50 pack's draw flip
	} {
		t.Run(tc.file, func(t *testing.T) {
			intact, err := os.ReadFile(filepath.Join(shipped, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			bad := append([]byte(nil), intact...)
			bad[0] ^= 0xff // bad magic: the file cannot open
			tb, err := Open(Options{}, &damagedSource{Source: base, name: tc.file, data: bad})
			if err != nil {
				t.Fatal(err)
			}
			defer tb.Close()
			n := 0
			for _, r := range rows {
				pos := r.position(t)
				if canonicalNode(&pos).mat.name() != tc.mat {
					continue
				}
				_, dtz, dtzOK, dtm, dtmOK := r.expected(t)
				want, ok := dtm, dtmOK
				get := tb.DTM
				if tc.metric == MetricDTZ {
					want, ok, get = dtz, dtzOK, tb.DTZ
				}
				if !ok {
					continue
				}
				got, err := get(ctx, &pos)
				if err != nil || got != want {
					t.Errorf("line %d %s: %s %d, %v; oracle %d", r.line, r.fen, tc.metric, got, err, want)
				}
				n++
			}
			if n == 0 {
				t.Fatal("no oracle rows")
			}
		})
	}
}
