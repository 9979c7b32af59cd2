package chesstb

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/source"
	srchttp "github.com/tbfs/tbfs/source/http"
	"github.com/tbfs/tbfs/source/http/mirrortest"
	"github.com/tbfs/tbfs/source/s3"
	"github.com/tbfs/tbfs/source/s3/s3test"
	"github.com/tbfs/tbfs/source/stack"
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
	src, err := srchttp.New(mirrortest.Serve(t, dir), srchttp.Options{})
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

// stackSweep runs the sample through Tablebases over the source stack the
// front ends use (cache, listing cache, retry, limit), which is where a
// probe's tables are opened at once and its blocks fetched ahead: first
// with a fresh stack and Tablebase for each of the first rows, so every
// one of them is a cold probe, then through one shared Tablebase.
func stackSweep(t *testing.T, dir string, rows []oracleRow, open func() source.Source) {
	t.Helper()
	cold := min(len(rows), 40)
	if raceEnabled {
		cold = min(len(rows), 8)
	}
	for i := range cold {
		st := stack.Wrap(open(), true, stack.Options{MaxRequests: 4})
		sweepSource(t, dir, rows[i:i+1], st)
		st.Close()
	}
	st := stack.Wrap(open(), true, stack.Options{})
	defer st.Close()
	sweepSource(t, dir, rows, st)
}

// TestStackTransportSweep: answers over HTTP (a mirror with a manifest) and
// S3 through the whole stack are the oracle's, cold and warm.
func TestStackTransportSweep(t *testing.T) {
	dir, rows := transportRows(t)
	t.Run("http", func(t *testing.T) {
		url, _ := mirrortest.ServeSlowListed(t, dir, 0)
		stackSweep(t, dir, rows, func() source.Source {
			src, err := srchttp.New(url, srchttp.Options{})
			if err != nil {
				t.Fatal(err)
			}
			return src
		})
	})
	t.Run("s3", func(t *testing.T) {
		srv, _ := s3test.ServeDir(t, dir)
		stackSweep(t, dir, rows, func() source.Source {
			src, err := s3.New(context.Background(), srv.Config("tbfs", ""))
			if err != nil {
				t.Fatal(err)
			}
			return src
		})
	})
}
