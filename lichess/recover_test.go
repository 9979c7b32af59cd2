package lichess_test

import (
	"encoding/json"
	"net/http"
	nethttptest "net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tbfs/tbfs/chessprobe"
	"github.com/tbfs/tbfs/format/chesstb"
	"github.com/tbfs/tbfs/internal/testkit/chesstboracle"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/lichess"
	srchttp "github.com/tbfs/tbfs/source/http"
	"github.com/tbfs/tbfs/source/http/mirrortest"
	"github.com/tbfs/tbfs/source/listcache"
)

// kqkRows are the fixture oracle's rows of material KQK (white king and
// queen against the black king), the material the recovery tests hide and
// replace on the mirror.
func kqkRows(t *testing.T) []chesstboracle.Row {
	t.Helper()
	var out []chesstboracle.Row
	for _, r := range chesstboracle.Read(t, testenv.Testdata(t, "chesstb", "oracle", "probe.tsv")) {
		placement, _, _ := strings.Cut(r.FEN, " ")
		var pieces []rune
		for _, c := range placement {
			if strings.ContainsRune("KQRBNPkqrbnp", c) {
				pieces = append(pieces, c)
			}
		}
		if s := string(pieces); len(s) == 3 && strings.Count(s, "K") == 1 && strings.Count(s, "Q") == 1 && strings.Count(s, "k") == 1 {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		t.Fatal("no KQK rows in the fixture oracle")
	}
	return out
}

// getStandard fetches /standard for fen, returning the status, headers
// and the decoded answer.
func getStandard(t *testing.T, base, fen string) (int, http.Header, answer) {
	t.Helper()
	code, h, b := fetch(t, "GET", base+"/standard?fen="+url.QueryEscape(fen), nil, "")
	var a answer
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatalf("%s: status %d, body %q: %v", fen, code, b, err)
	}
	return code, h, a
}

// TestMissingTableFoundAfterTTL: a table that answered 404 on the mirror
// for a while (during an upload, say) is "no table" only for the metadata
// TTL, then found: a long-running server does not remember the miss
// forever. Arbiter: the reference oracle's category once it is found.
func TestMissingTableFoundAfterTTL(t *testing.T) {
	var hide atomic.Bool
	hide.Store(true)
	files := mirrortest.Handler(t, testenv.Testdata(t, "chesstb"))
	mirror := nethttptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hide.Load() && strings.Contains(r.URL.Path, "KQK.") {
			http.NotFound(w, r)
			return
		}
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(mirror.Close)
	src, err := srchttp.New(mirror.URL+"/", srchttp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	clk := testenv.NewClock(time.Unix(1e9, 0))
	const ttl = time.Minute
	lc := listcache.Wrap(src, listcache.Options{TTL: ttl, Now: clk.Now})
	t.Cleanup(func() { lc.Close() })
	tb, err := chesstb.Open(chesstb.Options{MissingTTL: ttl, Now: clk.Now}, lc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	api := nethttptest.NewServer(lichess.New(chessprobe.New(tb, nil), nil).Handler())
	t.Cleanup(api.Close)

	r := kqkRows(t)[0]
	want := r.WantCategory(t)
	if code, _, a := getStandard(t, api.URL, r.FEN); code != 200 || a["category"] == want {
		t.Fatalf("while hidden: status %d, category %v; want an answer without the table", code, a["category"])
	}
	hide.Store(false)
	if _, _, a := getStandard(t, api.URL, r.FEN); a["category"] == want {
		t.Logf("found before the TTL ended (allowed)")
	}
	clk.Add(ttl)
	for _, r := range kqkRows(t) {
		if code, _, a := getStandard(t, api.URL, r.FEN); code != 200 || a["category"] != r.WantCategory(t) {
			t.Errorf("%s after the TTL: status %d, category %v, want %s", r.FEN, code, a["category"], r.WantCategory(t))
		}
	}
}

// TestReplacedTableReopened: a table replaced on the mirror (new version,
// as an upload gives it) fails at most the probes that first read each of
// its files at the old version, with a 503 (try again), and is then
// reopened at the new version: every row is answered right again, none
// with "object changed" forever. Arbiter: the reference oracle's category.
func TestReplacedTableReopened(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(testenv.Testdata(t, "chesstb"))); err != nil {
		t.Fatal(err)
	}
	mirror := nethttptest.NewServer(mirrortest.Handler(t, dir))
	t.Cleanup(mirror.Close)
	// OpenRead -1: no first bytes kept at open, so every read of a block
	// asks the mirror, which is where a replacement shows.
	src, err := srchttp.New(mirror.URL+"/", srchttp.Options{OpenRead: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	tb, err := chesstb.Open(chesstb.Options{BlockCacheBytes: 1}, src)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	api := nethttptest.NewServer(lichess.New(chessprobe.New(tb, nil), nil).Handler())
	t.Cleanup(api.Close)

	rows := kqkRows(t)
	rows = rows[:min(len(rows), 24)]
	check := func(pass string) (failed int) {
		for _, r := range rows {
			code, h, a := getStandard(t, api.URL, r.FEN)
			if code == http.StatusServiceUnavailable {
				failed++
				continue
			}
			if code != 200 || a["category"] != r.WantCategory(t) {
				t.Errorf("%s: %s: status %d (%s), category %v, want %s", pass, r.FEN, code, h.Get("Content-Type"), a["category"], r.WantCategory(t))
			}
		}
		return failed
	}
	if n := check("before"); n != 0 {
		t.Fatalf("%d failures before the replacement", n)
	}
	var replaced int
	later := time.Now().Add(time.Hour)
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.Contains(d.Name(), "KQK.") {
			replaced++
			if err := os.Chtimes(p, later, later); err != nil {
				t.Fatal(err)
			}
		}
		return nil
	})
	n := check("just after")
	if n > replaced {
		t.Errorf("%d probes failed after the replacement; at most %d (one per replaced file) may", n, replaced)
	}
	t.Logf("%d of %d probes failed (503) after %d files were replaced", n, len(rows), replaced)
	if n := check("after"); n != 0 {
		t.Errorf("%d probes still fail after the table was reopened", n)
	}
}
