package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	dto "github.com/prometheus/client_model/go"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"reflect"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"

	cchess "github.com/corentings/chess/v2"
	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/internal/testkit/chesstboracle"
	"github.com/tbfs/tbfs/lichess"
)

// startServe runs the built binary's serve command on a free loopback
// port and returns its base URL; the process is stopped with SIGTERM when
// the test ends, and must exit cleanly.
func startServe(t *testing.T, args ...string) string {
	t.Helper()
	srv := spawnServe(t, tbprobeBin, nil, args...)
	t.Cleanup(func() {
		// The client may hold a connection it dialed but never used (a
		// request that found another connection free first); the server
		// counts such a connection as busy for its first 5 s, which is
		// its whole shutdown allowance. Closing the client's idle
		// connections first leaves only real requests to wait for.
		http.DefaultClient.CloseIdleConnections()
		if err := srv.stop(); err != nil {
			t.Errorf("serve exited with %v; stderr:\n%s", err, srv.stderr.String())
		}
	})
	if srv.base == "" {
		t.Fatalf("serve did not start; stderr:\n%s", srv.stderr.String())
	}
	return srv.base
}

// servedProcess is a running "tbprobe serve".
type servedProcess struct {
	cmd *exec.Cmd
	// base is the URL it listens on, "" when it exited instead.
	base   string
	stdout io.Reader // the rest of its standard output
	stderr *strings.Builder
}

