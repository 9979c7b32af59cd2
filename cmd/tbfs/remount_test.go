package main

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/format/chesstb"
	"github.com/tbfs/tbfs/internal/chesstboracle"
	"github.com/tbfs/tbfs/internal/tables"
	"github.com/tbfs/tbfs/internal/testenv"
	"github.com/tbfs/tbfs/source/http/httptest"
	"github.com/tbfs/tbfs/source/stack"
)

// remountDelay is what the latency-adding server adds to each request.
const remountDelay = 50 * time.Millisecond

// remountPass is what one pass of fresh mounts measured.
type remountPass struct {
	trips    []float64 // round trips per probe, sorted
	requests int64     // transport requests (opens, reads, lists)
	bytes    int64
}

func (p remountPass) median() float64 { return p.trips[len(p.trips)/2] }
func (p remountPass) p90() float64    { return p.trips[len(p.trips)*9/10] }

// mountProbe opens rawURL as tbfs mount does (internal/tables: memory cache, disk cache when
// cfg has one, listing cache, retry, limit, metrics), probes pos, and
// returns the wall time and the transport counters.
func mountProbe(tb testing.TB, rawURL string, cfg mountConfig, pos *chess.Position) (time.Duration, int64, int64) {
	tb.Helper()
	ctx := context.Background()
	start := time.Now()
	opener, err := tables.NewOpener(ctx, tables.Options{Stack: stack.Options{
		CacheBytes: cfg.cacheSize, MaxRequests: cfg.maxRequests, MetadataTTL: cfg.metadataTTL,
		Disk: stack.DiskOptions{Dir: cfg.cacheDir, Budget: cfg.cacheDirSize},
	}})
	if err != nil {
		tb.Fatal(err)
	}
	defer opener.Close()
	set, err := opener.Open(ctx, []string{rawURL})
	if err != nil {
		tb.Fatal(err)
	}
	defer set.Close()
	t, err := chesstb.Open(chesstb.Options{BlockCacheBytes: cfg.cacheSize}, set.Sources()...)
	if err != nil {
		tb.Fatal(err)
	}
	defer t.Close()
	if _, err := t.Probe(ctx, pos); err != nil {
		tb.Errorf("%s: %v", pos.FEN(), err)
	}
	wall := time.Since(start)
	st := set.Stats()
	return wall, st.Opens + st.Requests + st.Lists, st.Bytes
}

// BenchmarkRemount prints what --cache-dir costs and saves, over an HTTP
// mirror (with a manifest) that adds 50 ms to every request: each of 40
// oracle positions probed by a fresh mount without a disk cache, by a first
// mount with an empty one, and by a remount within the metadata TTL.
// Round trips are (wall - local wall) / delay, the least of two tries.
//
//	go test ./cmd/tbfs -run '^$' -bench Remount -benchtime 1x
func BenchmarkRemount(b *testing.B) {
	base := testenv.Shared(b, "chesstb")
	dir := filepath.Join(base, "shipped")
	var positions []chess.Position
	for i, r := range chesstboracle.Read(b, filepath.Join(base, "oracle", "probe.tsv")) {
		if r.HasForm("shipped") && i%190 == 7 && len(positions) < 40 {
			p, err := chess.ParseFEN(r.FEN)
			if err != nil {
				b.Fatal(err)
			}
			positions = append(positions, p)
		}
	}
	url, _ := httptest.ServeSlowListed(b, dir, remountDelay)
	cfg := mountConfig{cacheSize: chesstb.DefaultBlockCacheBytes, cacheDirSize: 1 << 30,
		metadataTTL: 5 * time.Minute, maxRequests: 32}
	for range b.N {
		pass := func(name string, c func(i int) mountConfig) {
			var p remountPass
			for i := range positions {
				local, _, _ := mountProbe(b, dir, cfg, &positions[i])
				wall, req, by := mountProbe(b, url, c(i), &positions[i])
				if l2, _, _ := mountProbe(b, dir, cfg, &positions[i]); l2 < local {
					local = l2
				}
				p.trips = append(p.trips, max(0, float64(wall-local)/float64(remountDelay)))
				p.requests += req
				p.bytes += by
			}
			slices.Sort(p.trips)
			n := float64(len(positions))
			b.Logf("%-22s round trips per probe: median %.2f, p90 %.2f, max %.2f; %.2f requests and %.0f bytes per probe",
				name, p.median(), p.p90(), p.trips[len(p.trips)-1], float64(p.requests)/n, float64(p.bytes)/n)
			b.ReportMetric(float64(p.requests)/n, name+"-req/probe")
			b.ReportMetric(p.median(), name+"-rt-median")
		}
		pass("no-disk-cache", func(int) mountConfig { return cfg })
		shared := b.TempDir()
		pass("first-mount", func(int) mountConfig {
			c := cfg
			c.cacheDir = b.TempDir() // empty: nothing of the other probes
			return c
		})
		pass("fill", func(int) mountConfig { c := cfg; c.cacheDir = shared; return c })
		pass("remount", func(int) mountConfig { c := cfg; c.cacheDir = shared; return c })
	}
}
