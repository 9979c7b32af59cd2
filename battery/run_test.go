package battery_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tbfs/tbfs/battery"
	"github.com/tbfs/tbfs/internal/testkit/ucitest"
)

// pick returns the shipped rows with the given ids, in that order.
func pick(t *testing.T, ids ...string) []battery.Row {
	t.Helper()
	rows, err := battery.Shipped()
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]battery.Row{}
	for _, r := range rows {
		byID[r.ID] = r
	}
	var out []battery.Row
	for _, id := range ids {
		r, ok := byID[id]
		if !ok {
			t.Fatalf("no shipped row %s", id)
		}
		out = append(out, r)
	}
	return out
}

func quotas(t *testing.T) *battery.Quotas {
	t.Helper()
	q, err := battery.ShippedQuotas()
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func rowResult(t *testing.T, rep *battery.Report, id string) *battery.RowResult {
	t.Helper()
	for i := range rep.Rows {
		if rep.Rows[i].Row.ID == id {
			return &rep.Rows[i]
		}
	}
	t.Fatalf("no result for %s", id)
	return nil
}

// TestBrokenEngineCaught runs the whole shipped battery against the weak
// broken engine; the rows' arbiters (the rules' single en-passant evasion,
// the tables' 50-move draw) must catch both of its bugs, and the battery
// must fail.
func TestBrokenEngineCaught(t *testing.T) {
	engine := ucitest.BrokenEngine(t)
	rows, err := battery.Shipped()
	if err != nil {
		t.Fatal(err)
	}
	rep, err := battery.Run(context.Background(), battery.Config{Engine: engine, Args: []string{"-mode", "weak"}, Nodes: 1, Repetitions: 2}, rows, quotas(t))
	if err != nil {
		t.Fatal(err)
	}
	for id, why := range map[string]string{
		"must-krk-clock-88":  "reported mate 15 where no mate exists",
		"rules-ep-evasion-1": "bestmove (none), but the position has legal moves",
		"rules-ep-evasion-2": "bestmove (none), but the position has legal moves",
	} {
		rr := rowResult(t, rep, id)
		if rr.Pass {
			t.Errorf("%s passed", id)
		}
		for _, a := range rr.Attempts {
			if !strings.Contains(a.Failure, why) {
				t.Errorf("%s: rep %d at %d: failure %q, want %q", id, a.Pass.Repetition, a.Pass.Nodes, a.Failure, why)
			}
		}
	}
	if rep.OK() || rep.MandatoryFailed == 0 || rep.TestErrors != 0 {
		t.Errorf("report OK %v, %d P rows failed, %d test errors; want a failed battery without test errors", rep.OK(), rep.MandatoryFailed, rep.TestErrors)
	}
	failed := 0
	for _, rr := range rep.Rows {
		if !rr.Pass {
			failed++
		}
	}
	t.Logf("the broken engine fails %d of %d rows (%d P)", failed, len(rep.Rows), rep.MandatoryFailed)
}

// TestEngineFaults: an engine that crashes, hangs, prints garbage, plays
// an illegal move or never answers fails its rows with a clear reason,
// within the timeout, and the battery goes on.
func TestEngineFaults(t *testing.T) {
	engine := ucitest.BrokenEngine(t)
	rows := pick(t, "rules-single-back-rank", "rules-dead-kbk")
	// Where the fault is a silence, which only a timeout ends: in the
	// handshake or in an exchange after it. With StartTimeout unset,
	// Timeout bounds the handshake too.
	const (
		loud = iota
		silentStart
		silentExchange
		silentStartNoStartTimeout
	)
	for _, tc := range []struct {
		mode, why string
		silent    int
	}{
		{"crash", "engine exited (exit status 3)", loud},
		{"hang", "engine did not answer: context deadline exceeded", silentExchange},
		{"garbage", `protocol error: info depth "x"`, loud},
		{"illegal", `illegal best move "a1a1"`, loud},
		{"noready", "waiting for readyok", silentExchange},
		{"nouci", "engine did not start: waiting for uciok", silentStart},
		{"nouci", "engine did not start: waiting for uciok", silentStartNoStartTimeout},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			// Only the silent phase gets the short timeout: the rest must
			// be named for what it is even when the test process is slow,
			// not cut short by a deadline meant for a hang.
			const short = 300 * time.Millisecond
			cfg := battery.Config{Engine: engine, Args: []string{"-mode", tc.mode}, Nodes: 10, Repetitions: 2,
				Timeout: battery.DefaultTimeout, StartTimeout: battery.DefaultTimeout}
			switch tc.silent {
			case silentStart:
				cfg.StartTimeout = short
			case silentExchange:
				cfg.Timeout = short
			case silentStartNoStartTimeout:
				cfg.Timeout, cfg.StartTimeout = short, 0
			}
			rep, err := battery.Run(context.Background(), cfg, rows, quotas(t))
			if err != nil {
				t.Fatal(err)
			}
			for _, rr := range rep.Rows {
				if len(rr.Attempts) != 4 {
					t.Fatalf("%s: %d attempts, want 4 (2 budgets, 2 repetitions)", rr.Row.ID, len(rr.Attempts))
				}
				for _, a := range rr.Attempts {
					if a.Passed() || !strings.Contains(a.Failure, tc.why) {
						t.Errorf("%s: failure %q, want %q", rr.Row.ID, a.Failure, tc.why)
					}
					// Each pass starts an engine for its first row, and
					// a fresh one after a protocol failure.
					if rr.Row.ID == rows[0].ID && !strings.Contains(a.Log, "> uci\n") {
						t.Errorf("%s: the log lacks the handshake of the engine started for it:\n%s", rr.Row.ID, a.Log)
					}
				}
			}
			if rep.OK() || rep.MandatoryFailed != len(rows) {
				t.Errorf("OK %v with %d P failures", rep.OK(), rep.MandatoryFailed)
			}
		})
	}
}

