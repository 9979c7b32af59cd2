package lichess_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fxamacker/cbor/v2"
	"github.com/tbfs/tbfs/chessprobe"
	"github.com/tbfs/tbfs/format/chesstb"
	"github.com/tbfs/tbfs/internal/testkit/chesstboracle"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/lichess"
	"github.com/tbfs/tbfs/source/mmap"
)

// sharedServer serves the shared shipped tables (every 3/4-man material,
// KNNKP and the 5-man pawnless ones it promotes into) on a loopback port.
func sharedServer(t testing.TB) (base, oracle string) {
	t.Helper()
	dir := testenv.Shared(t, "chesstb")
	src, err := mmap.New(filepath.Join(dir, "shipped"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	tb, err := chesstb.Open(chesstb.Options{BlockCacheBytes: 256 << 20}, src)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	srv := httptest.NewServer(lichess.NewLimited(chessprobe.New(tb, nil), nil, unhurried(t, lichess.Limits{})).Handler())
	t.Cleanup(srv.Close)
	return srv.URL, filepath.Join(dir, "oracle")
}

// unhurried returns l with the request timeout raised to the time the test
// has left. The tests check answers, not speed: under the race detector on
// a loaded machine, a batch over cold shared tables outlasted the default
// 60 s and its later positions came back as errors (TestCategoryEveryProbeRow
// flaked so). The test's own -timeout still ends a probe that hangs.
func unhurried(t testing.TB, l lichess.Limits) lichess.Limits {
	t.Helper()
	if tt, ok := t.(*testing.T); ok {
		l.RequestTimeout = 24 * time.Hour // -timeout 0: no deadline
		if d, ok := tt.Deadline(); ok {
			l.RequestTimeout = time.Until(d)
		}
	}
	return l
}

// fetch does one request and returns the status, headers and body.
func fetch(t testing.TB, method, u string, header map[string]string, body string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

// answer is a /standard answer decoded loosely, as a client reads it.
type answer = map[string]any

func standard(t testing.TB, base, fen string) answer {
	t.Helper()
	code, h, b := fetch(t, "GET", base+"/standard?fen="+url.QueryEscape(fen), nil, "")
	if code != http.StatusOK || h.Get("Content-Type") != "application/json" {
		t.Fatalf("%s: status %d, Content-Type %q: %s", fen, code, h.Get("Content-Type"), b)
	}
	var a answer
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatalf("%s: %v", fen, err)
	}
	return a
}

func movesOf(a answer) []answer {
	var out []answer
	for _, m := range a["moves"].([]any) {
		out = append(out, m.(answer))
	}
	return out
}

// categoryValue orders lichess's categories for the side to move.
var categoryValue = map[string]int{"win": 2, "cursed-win": 1, "draw": 0, "blessed-loss": -1, "loss": -2}

// lilaOrder is lila-tablebase's PessimisticUnknown order of a child's
// category (src/response.rs): the move whose child is a loss first.
var lilaOrder = map[string]int{"loss": 0, "unknown": 1, "syzygy-loss": 2, "maybe-loss": 3, "blessed-loss": 4,
	"draw": 5, "cursed-win": 6, "maybe-win": 7, "syzygy-win": 8, "win": 9}

// wantDTZ is the oracle row's DTZ in lila's DTZ50″ convention
// (shakmaty-syzygy: a cursed or blessed class whose zeroing move is at most
// 100 plies away is ±(100 + plies), one further away keeps its plies, past
// 100 already, as the Syzygy tables of the same positions hold it: the
// Fathom oracle gives 8/8/8/8/4n2Q/3k4/8/3K3n w, chesstb's 125, DTZ 125;
// a checkmated side -1), and whether lila would call it precise (chesstb
// stores cursed-band distances halved). ok is false where the reference
// printed no DTZ.
func wantDTZ(t testing.TB, r chesstboracle.Row, checkmate bool) (dtz float64, precise, ok bool) {
	wdl, d, _ := r.Want(t)
	if d == nil {
		return 0, false, false
	}
	v := *d
	switch {
	case checkmate:
		v = -1
	case wdl == 1 && v <= 100:
		v += 100
	case wdl == -1 && v >= -100:
		v -= 100
	}
	return float64(v), wdl != 1 && wdl != -1, true
}

// board is a FEN's piece placement by square name, read here by the rules
// of FEN so the rules-based keys (zeroing, conversion) are checked without
// our chess package.
func board(fen string) map[string]byte {
	b := map[string]byte{}
	for i, row := range strings.Split(strings.Fields(fen)[0], "/") {
		file := 0
		for _, c := range []byte(row) {
			if c >= '1' && c <= '8' {
				file += int(c - '0')
				continue
			}
			b[string(rune('a'+file))+strconv.Itoa(8-i)] = c
			file++
		}
	}
	return b
}

// TestStandardOracle asks /standard for every parent of the shared
// children.tsv and checks, against the reference's child values and
// lila's conventions: every legal move is listed with lila's keys; each
// move's category is the child's lichess category at its clock and its
// dtz the child's DTZ in DTZ50″; zeroing and conversion follow the rules;
// the moves are in lila's category order; the first move reaches the best
// rule-true result the mover has; the root's category is the oracle's
// where probe.tsv holds the root, else the first move's negation (lila's
// rule).
func TestStandardOracle(t *testing.T) {
	base, oracle := sharedServer(t)
	kids := map[string]map[string]chesstboracle.Row{}
	var parents []string
	for _, r := range chesstboracle.Read(t, filepath.Join(oracle, "children.tsv")) {
		if kids[r.FEN] == nil {
			kids[r.FEN] = map[string]chesstboracle.Row{}
			parents = append(parents, r.FEN)
		}
		kids[r.FEN][r.Move] = r
	}
	roots := map[string]chesstboracle.Row{}
	for _, r := range chesstboracle.Read(t, filepath.Join(oracle, "probe.tsv")) {
		roots[r.FEN] = r
	}
	parents = chesstboracle.Sample(parents, 20, raceEnabled || testing.Short())
	for _, fen := range parents {
		a := standard(t, base, fen)
		moves := movesOf(a)
		rows := kids[fen]
		if len(moves) != len(rows) {
			t.Errorf("%s: %d moves, the reference lists %d", fen, len(moves), len(rows))
			continue
		}
		b := board(fen)
		bestRule := -3
		for _, r := range rows {
			bestRule = max(bestRule, -categoryValue[r.WantRuleCategory(t)])
		}
		for i, m := range moves {
			uci := m["uci"].(string)
			r, ok := rows[uci]
			if !ok {
				t.Errorf("%s: move %s not in the reference's list", fen, uci)
				continue
			}
			where := r.Where + " " + uci
			for _, k := range []string{"uci", "san", "zeroing", "conversion", "checkmate", "stalemate", "variant_win",
				"variant_loss", "insufficient_material", "dtz", "precise_dtz", "dtm", "dtw", "dtc", "category"} {
				if _, ok := m[k]; !ok {
					t.Errorf("%s: no key %q", where, k)
				}
			}
			if want := r.WantCategory(t); m["category"] != want {
				t.Errorf("%s: category %v, want %s", where, m["category"], want)
			}
			if d, precise, ok := wantDTZ(t, r, m["checkmate"] == true); ok {
				if m["dtz"] != d {
					t.Errorf("%s: dtz %v, want %v", where, m["dtz"], d)
				}
				if precise && m["precise_dtz"] != d || !precise && m["precise_dtz"] != nil {
					t.Errorf("%s: precise_dtz %v, want %v (precise %v)", where, m["precise_dtz"], d, precise)
				}
			}
			if m["dtc"] != nil || m["dtw"] != nil {
				t.Errorf("%s: dtc %v dtw %v, lila has neither for these tables", where, m["dtc"], m["dtw"])
			}
			from, to := uci[:2], uci[2:4]
			pawn := b[from] == 'P' || b[from] == 'p'
			capture := b[to] != 0 || (pawn && from[0] != to[0])
			promotion := len(uci) == 5
			if m["zeroing"] != (capture || pawn) || m["conversion"] != (capture || promotion) {
				t.Errorf("%s: zeroing %v conversion %v, by the rules %v %v", where, m["zeroing"], m["conversion"], capture || pawn, capture || promotion)
			}
			if i > 0 && lilaOrder[m["category"].(string)] < lilaOrder[moves[i-1]["category"].(string)] {
				t.Errorf("%s: listed after a move with a worse child category", where)
			}
			if i == 0 {
				if got := -categoryValue[r.WantRuleCategory(t)]; got != bestRule {
					t.Errorf("%s: first move reaches %d, the best rule-true result is %d", where, got, bestRule)
				}
			}
		}
		want := ""
		if r, ok := roots[fen]; ok {
			want = r.WantCategory(t)
		} else if len(moves) > 0 {
			want = negate(moves[0]["category"].(string))
		}
		if want != "" && a["category"] != want {
			t.Errorf("%s: root category %v, want %s", fen, a["category"], want)
		}
	}
	t.Logf("%d parents checked", len(parents))
}

func negate(c string) string {
	for k, v := range categoryValue {
		if v == -categoryValue[c] {
			return k
		}
	}
	return c
}

// TestCategoryEveryProbeRow sends every row of the shared probe.tsv (and
// seed_cases.tsv) through POST /standard/batch and checks each answer's
// category against the class the oracle's DTC/DTM50 gives at that clock,
// and its dtz against the reference's DTZ in DTZ50″.
func TestCategoryEveryProbeRow(t *testing.T) {
	base, oracle := sharedServer(t)
	rows := chesstboracle.Read(t, filepath.Join(oracle, "probe.tsv"))
	rows = append(rows, chesstboracle.Read(t, filepath.Join(oracle, "seed_cases.tsv"))...)
	rows = chesstboracle.Sample(rows, 100, raceEnabled || testing.Short())
	checked := 0
	for start := 0; start < len(rows); start += lichess.MaxBatchFENs {
		part := rows[start:min(len(rows), start+lichess.MaxBatchFENs)]
		var fens []string
		for _, r := range part {
			fens = append(fens, r.FEN)
		}
		code, _, b := fetch(t, "POST", base+"/standard/batch", map[string]string{"Content-Type": "text/plain"}, strings.Join(fens, "\n"))
		var list []answer
		if err := json.Unmarshal(b, &list); code != 200 || err != nil || len(list) != len(part) {
			t.Fatalf("batch: status %d, %v, %d answers for %d", code, err, len(list), len(part))
		}
		for i, r := range part {
			a := list[i]
			if want := r.WantCategory(t); a["category"] != want {
				t.Errorf("%s %s: category %v, want %s", r.Where, r.FEN, a["category"], want)
			}
			if d, _, ok := wantDTZ(t, r, a["checkmate"] == true); ok && a["dtz"] != d {
				t.Errorf("%s %s: dtz %v, want %v", r.Where, r.FEN, a["dtz"], d)
			}
			checked++
		}
	}
	t.Logf("%d rows checked", checked)
}

// TestIssueDrawnByClock is the issue's example: KQK with Black to move at
// clock 90 is lost by the table but drawn by the 50-move rule (probe.tsv's
// clocked verdicts for this material: the queen side needs more plies
// than the 10 left), so the category must not say loss, and no move may
// claim the child wins outright.
func TestIssueDrawnByClock(t *testing.T) {
	base, _ := sharedServer(t)
	a := standard(t, base, "8/8/8/5k2/8/8/1Q6/K7 b - - 90 1")
	if a["category"] == "loss" {
		t.Errorf("category %v at clock 90; the 50-move rule draws it", a["category"])
	}
}

// TestWireFormat checks the transport conventions a browser and lichess's
// clients rely on: CORS on every answer and a preflight, CBOR on request
// with the same content as JSON, and a clear 4xx for bad input.
func TestWireFormat(t *testing.T) {
	base, _ := sharedServer(t)
	const fen = "8/8/8/5k2/8/8/1Q6/K7 w - - 0 1"
	u := base + "/standard?fen=" + url.QueryEscape(fen)

	code, h, _ := fetch(t, "GET", u, map[string]string{"Origin": "https://lichess.org"}, "")
	if code != 200 || h.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("GET: status %d, Access-Control-Allow-Origin %q", code, h.Get("Access-Control-Allow-Origin"))
	}
	code, h, _ = fetch(t, "OPTIONS", u, map[string]string{"Origin": "https://lichess.org",
		"Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "accept"}, "")
	if code/100 != 2 || h.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(h.Get("Access-Control-Allow-Methods"), "GET") ||
		!strings.Contains(strings.ToLower(h.Get("Access-Control-Allow-Headers")), "accept") {
		t.Errorf("preflight: status %d, headers %v", code, h)
	}

	_, _, jb := fetch(t, "GET", u, nil, "")
	code, h, cb := fetch(t, "GET", u, map[string]string{"Accept": "application/cbor"}, "")
	if code != 200 || h.Get("Content-Type") != "application/cbor" {
		t.Fatalf("CBOR: status %d, Content-Type %q", code, h.Get("Content-Type"))
	}
	var fromJSON, fromCBOR any
	json.Unmarshal(jb, &fromJSON)
	if err := cbor.Unmarshal(cb, &fromCBOR); err != nil {
		t.Fatalf("CBOR body: %v", err)
	}
	// Compare as JSON text: the CBOR numbers decode as integers.
	j1, _ := json.Marshal(fromJSON)
	j2, err := json.Marshal(normalise(fromCBOR))
	if err != nil || !bytes.Equal(j1, j2) {
		t.Errorf("CBOR and JSON answers differ (%v):\n%s\n%s", err, j1, j2)
	}

	// A batch in CBOR: one entry per FEN, a bad FEN an entry with its error.
	code, h, cb = fetch(t, "POST", base+"/standard/batch", map[string]string{"Accept": "application/cbor", "Content-Type": "text/plain"}, fen+"\nnot a fen\n")
	var list []map[string]any
	if err := cbor.Unmarshal(cb, &list); code != 200 || err != nil || len(list) != 2 || list[0]["category"] != "win" || list[1]["error"] == nil {
		t.Errorf("CBOR batch: status %d, %q, %v, %v", code, h.Get("Content-Type"), err, list)
	}

	for _, tt := range []struct {
		name, method, path string
		header             map[string]string
		code               int
	}{
		{"missing fen", "GET", "/standard", nil, 400},
		{"garbage fen", "GET", "/standard?fen=garbage", nil, 400},
		{"two white kings", "GET", "/standard?fen=8/8/8/5k2/8/8/1K6/K7_w_-_-_0_1", nil, 400},
		{"fen twice", "GET", "/standard?fen=" + url.QueryEscape(fen) + "&fen=" + url.QueryEscape(fen), nil, 400},
		{"bad dtc mode", "GET", "/standard?dtc=sometimes&fen=" + url.QueryEscape(fen), nil, 400},
		{"mainline bad fen", "GET", "/standard/mainline?fen=xx", nil, 400},
		{"mainline outside", "GET", "/standard/mainline?fen=k7/8/8/8/8/8/8/KQQQ4_w_-_-_0_1", nil, 404},
		{"mainline castling", "GET", "/standard/mainline?fen=4k3/8/8/8/8/8/8/R3K3_w_Q_-_0_1", nil, 404},
		{"unacceptable", "GET", "/standard?fen=" + url.QueryEscape(fen), map[string]string{"Accept": "text/html"}, 406},
		{"wrong method", "DELETE", "/standard?fen=" + url.QueryEscape(fen), nil, 405},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, h, b := fetch(t, tt.method, base+tt.path, tt.header, "")
			if code != tt.code {
				t.Errorf("status %d, want %d: %s", code, tt.code, b)
			}
			if tt.code == 405 {
				return
			}
			var e map[string]any
			if json.Unmarshal(b, &e) != nil || e["error"] == nil || e["error"] == "" {
				t.Errorf("body %q (Content-Type %q) names no error", b, h.Get("Content-Type"))
			}
		})
	}
	// A browser's Accept falls through to JSON by its */*.
	code, h, _ = fetch(t, "GET", u, map[string]string{"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}, "")
	if code != 200 || h.Get("Content-Type") != "application/json" {
		t.Errorf("browser Accept: status %d, %q", code, h.Get("Content-Type"))
	}
}

// normalise turns CBOR's decoded maps (map[any]any) and integers into
// what encoding/json decodes, so the two answers compare as text.
func normalise(v any) any {
	switch x := v.(type) {
	case map[any]any:
		m := map[string]any{}
		for k, e := range x {
			m[fmt.Sprint(k)] = normalise(e)
		}
		return m
	case []any:
		for i := range x {
			x[i] = normalise(x[i])
		}
		return x
	case uint64:
		return float64(x)
	case int64:
		return float64(x)
	}
	return v
}

// TestRootOutsideTables: a root the tables cannot answer while its
// children can is answered as lila-tablebase does (src/tablebases.rs):
// the children are ranked and the root's category is the first move's
// negated. A KRK board with castling rights (every move gives them up),
// and a five-man KQRKR root whose queen takes the rook into KQRK (the
// unknown children sort after the loss, lila's PessimisticUnknown).
func TestRootOutsideTables(t *testing.T) {
	base, _ := sharedServer(t)
	for _, tc := range []struct {
		fen, first string
		allKnown   bool
	}{
		{"4k3/8/8/8/8/8/8/R3K3 w Q - 0 1", "", true},
		{"r3k3/8/8/8/8/8/8/Q3K2R w - - 0 1", "a1a8", false},
	} {
		a := standard(t, base, tc.fen)
		moves := movesOf(a)
		if a["error"] == nil || len(moves) == 0 {
			t.Errorf("%s: error %v, %d moves; want the root outside the tables, with moves", tc.fen, a["error"], len(moves))
			continue
		}
		unknown := 0
		for _, m := range moves {
			if m["category"] == "unknown" {
				unknown++
			}
		}
		if tc.allKnown && unknown > 0 {
			t.Errorf("%s: %d moves unknown, every child is in the tables", tc.fen, unknown)
		}
		if tc.first != "" && moves[0]["uci"] != tc.first {
			t.Errorf("%s: first move %v, want %s", tc.fen, moves[0]["uci"], tc.first)
		}
		if want := negate(moves[0]["category"].(string)); moves[0]["category"] != "unknown" && a["category"] != want {
			t.Errorf("%s: root category %v, want %s (the first move's negated)", tc.fen, a["category"], want)
		}
		if a["category"] != "win" {
			t.Errorf("%s: root category %v; the rook (the capture) wins", tc.fen, a["category"])
		}
	}
}
