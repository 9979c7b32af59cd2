package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	nethttptest "net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/cmd/internal/tables"
	"github.com/tbfs/tbfs/format/chesstb"
	"github.com/tbfs/tbfs/internal/testkit/chesstboracle"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/source"
	srchttp "github.com/tbfs/tbfs/source/http"
	"github.com/tbfs/tbfs/source/http/mirrortest"
	"github.com/tbfs/tbfs/source/listcache"
	"github.com/tbfs/tbfs/source/metrics"
	"github.com/tbfs/tbfs/source/s3/s3test"
)

// coldDelay is what the latency-adding server adds to every request: far
// above a loopback request's own cost, so remote wall time minus local wall
// time, over the delay, counts the round trips on a probe's critical path.
const coldDelay = 50 * time.Millisecond

// coldTries is how often each position is probed cold, remotely and
// locally; the least wall time of each counts.
const coldTries = 3

// coldReport is what a sweep of cold probes measured.
type coldReport struct {
	trips          []float64 // round trips per probe, sorted
	waves          []float64 // requests on the critical path per probe, sorted
	reqs           []float64 // requests per probe, sorted
	client         []float64 // round trips per probe the client's trace counts (bench --fresh), sorted
	requests       int       // every request the server saw
	heads, lists   int
	bytes          int64
	probes, failed int
}

func (r coldReport) quantile(q float64) float64 { return quantile(r.trips, q) }

func quantile(sorted []float64, q float64) float64 {
	return sorted[min(len(sorted)-1, int(q*float64(len(sorted))))]
}

func (r coldReport) String() string {
	return fmt.Sprintf("round trips per cold probe: median %.2f, p90 %.2f, max %.2f (critical-path requests: median %.0f, p90 %.0f, max %.0f; as the client's trace counts them: median %.0f, p90 %.0f, max %.0f); requests per probe: median %.0f, max %.0f, mean %.2f (%.2f HEAD, %.2f LIST), %.0f bytes; %d failed",
		r.quantile(0.5), r.quantile(0.9), r.trips[len(r.trips)-1],
		quantile(r.waves, 0.5), quantile(r.waves, 0.9), r.waves[len(r.waves)-1],
		quantile(r.client, 0.5), quantile(r.client, 0.9), r.client[len(r.client)-1],
		quantile(r.reqs, 0.5), r.reqs[len(r.reqs)-1],
		float64(r.requests)/float64(r.probes), float64(r.heads)/float64(r.probes), float64(r.lists)/float64(r.probes),
		float64(r.bytes)/float64(r.probes), r.failed)
}

// coldProbes probes each position with fresh state, as a fresh process
// with the default flags would: a new table set over url (behind slow) and a
// new one over the local directory, and counts (remote wall - local wall) /
// delay for each.
func coldProbes(t testing.TB, remote, local string, slow *mirrortest.Slow, positions []chess.Position) coldReport {
	t.Helper()
	ctx := context.Background()
	var started time.Time
	trace := new(metrics.Trace)
	probe := func(loc string, pos *chess.Position) (time.Duration, int64, int, error) {
		tf := tableFlags{tables: []string{loc}, cacheSize: 64 << 20, metadataTTL: tables.MetadataTTL(listcache.DefaultTTL), trace: trace}
		trace.Reset()
		started = time.Now()
		ts, err := tf.open(ctx)
		if err != nil {
			return 0, 0, 0, err
		}
		defer ts.Close()
		_, err = ts.tb.Probe(ctx, pos)
		return time.Since(started), ts.Stats().Bytes, trace.RoundTrips(), err
	}
	var rep coldReport
	slow.Reset()
	for i := range positions {
		pos := &positions[i]
		// The least of a few fresh tries of each filters out the time the
		// probe waited for a CPU on a busy machine.
		var lw, rw time.Duration
		var bytes int64
		var lerr, rerr error
		waves, reqs, client := 0, 0, 0
		for try := range coldTries {
			l, _, _, le := probe(local, pos)
			sent := slow.Counts().Total()
			r, b, c, re := probe(remote, pos)
			if w := slow.Waves(started); try == 0 || w < waves {
				waves = w
			}
			if try == 0 || c < client {
				client = c
			}
			if n := slow.Counts().Total() - sent; try == 0 || n < reqs {
				reqs = n
			}
			if try == 0 || l < lw {
				lw = l
			}
			if try == 0 || r < rw {
				rw = r
			}
			bytes, lerr, rerr = b, le, re
		}
		if (lerr == nil) != (rerr == nil) {
			t.Errorf("%s: local %v, remote %v", pos.FEN(), lerr, rerr)
		}
		if rerr != nil {
			rep.failed++
		}
		rep.trips = append(rep.trips, max(0, float64(rw-lw)/float64(coldDelay)))
		rep.waves = append(rep.waves, float64(waves))
		rep.reqs = append(rep.reqs, float64(reqs))
		rep.client = append(rep.client, float64(client))
		rep.bytes += bytes
		rep.probes++
	}
	c := slow.Counts()
	rep.requests, rep.heads, rep.lists = c.Total()/coldTries, c.Heads/coldTries, c.Lists/coldTries
	slices.Sort(rep.trips)
	slices.Sort(rep.waves)
	slices.Sort(rep.reqs)
	slices.Sort(rep.client)
	return rep
}