// spawnServe starts bin's serve on a free loopback port with env added
// and waits for its listening line. A serve that exits first (bad
// flags, tables that fail to open) comes back with base "", exited.
func spawnServe(tb testing.TB, bin string, env []string, args ...string) *servedProcess {
	tb.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	cmd.Dir = tb.TempDir()
	cmd.Env = append(os.Environ(), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	p := &servedProcess{cmd: cmd, stderr: new(strings.Builder)}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	r := bufio.NewReader(stdout)
	p.stdout = r
	line, err := r.ReadString('\n')
	base, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if err != nil || !ok {
		cmd.Wait()
		return p
	}
	if !strings.HasPrefix(base, "http://127.0.0.1:") {
		tb.Fatalf("first line %q", line)
	}
	p.base = base
	return p
}

// stop ends the process with SIGTERM (when it still runs) and waits.
func (p *servedProcess) stop() error {
	if p.base == "" {
		return nil
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	return p.cmd.Wait()
}

// getJSON fetches a URL and decodes its JSON body, returning the status.
// postBatch posts fens to /standard/batch as plain text and returns the
// answers, failing unless the status is 200 with one answer per FEN.
func postBatch(t *testing.T, base string, fens []string) []any {
	t.Helper()
	code, v := getJSON(t, "POST", base+"/standard/batch", "text/plain", strings.Join(fens, "\n"))
	list, _ := v.([]any)
	if code != 200 || len(list) != len(fens) {
		t.Fatalf("batch of %d: status %d, %d answers", len(fens), code, len(list))
	}
	return list
}

func getJSON(t *testing.T, method, u, ctype, body string) (int, any) {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
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
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("%s %s: Content-Type %q, body %s", method, u, ct, b)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s %s: body is not JSON: %s", method, u, b)
	}
	return resp.StatusCode, v
}

func standardURL(base, fen string) string {
	return base + "/standard?fen=" + url.QueryEscape(strings.ReplaceAll(fen, " ", "_"))
}

// lichessKeys are the keys of a lichess position answer (lila-tablebase's
// src/response.rs PositionInfo and moves; ours adds chesstb_dtz, dtc_pair,
// dtm50 and fen, and error when the position is outside the tables).
var (
	lichessKeys = []string{"category", "checkmate", "chesstb_dtz", "dtc", "dtc_pair", "dtm", "dtm50", "dtw", "dtz", "fen",
		"formats", "insufficient_material", "moves", "precise_dtz", "stalemate", "variant_loss", "variant_win"}
	lichessMoveKeys = []string{"category", "checkmate", "chesstb_dtz", "conversion", "dtc", "dtc_pair", "dtm", "dtm50", "dtw", "dtz",
		"formats", "insufficient_material", "precise_dtz", "san", "stalemate", "uci", "variant_loss", "variant_win", "zeroing"}
)

func keysOf(m map[string]any) []string {
	var k []string
	for x := range m {
		k = append(k, x)
	}
	sort.Strings(k)
	return k
}

// insufficient says, by the rules (FIDE dead positions of bare kings or a
// single minor piece), whether a FEN's material cannot mate.
func insufficient(fen string) bool {
	board := strings.Fields(fen)[0]
	minors := 0
	for _, c := range board {
		switch c {
		case 'B', 'N', 'b', 'n':
			minors++
		case 'Q', 'R', 'P', 'q', 'r', 'p':
			return false
		}
	}
	return minors <= 1
}

// wantLichess is what the oracle row says a lichess-shaped answer holds
// (numbers as float64, null as nil). dtz is the reference's DTZ in lila's
// DTZ50″ convention (shakmaty-syzygy's: a cursed or blessed class is
// ±(100 + plies), a checkmated side -1), precise only outside the cursed
// band; chesstb_dtz is the reference's own value. Where the Syzygy
// fixtures syz answer too (serve's embedded defaults hold them; nil syz:
// chesstb's tables alone), see lichessSyzygy.
func wantLichess(t *testing.T, syz *syzygyFixtures, r chesstboracle.Row, fen string, dtz func() dtzWant) map[string]any {
	t.Helper()
	o := wantJSON(t, r, fen)
	w := map[string]any{
		"category": o["category"], "checkmate": o["checkmate"], "stalemate": o["stalemate"],
		"variant_win": false, "variant_loss": false, "insufficient_material": insufficient(fen),
		"dtz": nil, "precise_dtz": nil, "chesstb_dtz": o["dtz"], "dtm": o["dtm"], "dtm50": o["dtm50"],
		"dtc": nil, "dtw": nil, "dtc_pair": o["dtc"], "formats": o["formats"],
	}
	// lila-tablebase's prophet.rs: a DTM table's 0 for a mated side is
	// reserved for a draw and answered as None, and so is a material no
	// DTM table holds (bare kings have no file).
	if o["checkmate"] == true || bareKingsFEN(t, fen) {
		w["dtm"] = nil
	}
	if d, ok := o["dtz"].(float64); ok {
		wdl, _, _ := r.Want(t)
		switch {
		case o["checkmate"] == true:
			d = -1
		// A zeroing move over 100 plies away keeps its plies in DTZ50''
		// (Fathom's oracle: chesstb's 125 in 8/8/8/8/4n2Q/3k4/8/3K3n w is
		// DTZ 125).
		case wdl == 1 && d <= 100:
			d += 100
		case wdl == -1 && d >= -100:
			d -= 100
		}
		w["dtz"] = d
		if wdl != 1 && wdl != -1 {
			w["precise_dtz"] = d
		}
	}
	if syz != nil {
		lichessSyzygy(t, syz, w, r, fen, dtz)
	}
	return w
}

// lichessSyzygy adds to w what the Syzygy fixtures change in a lichess
// answer where they answer (syzygyFixtures.answers): formats name both, and
// dtz is the Syzygy table's DTZ50″ as it stands (lila reads it from the
// table), Fathom's value (dtzWant). precise_dtz is that value where it is
// the exact DTZ50″ chesstb's oracle gives, null where it is one ply short
// (the table rounded it); in the cursed band, where chesstb's oracle does
// not fix the DTZ50″, it is the value or null.
func lichessSyzygy(t *testing.T, syz *syzygyFixtures, w map[string]any, r chesstboracle.Row, fen string, dtz func() dtzWant) {
	t.Helper()
	sw, ok := syz.answer(t, w, r, fen, dtz)
	if !ok {
		return
	}
	w["formats"], w["dtz"] = []any{"chesstb", "syzygy"}, sw.dtz
	v, fixed := sw.dtz.(float64)
	switch {
	case fixed && sw.exact != nil:
		w["precise_dtz"] = nil
		if v == *sw.exact {
			w["precise_dtz"] = v
		}
	case fixed:
		w["precise_dtz"] = oneOf{v, nil}
	default:
		// Bounded, not fixed: precise_dtz is the exact value or null,
		// and checkLichess holds it to dtz.
		w["precise_dtz"] = oneOf{*sw.exact, nil}
	}
}

// checkLichess compares the listed keys of got with want (a oneOf or
// optional as matches reads them), and holds precise_dtz to its meaning in
// lila's format: null, or dtz itself.
func checkLichess(t *testing.T, where string, got, want map[string]any) {
	t.Helper()
	for _, k := range keysOf(want) {
		if v, ok := got[k]; !matches(v, ok, want[k]) {
			t.Errorf("%s: %s = %v, want %v", where, k, v, describeWant(want[k]))
		}
	}
	if p := got["precise_dtz"]; p != nil && p != got["dtz"] {
		t.Errorf("%s: precise_dtz %v is neither null nor the dtz %v", where, p, got["dtz"])
	}
}

// TestServeStandardOracle asks /standard for every fixture parent of
// children.tsv from 8 concurrent clients and checks the answer and each
// move key by key against the reference rows (chesstb's, and Fathom's for
// what the embedded Syzygy fixtures add: lichessSyzygy), and the key sets
// against lichess's shape.
func TestServeStandardOracle(t *testing.T) {
	base := startServe(t)
	syz := readSyzygyFixtures(t) // serve's embedded defaults hold them
	children := map[string]map[string]chesstboracle.Row{}
	var parents []string
	for _, r := range chesstboracle.Read(t, "../../testdata/chesstb/oracle/children.tsv") {
		if children[r.FEN] == nil {
			children[r.FEN] = map[string]chesstboracle.Row{}
			parents = append(parents, r.FEN)
		}
		children[r.FEN][r.Move] = r
	}
	roots := map[string]chesstboracle.Row{}
	for _, r := range chesstboracle.Read(t, "../../testdata/chesstb/oracle/probe.tsv") {
		roots[r.FEN] = r
	}
	// Queued in full first, so a client that stops early never blocks the
	// queue; each client is a subtest run from its own goroutine, where
	// checkStandard's t.Fatal ends that client's test goroutine only.
	jobs := make(chan string, len(parents))
	for _, fen := range parents {
		jobs <- fen
	}
	close(jobs)
	var wg sync.WaitGroup
	for c := range 8 {
		wg.Go(func() {
			t.Run(fmt.Sprintf("client%d", c), func(t *testing.T) {
				for fen := range jobs {
					checkStandard(t, base, syz, fen, roots, children[fen])
				}
			})
		})
	}
	wg.Wait()
}

func checkStandard(t *testing.T, base string, syz *syzygyFixtures, fen string, roots map[string]chesstboracle.Row, kids map[string]chesstboracle.Row) {
	code, v := getJSON(t, "GET", standardURL(base, fen), "", "")
	if code != http.StatusOK {
		t.Errorf("%s: status %d: %v", fen, code, v)
		return
	}
	got := v.(map[string]any)
	if k := keysOf(got); !reflect.DeepEqual(k, lichessKeys) {
		t.Errorf("%s: keys %v, want %v", fen, k, lichessKeys)
	}
	if root, ok := roots[fen]; ok {
		checkLichess(t, root.Where, got, wantLichess(t, syz, root, fen, func() dtzWant { return syz.root(t, root, fen) }))
	}
	moves, _ := got["moves"].([]any)
	if len(moves) != len(kids) {
		t.Errorf("%s: %d moves, the reference lists %d", fen, len(moves), len(kids))
	}
	for _, mv := range moves {
		m := mv.(map[string]any)
		if k := keysOf(m); !reflect.DeepEqual(k, lichessMoveKeys) {
			t.Errorf("%s: move keys %v, want %v", fen, k, lichessMoveKeys)
		}
		uci := fmt.Sprint(m["uci"])
		row, ok := kids[uci]
		if !ok {
			t.Errorf("%s: move %s not in the reference's list", fen, uci)
			continue
		}
		// The child's FEN (for the rules-based keys) and whether the move
		// zeroes the clock come from corentings.
		child, zeroing := childFEN(t, fen, uci)
		want := wantLichess(t, syz, row, child, func() dtzWant { return syz.child(t, row, fen, uci) })
		want["zeroing"] = zeroing
		checkLichess(t, row.Where+" "+uci, m, want)
	}
	// Best first: no later move is better for the mover than the first.
	if len(moves) > 1 {
		rank := map[string]int{"loss": 0, "blessed-loss": 1, "draw": 2, "cursed-win": 3, "win": 4, "unknown": 5}
		first := rank[fmt.Sprint(moves[0].(map[string]any)["category"])]
		for _, mv := range moves[1:] {
			if c := rank[fmt.Sprint(mv.(map[string]any)["category"])]; c < first {
				t.Errorf("%s: move %v listed after a worse first move", fen, mv.(map[string]any)["uci"])
			}
		}
	}
}

// TestServeMainline checks /standard/mainline: from the seed KQK position
// (seed_cases.tsv: DTZ 19, the zeroing move being the mate) the line has
// exactly 19 plies, each legal by corentings/chess, ending in checkmate,
// White the winner; a drawn position has an empty line and no winner; a
// position outside the tables is a 404 with a JSON error.
func TestServeMainline(t *testing.T) {
	base := startServe(t)
	const seed = "8/8/8/5k2/8/8/1Q6/K7 w - - 0 1"
	code, v := getJSON(t, "GET", base+"/standard/mainline?fen="+url.QueryEscape(seed), "", "")
	if code != http.StatusOK {
		t.Fatalf("status %d: %v", code, v)
	}
	ans := v.(map[string]any)
	line := ans["mainline"].([]any)
	if len(line) != 19 || ans["winner"] != "w" || ans["dtz"] != float64(19) || ans["precise_dtz"] != float64(19) {
		t.Errorf("mainline of %d plies, winner %v, dtz %v; want 19, w, 19", len(line), ans["winner"], ans["dtz"])
	}
	opt, _ := cchess.FEN(seed)
	g := cchess.NewGame(opt)
	for i, s := range line {
		step := s.(map[string]any)
		if err := g.PushNotationMove(fmt.Sprint(step["uci"]), cchess.UCINotation{}, nil); err != nil {
			t.Fatalf("ply %d %v: %v", i, step["uci"], err)
		}
		// DTZ-optimal play shortens the distance by one each ply.
		if want := float64((18 - i) * [2]int{-1, 1}[i%2]); i < 18 && step["dtz"] != want {
			t.Errorf("ply %d: dtz %v, want %v", i, step["dtz"], want)
		}
	}
	if g.Position().Status() != cchess.Checkmate {
		t.Errorf("line ends in %v, not checkmate", g.Position().Status())
	}

	// probe.tsv: K7/8/5Q2/5k2/8/8/8/8 b is a DRAW (Black takes the queen).
	code, v = getJSON(t, "GET", base+"/standard/mainline?fen=K7/8/5Q2/5k2/8/8/8/8_b_-_-_0_1", "", "")
	if code != http.StatusOK || len(v.(map[string]any)["mainline"].([]any)) != 0 || v.(map[string]any)["winner"] != nil {
		t.Errorf("drawn position: status %d, %v", code, v)
	}
	code, v = getJSON(t, "GET", base+"/standard/mainline?fen=8/8/8/3k4/8/8/8/KQQ5_w", "", "")
	if code != http.StatusNotFound || v.(map[string]any)["error"] == nil {
		t.Errorf("outside the tables: status %d, %v; want 404 with an error", code, v)
	}
}

// TestServeBadRequests checks that bad input gets 400 and a JSON error,
// and a position outside the tables a well-formed 200 answer.
func TestServeBadRequests(t *testing.T) {
	base := startServe(t)
	tests := []struct {
		name, method, path, ctype, body string
		code                            int
	}{
		{"missing fen", "GET", "/standard", "", "", 400},
		{"garbage fen", "GET", "/standard?fen=garbage", "", "", 400},
		{"two white kings", "GET", "/standard?fen=8/8/8/5k2/8/8/1K6/K7_w", "", "", 400},
		{"mainline garbage", "GET", "/standard/mainline?fen=xx", "", "", 400},
		{"batch empty", "POST", "/standard/batch", "text/plain", "", 400},
		{"batch bad json", "POST", "/standard/batch", "application/json", "{\"fens\": 3}", 400},
		{"batch unknown key", "POST", "/standard/batch", "application/json", "{\"positions\": []}", 400},
		{"batch too many", "POST", "/standard/batch", "text/plain", strings.Repeat("8/8/8/5k2/8/8/1Q6/K7 w\n", 1001), 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, v := getJSON(t, tt.method, base+tt.path, tt.ctype, tt.body)
			if code != tt.code {
				t.Errorf("status %d, want %d (%v)", code, tt.code, v)
			}
			if m, ok := v.(map[string]any); !ok || m["error"] == "" || m["error"] == nil {
				t.Errorf("body %v has no error", v)
			}
		})
	}
	code, v := getJSON(t, "GET", standardURL(base, "8/8/8/3k4/8/8/8/KQQ5 w - - 0 1"), "", "")
	m, _ := v.(map[string]any)
	if code != 200 || m["category"] != "unknown" || m["dtz"] != nil || m["error"] == nil {
		t.Errorf("outside the tables: status %d, %v", code, v)
	}
}

