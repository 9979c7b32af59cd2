package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/cmd/internal/tables"
	"github.com/tbfs/tbfs/format/chesstb"
	"github.com/tbfs/tbfs/internal/testkit/chesstboracle"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/source/http/mirrortest"
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

// mountProbe opens rawURL as tbfs mount does (cmd/internal/tables: memory cache, disk cache when
// cfg has one, listing cache, retry, limit, metrics), probes pos, and
// returns the wall time and the transport counters.
func mountProbe(tb testing.TB, rawURL string, cfg mountConfig, pos *chess.Position) (time.Duration, int64, int64) {
	tb.Helper()
	ctx := context.Background()
	start := time.Now()
	opener, err := tables.NewOpener(ctx, tables.Options{Stack: stack.Options{
		CacheBytes: cfg.cacheSize, MaxRequests: cfg.maxRequests, MetadataTTL: cfg.metadataTTL.TTL(),
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
	url, _ := mirrortest.ServeSlowListed(b, dir, remountDelay)
	cfg := mountConfig{cacheSize: chesstb.DefaultBlockCacheBytes, cacheDirSize: 1 << 30,
		metadataTTL: tables.MetadataTTL(5 * time.Minute), maxRequests: 32}
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

// TestDecodedCacheRemount: with --decoded-cache, a remount reads the
// distance blocks the first mount decoded from that directory instead of
// decoding their LZMA again, and gives the same answer, the reference
// prober's (seedDTM); a remount over damaged files there still answers
// right, decoding afresh every block whose damaged bytes it reads.
func TestDecodedCacheRemount(t *testing.T) {
	tablesDir := testenv.Testdata(t, "chesstb")
	decoded := t.TempDir()
	type tierStats struct{ Hits, Misses, Stores int64 }
	mountAndRead := func() tierStats {
		t.Helper()
		mnt, p := startMount(t, nil, "--tables", tablesDir, "--decoded-cache", decoded, "--decoded-cache-size", "64MiB")
		b, err := os.ReadFile(filepath.Join(mnt, "dtm", seedFEN))
		if err != nil || string(b) != seedDTM {
			t.Fatalf("dtm: %q, %v", b, err)
		}
		raw, err := os.ReadFile(filepath.Join(mnt, ".stats"))
		if err != nil {
			t.Fatal(err)
		}
		var s struct {
			Counters struct {
				Decoded *tierStats `json:"decoded_cache"`
			} `json:"counters"`
		}
		if err := json.Unmarshal(raw, &s); err != nil || s.Counters.Decoded == nil {
			t.Fatalf(".stats: %s (%v)", raw, err)
		}
		p.Cmd.Process.Signal(syscall.SIGTERM)
		if code := p.Wait(t); code != 0 {
			t.Fatalf("exit %d\n%s", code, p.Stderr)
		}
		return *s.Counters.Decoded
	}
	if first := mountAndRead(); first.Misses == 0 || first.Stores == 0 || first.Hits != 0 {
		t.Fatalf("first mount over an empty directory: %+v, want misses and stores only", first)
	}
	if again := mountAndRead(); again.Hits == 0 || again.Misses != 0 || again.Stores != 0 {
		t.Fatalf("remount: %+v, want every block read back and none decoded", again)
	}
	files, err := filepath.Glob(filepath.Join(decoded, "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no files in the decoded cache (%v)", err)
	}
	damage := func(every int) {
		t.Helper()
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for i := len(b) - 1; i >= 0; i -= every {
				b[i] ^= 0xff
			}
			if err := os.WriteFile(f, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The last byte of each file lies in its last LZ4 chunk, which is
	// checked only if a lookup reads it: hits stay possible, and the answer
	// (checked by mountAndRead) must still be the reference's.
	damage(1 << 30)
	mountAndRead()
	// A byte in every 256 also reaches each file's checksummed header and
	// chunk table: every block is decoded afresh.
	damage(256)
	if damaged := mountAndRead(); damaged.Hits != 0 || damaged.Misses == 0 {
		t.Fatalf("remount over damaged files: %+v, want misses only", damaged)
	}
}
