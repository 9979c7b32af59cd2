package ftp_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/format/chesstb"
	"github.com/tbfs/tbfs/internal/testkit/chesstboracle"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/plugins/host"
	"github.com/tbfs/tbfs/plugins/internal/ftptest"
	"github.com/tbfs/tbfs/plugins/internal/plugintest"
)

// check probes one row and describes every difference from the reference.
// The reference prints distances unsigned; ours carry the side's sign.
// dtzFromPack reports a DTZ the table set keeps only inside a DTC pack.
func check(t *testing.T, tb *chesstb.Tablebase, dir string, r chesstboracle.Row) (diffs []string, dtzFromPack bool) {
	pos, err := chess.ParseFEN(r.FEN)
	if err != nil {
		t.Fatalf("%s: %v", r.Where, err)
	}
	wdl, wantDTZ, wantDTM := r.Want(t)
	res, err := tb.Probe(context.Background(), &pos)
	if err != nil {
		return []string{"probe: " + err.Error()}, false
	}
	if !res.HasWDL || res.WDL != wdl {
		diffs = append(diffs, "wdl "+strconv.Itoa(res.WDL)+" want "+strconv.Itoa(wdl))
	}
	dtz, dtzOK := deref(wantDTZ)
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
	dtm, dtmOK := deref(wantDTM)
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

// deref splits an optional expected distance into value and presence.
func deref(p *int) (int, bool) {
	if p == nil {
		return 0, false
	}
	return *p, true
}

// sweep serves dir over FTP, opens it through the tbfs-source-ftp plugin
// and probes rows (those of the shipped form, every k-th when there are
// more than max) against the reference's values.
func sweep(t *testing.T, p *host.Plugin, dir string, rows []chesstboracle.Row, max int) {
	t.Helper()
	var sel []chesstboracle.Row
	for _, r := range rows {
		if r.HasForm("shipped") {
			sel = append(sel, r)
		}
	}
	if len(sel) > max {
		k := (len(sel) + max - 1) / max
		var s []chesstboracle.Row
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
				t.Errorf("%s %s: %s", r.Where, r.FEN, strings.Join(diffs, "; "))
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
			sweep(t, p, dir, chesstboracle.Read(t, filepath.Join(dir, "oracle", file)), max)
		})
	}
}

// TestChesstbOracleShared probes every shared oracle row (a sample under
// the race detector or -short) through the FTP plugin serving the shipped
// table set.
func TestChesstbOracleShared(t *testing.T) {
	base := testenv.Shared(t, "chesstb")
	p := plugintest.Load(t, "plugins/ftp/cmd/tbfs-source-ftp", "ftp", host.Options{})
	max := 1 << 30
	if raceEnabled || testing.Short() {
		max = 20
	}
	for _, file := range []string{"probe.tsv", "seed_cases.tsv"} {
		t.Run(file, func(t *testing.T) {
			sweep(t, p, filepath.Join(base, "shipped"), chesstboracle.Read(t, filepath.Join(base, "oracle", file)), max)
		})
	}
}