// TestServeBatch checks that a batch is answered in order in both body
// forms, a bad FEN becoming an entry with its error, and that each answer
// matches the reference row (and, for the keys the embedded Syzygy
// fixtures add, Fathom's or chesstb's bound: lichessSyzygy).
func TestServeBatch(t *testing.T) {
	base := startServe(t)
	syz := readSyzygyFixtures(t) // serve's embedded defaults hold them
	rows := chesstboracle.Read(t, "../../testdata/chesstb/oracle/seed_cases.tsv")
	var fens []string
	for _, r := range rows {
		fens = append(fens, r.FEN)
	}
	fens = append(fens[:2:2], append([]string{"not a fen"}, fens[2:]...)...)
	jsonBody, _ := json.Marshal(map[string]any{"fens": fens})
	for _, form := range []struct{ ctype, body string }{
		{"application/json", string(jsonBody)},
		{"text/plain", strings.Join(fens, "\n") + "\n"},
	} {
		code, v := getJSON(t, "POST", base+"/standard/batch", form.ctype, form.body)
		if code != 200 {
			t.Fatalf("%s: status %d: %v", form.ctype, code, v)
		}
		list := v.([]any)
		if len(list) != len(fens) {
			t.Fatalf("%s: %d answers for %d FENs", form.ctype, len(list), len(fens))
		}
		bad := list[2].(map[string]any)
		if bad["fen"] != "not a fen" || bad["error"] == nil || len(bad) != 2 {
			t.Errorf("%s: bad FEN entry %v", form.ctype, bad)
		}
		for i, r := range rows {
			j := i
			if i >= 2 {
				j++
			}
			checkLichess(t, form.ctype+" "+r.Where, list[j].(map[string]any), wantLichess(t, syz, r, r.FEN, func() dtzWant { return syz.root(t, r, r.FEN) }))
		}
	}
	// A batch as large as the server takes, probed on every core: each
	// answer still sits in its FEN's slot, with the reference's values.
	rows = chesstboracle.Read(t, "../../testdata/chesstb/oracle/probe.tsv")
	rows = rows[:min(len(rows), lichess.MaxBatchFENs)]
	fens = fens[:0]
	for _, r := range rows {
		fens = append(fens, r.FEN)
	}
	list := postBatch(t, base, fens)
	for i, r := range rows {
		checkLichess(t, "large batch "+r.Where, list[i].(map[string]any), wantLichess(t, syz, r, r.FEN, func() dtzWant { return syz.root(t, r, r.FEN) }))
	}
}

