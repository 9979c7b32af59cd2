package lichess_test

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/chessprobe"
	"github.com/tbfs/tbfs/internal/testkit/chesstboracle"
	"github.com/tbfs/tbfs/internal/testkit/syzygyoracle"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// bothTables serves the shared chesstb shipped tables and the shared
// Syzygy tables together, as tbprobe serve --tables A --tables B does.
func bothTables(t testing.TB) (*chessprobe.Tables, string) {
	t.Helper()
	return servedTables(t, testenv.Shared(t, "chesstb", "shipped"), syzygyoracle.Tables(t))
}

// oraclePositions returns every distinct position (the FEN's first four
// fields) named in the first column of the chesstb oracle's TSV files and
// of the Fathom oracle, in file order.
func oraclePositions(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(testenv.Shared(t, "chesstb", "oracle"), "*.tsv"))
	if err != nil || len(files) == 0 {
		t.Fatalf("chesstb oracle files: %v (%d found)", err, len(files))
	}
	sort.Strings(files)
	files = append(files, syzygyoracle.Path(t))
	seen := map[string]bool{}
	var out []string
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // header
		for sc.Scan() {
			fen, _, _ := strings.Cut(sc.Text(), "\t")
			key := boardKey(t, fen)
			if !seen[key] {
				seen[key] = true
				out = append(out, key)
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	return out
}

// boardKey is a FEN's first four fields, checked to be a legal position.
func boardKey(t testing.TB, fen string) string {
	t.Helper()
	f := strings.Fields(fen)
	if len(f) < 4 {
		t.Fatalf("%q: not a FEN", fen)
	}
	key := strings.Join(f[:4], " ")
	if _, err := chess.ParseFEN(key); err != nil {
		t.Fatalf("%q: %v", fen, err)
	}
	return key
}

// childPositions returns the positions after every legal move of roots
// that are not roots themselves, each once.
func childPositions(t testing.TB, roots []string) []string {
	t.Helper()
	seen := map[string]bool{}
	for _, r := range roots {
		seen[r] = true
	}
	var out []string
	for _, r := range roots {
		pos, _ := chess.ParseFEN(r)
		for _, m := range pos.LegalMoves(nil) {
			c := pos.Play(m)
			key := boardKey(t, c.FEN())
			if !seen[key] {
				seen[key] = true
				out = append(out, key)
			}
		}
	}
	return out
}

// sweepClocks are the half-move clocks every swept position is asked at:
// a fresh count, the middle, and the last ply before the 50-move rule.
var sweepClocks = []int{0, 50, 99}

// serverFailure is one 5xx answer.
type serverFailure struct {
	fen, endpoint string
	code          int
	body          string
}

// TestNoServerErrorOnOracleSweep asks /standard and /standard/mainline,
// over the chesstb and Syzygy tables together, for every position of both
// oracles and every child of one, at clocks 0, 50 and 99 (under the race
// detector or -short an even sample of them). A position either table
// answers must never get a 5xx (arbiter: lila-tablebase answers every
// position its tables hold, and both formats hold these; where they
// disagree beyond the Syzygy format's rounding the tables are damaged,
// which these are not: both sets are verified against their generators'
// checksums, README of each).
func TestNoServerErrorOnOracleSweep(t *testing.T) {
	tb, base := bothTables(t)
	roots := oraclePositions(t)
	children := childPositions(t, roots)
	all := append(append([]string{}, roots...), children...)
	all = chesstboracle.Sample(all, 300, raceEnabled || testing.Short())

	type job struct{ fen, endpoint string }
	jobs := make(chan job)
	var (
		mu       sync.Mutex
		failures []serverFailure
		requests int
		codes    = map[string]map[int]int{}
	)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				resp, err := client.Get(base + j.endpoint + "?fen=" + url.QueryEscape(j.fen))
				if err != nil {
					mu.Lock()
					failures = append(failures, serverFailure{j.fen, j.endpoint, 0, err.Error()})
					mu.Unlock()
					continue
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil {
					t.Errorf("%s %s: reading the answer: %v", j.endpoint, j.fen, err)
				}
				mu.Lock()
				requests++
				if codes[j.endpoint] == nil {
					codes[j.endpoint] = map[int]int{}
				}
				codes[j.endpoint][resp.StatusCode]++
				if resp.StatusCode >= 500 {
					failures = append(failures, serverFailure{j.fen, j.endpoint, resp.StatusCode, string(body)})
				}
				mu.Unlock()
			}
		}()
	}
	for _, p := range all {
		for _, c := range sweepClocks {
			fen := fmt.Sprintf("%s %d 1", p, c)
			jobs <- job{fen, "/standard"}
			jobs <- job{fen, "/standard/mainline"}
		}
	}
	close(jobs)
	wg.Wait()

	ctx := t.Context()
	answerable, outside := 0, 0
	for _, f := range failures {
		pos, err := chess.ParseFEN(f.fen)
		if err != nil {
			t.Fatal(err)
		}
		_, ctbErr := tb.Chesstb.Probe(ctx, &pos)
		_, syzErr := tb.Syzygy.WDL(ctx, &pos)
		if ctbErr != nil && syzErr != nil {
			outside++
			t.Logf("%s %s: %d (neither table answers: %v; %v): %s", f.endpoint, f.fen, f.code, ctbErr, syzErr, f.body)
			continue
		}
		answerable++
		if answerable <= 30 {
			t.Errorf("%s %s: %d: %s", f.endpoint, f.fen, f.code, f.body)
		}
	}
	t.Logf("%d positions (%d of the oracles, %d children; %d swept), clocks %v: %d requests, statuses by endpoint %v; 5xx: %d where a table answers, %d where none does",
		len(roots)+len(children), len(roots), len(children), len(all), sweepClocks, requests, codes, answerable, outside)
	if answerable > 0 {
		t.Errorf("%d answers of 5xx for positions a table answers", answerable)
	}
}