// TestDisagreeingRepetitionsAreATestError: an engine that answers
// differently in the second repetition makes the battery a test error,
// never a pass, and the command exits 3.
func TestDisagreeingRepetitionsAreATestError(t *testing.T) {
	engine := ucitest.BrokenEngine(t)
	state := filepath.Join(t.TempDir(), "starts")
	rows := pick(t, "rules-dead-kbk")
	rep, err := battery.Run(context.Background(), battery.Config{Engine: engine, Args: []string{"-mode", "flaky", "-state", state}, Nodes: 10, Repetitions: 2}, rows, quotas(t))
	if err != nil {
		t.Fatal(err)
	}
	rr := rowResult(t, rep, "rules-dead-kbk")
	if rep.TestErrors != 2 || rr.Pass || rr.Budgets[0].Disagree == "" || rep.OK() {
		t.Errorf("test errors %d, row pass %v, budgets %+v; want both budgets to disagree", rep.TestErrors, rr.Pass, rr.Budgets)
	}
}

// TestCommand covers the command's interface: --list, a hidden part in
// --rows, bad row files, --json, and the exit statuses.
func TestCommand(t *testing.T) {
	engine := ucitest.BrokenEngine(t)
	dir := t.TempDir()
	hidden := filepath.Join(dir, "hidden.tsv")
	// A hidden row in a shipped group, judged by the rules: a stalemate.
	hiddenRow := "hidden-1\tP\trules\trules\t7k/8/6Q1/8/8/8/8/K7 b - - 0 1\tno-move; no-mate\tfen\n"
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("hidden.tsv", battery.Header+"\n"+hiddenRow)
	badGroup := write("badgroup.tsv", battery.Header+"\n"+strings.Replace(hiddenRow, "\trules\trules", "\tsecret\trules", 1))
	dup := write("dup.tsv", battery.Header+"\n"+strings.Replace(hiddenRow, "hidden-1", "must-krk-clock-88", 1))
	garbled := write("garbled.tsv", "not a row file\n")

	shipped, _ := battery.Shipped()
	run := func(c battery.Command) (int, string, string) {
		var out, errb bytes.Buffer
		code := c.Run(context.Background(), &out, &errb)
		return code, out.String(), errb.String()
	}
	code, out, _ := run(battery.Command{List: true, Rows: []string{hidden}})
	if lines := strings.Count(out, "\n"); code != 0 || lines != len(shipped)+2 || !strings.Contains(out, "hidden-1\t") {
		t.Errorf("--list: exit %d, %d lines; want 0 and the header, %d shipped rows and the hidden one", code, lines, len(shipped))
	}
	for _, bad := range []string{badGroup, dup, garbled, filepath.Join(dir, "missing.tsv")} {
		if code, _, errs := run(battery.Command{Engine: engine, Rows: []string{bad}}); code != battery.ExitUsage || errs == "" {
			t.Errorf("--rows %s: exit %d (%q), want %d with a reason", filepath.Base(bad), code, errs, battery.ExitUsage)
		}
	}
	if code, _, _ := run(battery.Command{}); code != battery.ExitUsage {
		t.Errorf("no engine: exit %d", code)
	}
	code, out, _ = run(battery.Command{Engine: ucitest.Wrapper(t, engine, "-mode", "weak"), Rows: []string{hidden}, Nodes: 1, JSON: true})
	if code != battery.ExitFail {
		t.Errorf("weak engine: exit %d, want %d", code, battery.ExitFail)
	}
	objects := 0
	dec := json.NewDecoder(strings.NewReader(out))
	for dec.More() {
		var o struct {
			ID       string
			Pass     bool
			Attempts []struct{ Log []string }
		}
		if err := dec.Decode(&o); err != nil {
			t.Fatal(err)
		}
		objects++
		if o.ID == "hidden-1" && !o.Pass {
			t.Errorf("hidden-1 failed against an engine that answers stalemate correctly")
		}
		if len(o.Attempts) != 4 || len(o.Attempts[0].Log) < 3 {
			t.Errorf("%s: %d attempts, log %v", o.ID, len(o.Attempts), o.Attempts)
		}
	}
	if objects != len(shipped)+1 {
		t.Errorf("%d JSON objects, want one per row (%d)", objects, len(shipped)+1)
	}
	state := filepath.Join(dir, "starts")
	if code, _, _ := run(battery.Command{Engine: ucitest.Wrapper(t, engine, "-mode", "flaky", "-state", state), Nodes: 1}); code != battery.ExitTestError {
		t.Errorf("flaky engine: exit %d, want %d", code, battery.ExitTestError)
	}
}