// TestServeMetrics checks /healthz and that /metrics counts what was asked:
// three answered probes, one outside the tables (KQQK has no table), one
// bad request, by the requests this test sent.
func TestServeMetrics(t *testing.T) {
	base := startServe(t)
	for range 3 {
		getJSON(t, "GET", standardURL(base, "8/8/8/5k2/8/8/1Q6/K7 w - - 0 1"), "", "")
	}
	getJSON(t, "GET", standardURL(base, "8/8/8/3k4/8/8/8/KQQ5 w - - 0 1"), "", "")
	getJSON(t, "GET", base+"/standard?fen=x", "", "")
	resp, err := http.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "ok\n" {
		t.Errorf("healthz: %d %q", resp.StatusCode, b)
	}
	fams, _ := scrapeMetrics(t, base)
	for _, want := range []struct {
		name   string
		labels map[string]string
		value  float64
	}{
		{"tbprobe_probes_total", map[string]string{"result": "ok"}, 3},
		{"tbprobe_probes_total", map[string]string{"result": "outside"}, 1},
		{"tbprobe_http_requests_total", map[string]string{"path": "/standard", "code": "200"}, 4},
		{"tbprobe_http_requests_total", map[string]string{"path": "/standard", "code": "400"}, 1},
		{"tbprobe_http_requests_total", map[string]string{"path": "/healthz", "code": "200"}, 1},
		{"tbprobe_probe_duration_seconds", nil, 4},
		{"tbprobe_http_request_duration_seconds", map[string]string{"path": "/standard"}, 5},
	} {
		if got, ok := metricValue(fams, want.name, want.labels); !ok || got != want.value {
			t.Errorf("%s%v = %v (found %v), want %v", want.name, want.labels, got, ok, want.value)
		}
	}
	if f := fams["tbprobe_transport_requests_total"]; f == nil || f.GetType() != dto.MetricType_COUNTER {
		t.Errorf("tbprobe_transport_requests_total is not a counter: %v", f)
	}
}