// coldPositions draws the benchmark list: n random legal positions of the
// shipped tables' materials, with a fixed seed.
func coldPositions(t testing.TB, dir string, n int) []chess.Position {
	t.Helper()
	tf := tableFlags{tables: []string{dir}, cacheSize: 64 << 20}
	ts, err := tf.open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	fens, err := randomPositions(context.Background(), ts, n, 1)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]chess.Position, len(fens))
	for i, f := range fens {
		if out[i], err = chess.ParseFEN(f); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// BenchmarkColdRoundTrips prints the round trips and requests a cold probe
// of every metric spends over HTTP mirrors as they are published (plain
// files; with each table's .tbsum; with a MANIFEST listing; with both; as
// a real nginx's autoindex pages, without and with .tbsum) and S3
// (versitygw), with 50 ms added to every request: 40 random positions of
// the shipped tables, fresh state for each.
//
//	go test ./cmd/tbprobe -run '^$' -bench ColdRoundTrips -benchtime 1x
func BenchmarkColdRoundTrips(b *testing.B) {
	dir := testenv.Shared(b, "chesstb", "shipped")
	positions := coldPositions(b, dir, 40)
	published, sumsOnly := publishedCopies(b, dir)
	for _, m := range []struct {
		name  string
		serve func(b *testing.B) (string, *mirrortest.Slow)
	}{
		// A mirror without a listing answers a missing table only with
		// 404s.
		{"http-plain", func(b *testing.B) (string, *mirrortest.Slow) { return mirrortest.ServeSlow(b, dir, coldDelay) }},
		{"http-tbsum", func(b *testing.B) (string, *mirrortest.Slow) { return mirrortest.ServeSlow(b, sumsOnly, coldDelay) }},
		{"http-manifest", func(b *testing.B) (string, *mirrortest.Slow) { return mirrortest.ServeSlowListed(b, dir, coldDelay) }},
		{"http-manifest+tbsum", func(b *testing.B) (string, *mirrortest.Slow) { return mirrortest.ServeSlow(b, published, coldDelay) }},
		{"http-autoindex", func(b *testing.B) (string, *mirrortest.Slow) { return indexedSlow(b, dir) }},
		{"http-autoindex+tbsum", func(b *testing.B) (string, *mirrortest.Slow) { return indexedSlow(b, sumsOnly) }},
	} {
		b.Run(m.name, func(b *testing.B) {
			remote, slow := m.serve(b)
			for range b.N {
				reportCold(b, coldProbes(b, remote, dir, slow, positions))
			}
		})
	}
	b.Run("s3", func(b *testing.B) {
		srv, _ := s3test.ServeDir(b, dir)
		srv.Setenv(b)
		endpoint, slow := mirrortest.ProxySlow(b, srv.Endpoint, coldDelay)
		remote := s3URL(endpoint)
		for range b.N {
			reportCold(b, coldProbes(b, remote, dir, slow, positions))
		}
	})
}

// publishedCopies copies the tables of dir and publishes the copy (its
// .tbsum files and MANIFEST, by tbprobe publish), then links a second copy
// of the published one without the MANIFEST.
func publishedCopies(b *testing.B, dir string) (published, sumsOnly string) {
	b.Helper()
	published, sumsOnly = b.TempDir(), b.TempDir()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(published, rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(published, rel), data, 0o644)
	})
	if err != nil {
		b.Fatal(err)
	}
	var out strings.Builder
	if code := runPublish(context.Background(), published, 64<<20, &out, &out); code != 0 {
		b.Fatalf("publish: exit %d\n%s", code, out.String())
	}
	err = filepath.WalkDir(published, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(published, p)
		if rel == srchttp.DefaultManifest {
			return nil
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(sumsOnly, rel)), 0o755); err != nil {
			return err
		}
		return os.Link(p, filepath.Join(sumsOnly, rel))
	})
	if err != nil {
		b.Fatal(err)
	}
	return published, sumsOnly
}

