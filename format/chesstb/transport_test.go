package chesstb

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/tbfs/tbfs/internal/testenv"
	"github.com/tbfs/tbfs/source"
	srchttp "github.com/tbfs/tbfs/source/http"
	"github.com/tbfs/tbfs/source/http/httptest"
	"github.com/tbfs/tbfs/source/s3"
	"github.com/tbfs/tbfs/source/s3/s3test"
)

// transportRows is what each transport sweep checks: every shared oracle
// row in shipped form, or an even slice of each file under the race
// detector or -short.
func transportRows(t *testing.T) (dir string, rows []oracleRow) {
	t.Helper()
	n := 1 << 30
	switch {
	case raceEnabled:
		n = 15
	case testing.Short():
		n = 250
	}
	base := testenv.Shared(t, "chesstb")
	for _, file := range []string{"probe.tsv", "children.tsv", "seed_cases.tsv"} {
		var sel []oracleRow
		for _, r := range readOracle(t, filepath.Join(base, "oracle", file), file == "children.tsv") {
			if r.hasForm("shipped") {
				sel = append(sel, r)
			}
		}
		rows = append(rows, sample(sel, n)...)
	}
	return filepath.Join(base, "shipped"), rows
}

// sweepSource runs the sample through a Tablebase over src.
func sweepSource(t *testing.T, dir string, rows []oracleRow, src source.Source) {
	t.Helper()
	tb, err := Open(Options{}, src)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	n, pack := checkRows(t, tb, dir, rows)
	t.Logf("%d rows compared, %d DTZ values left to the DTC pack", n, pack)
}

func TestHTTPTransportSweep(t *testing.T) {
	dir, rows := transportRows(t)
	src, err := srchttp.New(httptest.Serve(t, dir), srchttp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	sweepSource(t, dir, rows, src)
}

func TestS3TransportSweep(t *testing.T) {
	dir, rows := transportRows(t)
	srv, _ := s3test.ServeDir(t, dir)
	src, err := s3.New(context.Background(), srv.Config("tbfs", ""))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	sweepSource(t, dir, rows, src)
}
