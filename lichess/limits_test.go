package lichess_test

import (
	"context"
	"encoding/json"
	"fmt"
	nethttptest "net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/chessprobe"
	"github.com/tbfs/tbfs/format/chesstb"
	"github.com/tbfs/tbfs/internal/testkit/chesstboracle"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/lichess"
	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/mmap"
)

// fixtureTablebase opens the committed fixture tables in dir (the
// repository's own when dir is "").
func fixtureTablebase(t *testing.T, dir string) *chesstb.Tablebase {
	t.Helper()
	if dir == "" {
		dir = testenv.Testdata(t, "chesstb")
	}
	src, err := mmap.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return tablebaseOver(t, src)
}

// tablebaseOver opens a Tablebase over src, closed when the test ends.
func tablebaseOver(t *testing.T, src source.Source) *chesstb.Tablebase {
	t.Helper()
	tb, err := chesstb.Open(chesstb.Options{}, src)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	return tb
}

// gatedProber holds every Probe until the gate opens, telling arrived
// the FEN of each one that starts, so a test knows what is in flight.
type gatedProber struct {
	*chessprobe.Prober
	arrived chan string
	gate    chan struct{}
}

func (g *gatedProber) Probe(ctx context.Context, pos *chess.Position) (chessprobe.Result, error) {
	select {
	case g.arrived <- pos.FEN():
	default: // nobody is counting these
	}
	select {
	case <-g.gate:
	case <-ctx.Done():
		return chessprobe.Result{}, ctx.Err()
	}
	return g.Prober.Probe(ctx, pos)
}

// TestBusyRefusals: beyond the limits on requests in flight and on batch
// positions in work, a request is refused at once with 503 and a
// Retry-After (RFC 9110 §15.6.4, §10.2.3), the requests admitted are
// answered right once they may proceed (oracle categories), and the
// server then takes new requests again.
func TestBusyRefusals(t *testing.T) {
	rows := chesstboracle.Read(t, testenv.Testdata(t, "chesstb", "oracle", "probe.tsv"))
	g := &gatedProber{Prober: chessprobe.New(fixtureTablebase(t, ""), nil), arrived: make(chan string, 1<<16), gate: make(chan struct{})}
	canonical := func(fen string) string {
		pos, err := chess.ParseFEN(fen)
		if err != nil {
			t.Fatal(err)
		}
		return pos.FEN()
	}
	waitFor := func(arrived chan string, fen string) {
		for f := range arrived {
			if f == fen {
				return
			}
		}
	}
	api := nethttptest.NewServer(lichess.NewLimited(g, nil, unhurried(t, lichess.Limits{Requests: 2, BatchPositions: lichess.MaxBatchFENs})).Handler())
	t.Cleanup(api.Close)

	type result struct {
		code int
		body []byte
	}
	var wg sync.WaitGroup
	results := make([]result, 2)
	// One batch of MaxBatchFENs positions takes every unit of batch work;
	// one single-position request takes the second request slot.
	var fens []string
	for i := range lichess.MaxBatchFENs {
		fens = append(fens, rows[1+i%(len(rows)-1)].FEN)
	}
	wg.Go(func() {
		code, _, b := fetch(t, "POST", api.URL+"/standard/batch", map[string]string{"Content-Type": "text/plain"}, strings.Join(fens, "\n"))
		results[0] = result{code, b}
	})
	waitFor(g.arrived, canonical(fens[0]))
	wg.Go(func() {
		code, _, b := fetch(t, "GET", api.URL+"/standard?fen="+url.QueryEscape(rows[0].FEN), nil, "")
		results[1] = result{code, b}
	})
	waitFor(g.arrived, canonical(rows[0].FEN))
	for _, req := range []struct{ method, path, body string }{
		{"GET", "/standard?fen=" + url.QueryEscape(rows[1].FEN), ""},
		{"GET", "/standard/mainline?fen=" + url.QueryEscape(rows[1].FEN), ""},
		{"POST", "/standard/batch", rows[1].FEN},
	} {
		code, h, b := fetch(t, req.method, api.URL+req.path, map[string]string{"Content-Type": "text/plain"}, req.body)
		if code != 503 || h.Get("Retry-After") == "" || !strings.Contains(string(b), "busy") {
			t.Errorf("%s %s beyond the request limit: %d, Retry-After %q, %s", req.method, req.path, code, h.Get("Retry-After"), b)
		}
	}
	close(g.gate)
	wg.Wait()
	var list []answer
	if results[0].code != 200 || json.Unmarshal(results[0].body, &list) != nil || len(list) != len(fens) {
		t.Fatalf("admitted batch: %d, %.200s", results[0].code, results[0].body)
	}
	for i, a := range list {
		if r := rows[1+i%(len(rows)-1)]; a["category"] != r.WantCategory(t) {
			t.Errorf("%s: category %v, want %s", r.FEN, a["category"], r.WantCategory(t))
		}
	}
	if results[1].code != 200 {
		t.Errorf("admitted request: %d %s", results[1].code, results[1].body)
	}

	// Batch work: with the request limit free, a batch that would pass
	// the positions in work is refused while another holds them.
	g2 := &gatedProber{Prober: g.Prober, arrived: make(chan string, 1<<16), gate: make(chan struct{})}
	api2 := nethttptest.NewServer(lichess.NewLimited(g2, nil, unhurried(t, lichess.Limits{Requests: 10, BatchPositions: lichess.MaxBatchFENs})).Handler())
	t.Cleanup(api2.Close)
	var code0 int
	wg.Go(func() {
		code0, _, _ = fetch(t, "POST", api2.URL+"/standard/batch", map[string]string{"Content-Type": "text/plain"}, strings.Join(fens, "\n"))
	})
	waitFor(g2.arrived, canonical(fens[0]))
	code, h, b := fetch(t, "POST", api2.URL+"/standard/batch", map[string]string{"Content-Type": "text/plain"}, rows[0].FEN)
	if code != 503 || h.Get("Retry-After") == "" {
		t.Errorf("batch beyond the work limit: %d, Retry-After %q, %s", code, h.Get("Retry-After"), b)
	}
	// A single-position request does not count as batch work.
	single := make(chan int, 1)
	go func() {
		c, _, _ := fetch(t, "GET", api2.URL+"/standard?fen="+url.QueryEscape(rows[0].FEN), nil, "")
		single <- c
	}()
	waitFor(g2.arrived, canonical(rows[0].FEN))
	close(g2.gate)
	wg.Wait()
	if c := <-single; code0 != 200 || c != 200 {
		t.Errorf("after the gate: batch %d, single %d", code0, c)
	}
}

