package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/cmd/internal/cli"
	"github.com/tbfs/tbfs/internal/testkit/chesstboracle"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/source/http/mirrortest"
	"github.com/tbfs/tbfs/source/s3/s3test"
)

// decodePasses parses bench --json output: a cold then a warm pass.
func decodePasses(t testing.TB, out string) [2]benchPass {
	t.Helper()
	var p [2]benchPass
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("want two passes, got:\n%s", out)
	}
	for i, l := range lines {
		if err := json.Unmarshal([]byte(l), &p[i]); err != nil {
			t.Fatalf("pass %d: %v: %s", i, err, l)
		}
	}
	if p[0].Name != "cold" || p[1].Name != "warm" {
		t.Fatalf("passes %q, %q", p[0].Name, p[1].Name)
	}
	return p
}

// TestBenchFixtures runs bench over the built-in tables: random positions
// are legal (every one probes without error) and reproducible from the
// seed, and the warm pass reads nothing from the transport.
func TestBenchFixtures(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "pos.txt")
	res := runBin(t, "", nil, "bench", "--random", "300", "--seed", "7", "--write", file, "--json", "--parallel", "2")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	p := decodePasses(t, res.stdout)
	for _, pass := range p {
		if pass.Probes != 300 || pass.Errors != 0 || pass.ProbesPerSec <= 0 || pass.P99Micros < pass.P50Micros ||
			pass.CPUSeconds < 0 || (pass.CPUSeconds > 0) != (pass.ProbesPerCPU > 0) || pass.PeakRSS <= 0 {
			t.Errorf("%+v", pass)
		}
	}
	if p[0].Requests == 0 || p[1].Requests != 0 {
		t.Errorf("requests cold %d, warm %d: want some, then none", p[0].Requests, p[1].Requests)
	}
	// The cold pass decodes LZMA blocks, never more of one than it holds;
	// the warm pass finds what it reads decoded already.
	if len(p[0].LZMA) == 0 {
		t.Error("cold pass: no LZMA decoding reported")
	}
	for _, l := range p[0].LZMA {
		if l.Blocks <= 0 || l.Decoded <= 0 || l.Decoded > l.BlockBytes {
			t.Errorf("cold pass LZMA %+v: want blocks, and 0 < decoded <= block bytes", l)
		}
	}
	if len(p[1].LZMA) != 0 {
		t.Errorf("warm pass decoded LZMA: %+v", p[1].LZMA)
	}
	first, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	again := filepath.Join(dir, "again.txt")
	runBin(t, "", nil, "bench", "--random", "300", "--seed", "7", "--write", again)
	second, _ := os.ReadFile(again)
	if !bytes.Equal(first, second) || strings.Count(string(first), "\n") != 300 {
		t.Errorf("the same seed drew different positions")
	}
	res = runBin(t, "", nil, "bench", "--positions", file, "--json")
	if res.code != 0 || decodePasses(t, res.stdout)[0].Probes != 300 {
		t.Errorf("--positions: exit %d %s", res.code, res.stderr)
	}
	// --wdl reads the WDL tables only, so it asks the transport for fewer
	// bytes than a probe of every metric.
	wdl := runBin(t, "", nil, "bench", "--positions", file, "--json", "--wdl")
	if wdl.code != 0 {
		t.Fatalf("--wdl: exit %d %s", wdl.code, wdl.stderr)
	}
	if w, all := decodePasses(t, wdl.stdout)[0], decodePasses(t, res.stdout)[0]; w.Probes != 300 || w.Errors != 0 || w.Bytes >= all.Bytes {
		t.Errorf("--wdl cold pass %+v; every metric read %d bytes", w, all.Bytes)
	}
	// --cold-only makes one pass, the cold one.
	cold := runBin(t, "", nil, "bench", "--positions", file, "--json", "--cold-only")
	if lines := strings.Split(strings.TrimSpace(cold.stdout), "\n"); cold.code != 0 || len(lines) != 1 || !strings.Contains(lines[0], `"pass":"cold"`) {
		t.Errorf("--cold-only: exit %d, passes:\n%s", cold.code, cold.stdout)
	}
	// --cpuprofile writes a CPU profile in pprof's format, a gzipped
	// protocol buffer; a path that cannot be created is an error, not a
	// run without one.
	prof := filepath.Join(dir, "cpu.pprof")
	if res := runBin(t, "", nil, "bench", "--positions", file, "--cold-only", "--cpuprofile", prof); res.code != 0 {
		t.Errorf("--cpuprofile: exit %d %s", res.code, res.stderr)
	}
	if f, err := os.Open(prof); err != nil {
		t.Errorf("--cpuprofile: %v", err)
	} else {
		zr, err := gzip.NewReader(f)
		if err == nil {
			_, err = io.Copy(io.Discard, zr)
		}
		if err != nil {
			t.Errorf("--cpuprofile wrote no gzipped profile: %v", err)
		}
		f.Close()
	}
	if res := runBin(t, "", nil, "bench", "--positions", file, "--cpuprofile", filepath.Join(dir, "no", "such", "dir", "cpu.pprof")); res.code != 1 || !strings.Contains(res.stderr, "cpu.pprof") {
		t.Errorf("--cpuprofile into a missing directory: exit %d, stderr %q", res.code, res.stderr)
	}
	res = runBin(t, "", nil, "bench")
	if res.code != 2 {
		t.Errorf("bench without positions: exit %d, want 2", res.code)
	}
}

