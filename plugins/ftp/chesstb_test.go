package ftp_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/format/chesstb"
	"github.com/tbfs/tbfs/internal/testenv"
	"github.com/tbfs/tbfs/plugins/host"
	"github.com/tbfs/tbfs/plugins/internal/ftptest"
	"github.com/tbfs/tbfs/plugins/internal/plugintest"
)

// oracleRow is one row of the reference prober's probe.tsv or
// seed_cases.tsv: the arbiter of the sweep.
type oracleRow struct {
	line          int
	fen           string
	wdl, dtz, dtm string
	forms         []string
}

func readOracle(t *testing.T, path string) []oracleRow { return readOracleB(t, path) }

func readOracleB(t testing.TB, path string) []oracleRow {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []oracleRow
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		if line == 1 {
			continue // header
		}
		c := strings.Split(sc.Text(), "\t")
		if len(c) != 7 {
			t.Fatalf("%s:%d: %d columns, want 7", path, line, len(c))
		}
		rows = append(rows, oracleRow{line: line, fen: c[0], wdl: c[1], dtz: c[2], dtm: c[4], forms: strings.Split(c[6], ",")})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

var classes = map[string]int{"WIN": 2, "CURSED_WIN": 1, "DRAW": 0, "BLESSED_LOSS": -1, "LOSE": -2}

// check probes one row and describes every difference from the reference.
// The reference prints distances unsigned; ours carry the side's sign.
// dtzFromPack reports a DTZ the table set keeps only inside a DTC pack.
func check(t *testing.T, tb *chesstb.Tablebase, dir string, r oracleRow) (diffs []string, dtzFromPack bool) {
	pos, err := chess.ParseFEN(r.fen)
	if err != nil {
		t.Fatalf("line %d: %v", r.line, err)
	}
	wdl, ok := classes[r.wdl]
	if !ok {
		t.Fatalf("line %d: class %q", r.line, r.wdl)
	}
	sign := 1
	if wdl < 0 {
		sign = -1
	}
	num := func(s string) (int, bool) {
		if s == "" {
			return 0, false
		}
		v, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("line %d: number %q", r.line, s)
		}
		return sign * v, true
	}
	res, err := tb.Probe(context.Background(), &pos)
	if err != nil {
		return []string{"probe: " + err.Error()}, false
	}
	if !res.HasWDL || res.WDL != wdl {
		diffs = append(diffs, "wdl "+strconv.Itoa(res.WDL)+" want "+strconv.Itoa(wdl))
	}
	dtz, dtzOK := num(r.dtz)
	switch {
	case dtzOK && res.HasDTZ && res.DTZ != dtz:
		diffs = append(diffs, "dtz "+strconv.Itoa(res.DTZ)+" want "+strconv.Itoa(dtz))
	case dtzOK && !res.HasDTZ:
		_, statErr := os.Stat(filepath.Join(dir, "dtz", res.Material+".lzdtz"))
		if errors.Is(res.Unavailable[chesstb.MetricDTZ], chesstb.ErrNoTable) && statErr != nil {
			dtzFromPack = true
		} else {
			diffs = append(diffs, "dtz missing")
		}
	case !dtzOK && res.HasDTZ:
		diffs = append(diffs, "dtz where the reference has none")
	}
	dtm, dtmOK := num(r.dtm)
	switch {
	case dtmOK && res.HasDTM && res.DTM != dtm:
		diffs = append(diffs, "dtm "+strconv.Itoa(res.DTM)+" want "+strconv.Itoa(dtm))
	case dtmOK && !res.HasDTM:
		diffs = append(diffs, "dtm missing")
	case !dtmOK && res.HasDTM && res.DTM != 0:
		diffs = append(diffs, "dtm where the reference has none")
	}
	return diffs, dtzFromPack
}

// sweep serves dir over FTP, opens it through the tbfs-source-ftp plugin
// and probes rows (those of the shipped form, every k-th when there are
// more than max) against the reference's values.
func sweep(t *testing.T, p *host.Plugin, dir string, rows []oracleRow, max int) {
	t.Helper()
	var sel []oracleRow
	for _, r := range rows {
		if slices.Contains(r.forms, "shipped") {
			sel = append(sel, r)
		}
	}
	if len(sel) > max {
		k := (len(sel) + max - 1) / max
		var s []oracleRow
		for i := 0; i < len(sel); i += k {
			s = append(s, sel[i])
		}
		sel = s
	}
	if len(sel) == 0 {
		t.Fatal("no oracle rows selected")
	}
	src, err := p.OpenURL(context.Background(), ftptest.URL(ftptest.Serve(t, dir)))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	tb, err := chesstb.Open(chesstb.Options{}, src)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	bad, pack := 0, 0
	for _, r := range sel {
		diffs, fromPack := check(t, tb, dir, r)
		if fromPack {
			pack++
		}
		if len(diffs) > 0 {
			bad++
			if bad <= 20 {
				t.Errorf("line %d %s: %s", r.line, r.fen, strings.Join(diffs, "; "))
			}
		}
	}
	t.Logf("%d rows probed through the FTP plugin, %d mismatches, %d DTZ values only in a DTC pack", len(sel), bad, pack)
	if bad > 0 {
		t.Errorf("%d of %d rows mismatch the reference", bad, len(sel))
	}
}

// TestChesstbOracleFixture probes every fixture oracle row (a sample of
// 300 under the race detector) through the FTP plugin serving the
// committed fixture tables.
func TestChesstbOracleFixture(t *testing.T) {
	p := plugintest.Load(t, "plugins/ftp/cmd/tbfs-source-ftp", "ftp", host.Options{})
	dir := testenv.Testdata(t, "chesstb")
	for _, file := range []string{"probe.tsv", "seed_cases.tsv"} {
		t.Run(file, func(t *testing.T) {
			max := 1 << 30
			if raceEnabled {
				max = 300
			}
			sweep(t, p, dir, readOracle(t, filepath.Join(dir, "oracle", file)), max)
		})
	}
}

// TestChesstbOracleShared probes a sample of the shared oracle's rows
// through the FTP plugin serving the shipped table set.
func TestChesstbOracleShared(t *testing.T) {
	base := testenv.Shared(t, "chesstb")
	p := plugintest.Load(t, "plugins/ftp/cmd/tbfs-source-ftp", "ftp", host.Options{})
	max := 600
	if raceEnabled || testing.Short() {
		max = 20
	}
	for _, file := range []string{"probe.tsv", "seed_cases.tsv"} {
		t.Run(file, func(t *testing.T) {
			sweep(t, p, filepath.Join(base, "shipped"), readOracle(t, filepath.Join(base, "oracle", file)), max)
		})
	}
}