// TestStockfish runs a bounded battery against Debian's stockfish: the
// issue's two must-hold rows, the en-passant evasions, rows without a
// legal move, a mate from the games, at the default budget. Stockfish is
// a real engine, the expected values are the arbiters'.
func TestStockfish(t *testing.T) {
	sf := ucitest.Stockfish(t)
	rows := pick(t, "must-mated-in-3", "must-krk-clock-88", "rules-ep-evasion-1", "rules-ep-evasion-2",
		"rules-checkmated", "rules-stalemate", "game-opera-b1", "game-immortal-b2")
	rep, err := battery.Run(context.Background(), battery.Config{Engine: sf, Nodes: battery.DefaultNodes, Repetitions: 2}, rows, quotas(t))
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	rep.WriteText(&text)
	if !rep.OK() {
		t.Errorf("stockfish fails:\n%s", text.String())
	}
	if !strings.HasPrefix(rep.Engine, "Stockfish") {
		t.Errorf("engine name %q", rep.Engine)
	}
	for _, rr := range rep.Rows {
		for _, a := range rr.Attempts {
			if !strings.Contains(a.Log, "> go nodes ") || !strings.Contains(a.Log, "< bestmove ") {
				t.Errorf("%s: incomplete log:\n%s", rr.Row.ID, a.Log)
			}
		}
	}
	t.Log("\n" + text.String())
}