// TestServeStopsWithIdleClients holds a keep-alive connection after a
// request and a connection that never sends one while serve gets SIGTERM
// (startServe's cleanup): it must still exit 0. net/http's shutdown alone
// waits five seconds for the silent connection, past serve's grace, and
// serve would exit 1.
func TestServeStopsWithIdleClients(t *testing.T) {
	// Registered first, so it runs after startServe's stop-and-wait.
	var silent net.Conn
	t.Cleanup(func() {
		if silent != nil {
			silent.Close()
		}
	})
	base := startServe(t)
	if code, v := getJSON(t, "GET", standardURL(base, "8/8/8/5k2/8/8/1Q6/K7 w - - 0 1"), "", ""); code != 200 {
		t.Fatalf("status %d: %v", code, v)
	}
	var err error
	if silent, err = net.Dial("tcp", strings.TrimPrefix(base, "http://")); err != nil {
		t.Fatal(err)
	}
	// One more answered request: the silent connection was accepted
	// before it (one accept loop, in order).
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := fresh.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

// bareKingsFEN reports whether fen has only the two kings on the board.
func bareKingsFEN(t *testing.T, fen string) bool {
	t.Helper()
	pos, err := chess.ParseFEN(fen)
	if err != nil {
		t.Fatalf("%s: %v", fen, err)
	}
	return pos.Occupied().Count() == 2
}