// TestProbeS3 answers the fixture oracle rows through the S3 transport
// (versitygw on loopback) and checks them as TestProbeJSONOracle does.
func TestProbeS3(t *testing.T) {
	root := testenv.Testdata(t, "chesstb")
	srv, _ := s3test.ServeDir(t, root)
	rows := chesstboracle.Read(t, filepath.Join(root, "oracle", "probe.tsv"))
	if testing.Short() {
		rows = rows[:200]
	}
	checkBatchOracle(t, rows, srv.Env(), "--tables", srv.URL("tbfs", ""), "--tables", srv.URL("tbfs", "packs"))
}

// benchCache is the cache budget of the shipped-table benchmark: enough to
// hold every block the 10,000 positions touch, so the warm pass measures
// cached probes (the 64 MiB default thrashes on the 5-man DTZ blocks).
const benchCache = 2 << 30

// BenchmarkBenchShipped runs tbprobe bench over the shared shipped tables
// with 10,000 random positions (seed 1), from local files and from the S3
// server on loopback, and reports each pass's figures. Run with
// -benchtime=1x: one iteration is a whole cold+warm bench.
func BenchmarkBenchShipped(b *testing.B) {
	shipped := testenv.Shared(b, "chesstb", "shipped")
	posFile := filepath.Join(b.TempDir(), "pos.txt")
	var tf tableFlags
	tf.tables = []string{shipped}
	tf.cacheSize = cli.Size(benchCache)
	ts, err := tf.open(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	fens, err := randomPositions(context.Background(), ts, 10000, 1)
	ts.Close()
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(posFile, []byte(strings.Join(fens, "\n")+"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	var out, errb bytes.Buffer
	for _, tc := range []struct {
		name   string
		tables func(b *testing.B) []string
	}{
		{"local", func(b *testing.B) []string { return []string{"--tables", shipped} }},
		{"s3", func(b *testing.B) []string {
			srv, url := s3test.ServeDir(b, shipped)
			srv.Setenv(b)
			return []string{"--tables", url}
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			tables := tc.tables(b)
			for _, par := range []int{1, 8} {
				b.Run("parallel-"+strconv.Itoa(par), func(b *testing.B) {
					var p [2]benchPass
					for b.Loop() {
						out.Reset()
						errb.Reset()
						args := append([]string{"bench", "--positions", posFile, "--json", "--parallel", strconv.Itoa(par),
							"--cache-size", strconv.Itoa(benchCache)}, tables...)
						if code := run(context.Background(), args, nil, &out, &errb); code != 0 {
							b.Fatalf("bench: %s", errb.String())
						}
						p = decodePasses(b, out.String())
					}
					for _, pass := range p {
						b.Logf("%s parallel %d %s: %.0f probes/s, p50 %.1fµs, p99 %.1fµs, hit rate %.3f, %d requests (%.4f/probe), %d bytes",
							tc.name, par, pass.Name, pass.ProbesPerSec, pass.P50Micros, pass.P99Micros, pass.CacheHitRate,
							pass.Requests, pass.RequestsPerPrb, pass.Bytes)
						b.ReportMetric(pass.ProbesPerSec, "probes/s-"+pass.Name)
						b.ReportMetric(pass.RequestsPerPrb, "req/probe-"+pass.Name)
					}
				})
			}
		})
	}
}

// TestBenchFresh: bench --fresh probes each position with tables opened
// for it alone and reports its requests and round trips: the requests it
// counts are the ones the server saw (the arbiter is the server's own
// count), each probe sends at least one, and no chain of requests is
// longer than the requests there were.
func TestBenchFresh(t *testing.T) {
	dir := t.TempDir()
	var fens []string
	for i, r := range chesstboracle.Read(t, testenv.Testdata(t, "chesstb", "oracle", "probe.tsv")) {
		if i%97 == 0 && len(fens) < 12 {
			fens = append(fens, r.FEN)
		}
	}
	file := filepath.Join(dir, "pos.txt")
	if err := os.WriteFile(file, []byte(strings.Join(fens, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	url, slow := mirrortest.ServeSlow(t, testenv.Testdata(t, "chesstb"), 0)
	res := runBin(t, "", nil, "bench", "--fresh", "--cold-only", "--json", "--positions", file, "--tables", url)
	if res.code != 0 {
		t.Fatalf("exit %d: %s%s", res.code, res.stdout, res.stderr)
	}
	lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
	var f freshPass
	if len(lines) != 2 || json.Unmarshal([]byte(lines[0]), &f) != nil || f.Name != "fresh" {
		t.Fatalf("want the fresh pass, then the cold one:\n%s", res.stdout)
	}
	var cold benchPass
	if err := json.Unmarshal([]byte(lines[1]), &cold); err != nil {
		t.Fatal(err)
	}
	// The cold pass's listing is one call of two requests.
	sent := slow.Counts().Total() - int(cold.Requests+cold.Lists)
	counted := f.RequestsMean * float64(f.Probes)
	if f.Probes != len(fens) || f.Errors != 0 || f.RequestsP50 < 1 || f.RoundTripsP50 < 1 ||
		f.RoundTripsMax > f.RequestsMax || f.RoundTripsP50 > f.RoundTripsP90 || f.RoundTripsP90 > f.RoundTripsMax {
		t.Errorf("%+v", f)
	}
	if counted != float64(sent) {
		t.Errorf("fresh probes counted %.0f requests, the server saw %d", counted, sent)
	}
	if !strings.Contains(runBin(t, "", nil, "bench", "--fresh", "--cold-only", "--positions", file, "--tables", url).stdout, "round trips per cold probe: median ") {
		t.Error("the human form does not say the round trips")
	}
}
