package syzygy

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tbfs/tbfs/internal/testkit/chesstboracle"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/source/http/mirrortest"
	"github.com/tbfs/tbfs/source/stack"
)

// BenchmarkManifestColdHTTP measures a first probe of a cold remote table
// (the shared 13 MiB KNNvKP.rtbw) served by a range-capable HTTP server on
// loopback whose every request waits 2 ms, through the stack a front end
// opens (cache, retry, metrics, transport), with and without the table's
// manifest beside it: time to the first answer (ns/op), bytes fetched and
// requests sent. The other tables a probe's captures reach come from a
// local folder, so the counts are the remote table's alone.
func BenchmarkManifestColdHTTP(b *testing.B) {
	tables := testenv.Shared(b, "syzygy", "tables")
	const file = "KNNvKP.rtbw"
	data, err := os.ReadFile(filepath.Join(tables, file))
	if err != nil {
		b.Fatal(err)
	}
	rows := chesstboracle.Sample(rowsOf(b, readOracle(b, testenv.Shared(b, "syzygy", "oracle", "probe.tsv")), "KNNvKP"), 1, true)
	r := rows[0]
	pos := mustFEN(b, r.FEN)
	rest := mmapSource(b, tables)
	for _, withManifest := range []bool{false, true} {
		name := "without-manifest"
		if withManifest {
			name = "with-manifest"
		}
		b.Run(name, func(b *testing.B) {
			dir := b.TempDir()
			if err := os.WriteFile(filepath.Join(dir, file), data, 0o644); err != nil {
				b.Fatal(err)
			}
			if withManifest {
				writeManifests(b, dir, dir, ManifestPageShift)
			}
			url, _ := mirrortest.ServeSlow(b, dir, 2*time.Millisecond)
			ctx := context.Background()
			var bytes, requests int64
			b.ResetTimer()
			for range b.N {
				st, err := stack.Open(ctx, url, stack.Options{})
				if err != nil {
					b.Fatal(err)
				}
				tb, err := Open(Options{}, st, rest)
				if err != nil {
					b.Fatal(err)
				}
				if _, ok, err := probeWant(ctx, tb, KindWDL, r, &pos); err != nil || !ok {
					b.Fatalf("line %d: %v (or not Fathom's value)", r.Line, err)
				}
				b.StopTimer()
				tb.Close()
				s := st.Stats()
				bytes += s.Bytes
				requests += s.Requests + s.Opens
				st.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(bytes)/float64(b.N), "remote-bytes/op")
			b.ReportMetric(float64(requests)/float64(b.N), "requests/op")
			b.ReportMetric(float64(len(data)), "table-bytes")
		})
	}
}