// indexedSlow serves dir by a real nginx with autoindex on, behind the
// latency-adding proxy.
func indexedSlow(b *testing.B, dir string) (string, *mirrortest.Slow) {
	b.Helper()
	target := mirrortest.ServeIndexed(b, mirrortest.Nginx, dir)
	base, slow := mirrortest.ProxySlow(b, strings.TrimSuffix(target, "/"), coldDelay)
	return base + "/", slow
}

// s3URL is the s3:// URL of the test bucket reached through endpoint.
func s3URL(endpoint string) string {
	q := url.Values{"endpoint": {endpoint}, "region": {s3test.Region}, "path_style": {"true"}}
	return "s3://tbfs/?" + q.Encode()
}

func reportCold(b *testing.B, r coldReport) {
	b.Helper()
	b.ReportMetric(r.quantile(0.5), "rt-median")
	b.ReportMetric(r.quantile(0.9), "rt-p90")
	b.ReportMetric(r.trips[len(r.trips)-1], "rt-max")
	b.ReportMetric(quantile(r.waves, 0.5), "critical-median")
	b.ReportMetric(quantile(r.waves, 0.9), "critical-p90")
	b.ReportMetric(quantile(r.client, 0.5), "client-median")
	b.ReportMetric(quantile(r.client, 0.9), "client-p90")
	b.ReportMetric(quantile(r.reqs, 0.5), "req-median")
	b.ReportMetric(r.reqs[len(r.reqs)-1], "req-max")
	b.ReportMetric(float64(r.requests)/float64(r.probes), "req/probe")
	b.ReportMetric(float64(r.bytes)/float64(r.probes), "B/probe")
	b.Log(r)
}

// TestColdProbeRequests: cold probes over HTTP send no HEAD, open their
// tables at once (more than one request in flight), and give the
// reference's answers (oracle rows of the shipped form: WDL, DTZ, DTM); a
// server that fails every request still gives the clear errors it always
// did (a transient failure naming the table), and one that holds no table
// gives ErrNoTable.
func TestColdProbeRequests(t *testing.T) {
	base := testenv.Shared(t, "chesstb")
	dir := filepath.Join(base, "shipped")
	var rows []chesstboracle.Row
	for i, r := range chesstboracle.Read(t, filepath.Join(base, "oracle", "probe.tsv")) {
		if r.HasForm("shipped") && i%997 == 0 {
			rows = append(rows, r)
		}
	}
	positions := make([]chess.Position, len(rows))
	for i, r := range rows {
		var err error
		if positions[i], err = chess.ParseFEN(r.FEN); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	probe := func(tables string, pos *chess.Position) (chesstb.Result, error) {
		tf := tableFlags{tables: []string{tables}, cacheSize: 64 << 20}
		ts, err := tf.open(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer ts.Close()
		return ts.tb.Probe(ctx, pos)
	}
	remote, slow := mirrortest.ServeSlowListed(t, dir, 2*time.Millisecond)
	for i, r := range rows {
		wdl, dtz, dtm := r.Want(t)
		got, err := probe(remote, &positions[i])
		if err != nil || got.WDL != wdl || dtz != nil && (!got.HasDTZ || got.DTZ != *dtz) || dtm != nil && (!got.HasDTM || got.DTM != *dtm) {
			t.Errorf("%s: %+v, %v; want wdl %d dtz %v dtm %v", r.Where, got, err, wdl, dtz, dtm)
		}
	}
	if len(rows) < 5 {
		t.Fatalf("only %d oracle rows", len(rows))
	}
	if c := slow.Counts(); c.Heads != 0 || c.MaxInFlight < 2 {
		t.Errorf("%+v: want no HEAD and concurrent requests", c)
	}

	failing := nethttptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	t.Cleanup(failing.Close)
	_, err := probe(failing.URL+"/", &positions[0])
	if !errors.Is(err, source.ErrTransient) || !strings.Contains(err.Error(), ".lzw") {
		t.Errorf("failing server: %v, want a transient failure naming the WDL table", err)
	}
	empty := nethttptest.NewServer(http.NotFoundHandler())
	t.Cleanup(empty.Close)
	if _, err := probe(empty.URL+"/", &positions[0]); !errors.Is(err, chesstb.ErrNoTable) {
		t.Errorf("server without tables: %v, want ErrNoTable", err)
	}
}