// TestBatchCorruptTableFailsAlone: in a batch, positions whose table is
// corrupt answer with their own error (status 500 inside the entry, as a
// single request for them gets), and every other position is answered
// right (oracle categories): one bad table does not fail the batch.
func TestBatchCorruptTableFailsAlone(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(testenv.Testdata(t, "chesstb"))); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "wdl", "KQK.lzw")
	info, err := os.Stat(bad)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(strings.Repeat("\xa5", int(info.Size()))), 0o644); err != nil {
		t.Fatal(err)
	}
	api := nethttptest.NewServer(lichess.NewLimited(chessprobe.New(fixtureTablebase(t, dir), nil), nil, unhurried(t, lichess.Limits{})).Handler())
	t.Cleanup(api.Close)
	kqk := kqkRows(t)[:5]
	rows := chesstboracle.Read(t, testenv.Testdata(t, "chesstb", "oracle", "probe.tsv"))
	var others []chesstboracle.Row
	for _, r := range rows {
		if len(others) < 20 && !strings.Contains(fmt.Sprint(kqk), r.FEN) && !strings.ContainsAny(r.FEN, "Qq") {
			others = append(others, r)
		}
	}
	var fens []string
	for i := range 5 {
		fens = append(fens, kqk[i].FEN)
		fens = append(fens, others[4*i : 4*i+4][0].FEN, others[4*i+1].FEN, others[4*i+2].FEN, others[4*i+3].FEN)
	}
	code, _, b := fetch(t, "POST", api.URL+"/standard/batch", map[string]string{"Content-Type": "text/plain"}, strings.Join(fens, "\n"))
	var list []answer
	if code != 200 || json.Unmarshal(b, &list) != nil || len(list) != len(fens) {
		t.Fatalf("batch with a corrupt table: %d, %.300s", code, b)
	}
	for i, a := range list {
		if i%5 == 0 {
			if a["error"] == nil || a["status"] != float64(500) {
				t.Errorf("%s (corrupt table): %v, want its own error with status 500", fens[i], a)
			}
			continue
		}
		r := others[i/5*4+i%5-1]
		if a["category"] != r.WantCategory(t) {
			t.Errorf("%s: %v, want category %s", r.FEN, a, r.WantCategory(t))
		}
	}
	// A batch of only failing positions fails as a single request does.
	code, _, b = fetch(t, "POST", api.URL+"/standard/batch", map[string]string{"Content-Type": "text/plain"}, kqk[0].FEN)
	if code != 500 {
		t.Errorf("batch of one corrupt position: %d %s, want 500", code, b)
	}
}
