package uci_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tbfs/tbfs/internal/testkit/ucitest"
	"github.com/tbfs/tbfs/uci"
)

// The single legal move of this position is the rules' arbiter for the
// broken engine's weak mode, which plays its first legal move.
const oneMove = "R5k1/5pp1/7p/8/8/8/8/6K1 b - - 0 1"

func start(t *testing.T, timeout time.Duration, args ...string) *uci.Engine {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	e, err := uci.Start(ctx, ucitest.BrokenEngine(t), args...)
	if err != nil {
		t.Fatalf("start: %v\n%s", err, e.Log())
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func TestSearchAndLog(t *testing.T) {
	e := start(t, 10*time.Second)
	if e.Name != "brokenuci weak" || !e.Options["Threads"] {
		t.Errorf("handshake: name %q, options %v", e.Name, e.Options)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.NewGame(ctx); err != nil {
		t.Fatal(err)
	}
	s, err := e.GoNodes(ctx, oneMove, 100)
	if err != nil {
		t.Fatal(err)
	}
	if s.BestMove != "g8h7" || !s.HasScore {
		t.Errorf("search %+v, want bestmove g8h7 with a score", s)
	}
	log := e.Log()
	for _, want := range []string{"> uci\n", "< uciok\n", "> position fen " + oneMove + "\n", "> go nodes 100\n", "< bestmove g8h7\n"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}

// Every fault ends in an error naming it, within the context's bound.
func TestFaults(t *testing.T) {
	engine := ucitest.BrokenEngine(t)
	for _, tc := range []struct {
		mode string
		want error  // errors.Is target, nil to match text only
		text string // in the error
	}{
		{"crash", uci.ErrEngineExited, "exit status 3"},
		{"hang", context.DeadlineExceeded, "did not answer"},
		{"garbage", uci.ErrProtocol, `info depth "x"`},
		{"noready", context.DeadlineExceeded, "readyok"},
		{"flood", uci.ErrProtocol, "token too long"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			e, err := uci.Start(ctx, engine, "-mode", tc.mode)
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			// Only the faults that are silences should meet the short
			// deadline; a crash or bad output must be named as such even
			// when the test process is slow to read it.
			bound := ctx
			if tc.want == context.DeadlineExceeded {
				short, cancel2 := context.WithTimeout(ctx, 300*time.Millisecond)
				defer cancel2()
				bound = short
			}
			err = e.NewGame(bound)
			if err == nil {
				_, err = e.GoNodes(bound, oneMove, 100)
			}
			if err == nil || !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.text) {
				t.Errorf("error %v, want %v containing %q\n%s", err, tc.want, tc.text, e.Log())
			}
			if tc.mode == "crash" && !strings.Contains(e.Log(), "! brokenuci: crashing as asked\n") {
				t.Errorf("error %v, want %v containing %q\n%s", err, tc.want, tc.text, e.Log())
			}
		})
	}
	t.Run("nouci", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		e, err := uci.Start(ctx, engine, "-mode", "nouci")
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(e.Log(), "< hello?") {
			t.Errorf("error %v, want a deadline; log:\n%s", err, e.Log())
		}
	})
	t.Run("missing", func(t *testing.T) {
		if _, err := uci.Start(context.Background(), engine+"-not-there"); err == nil {
			t.Error("no error for a missing executable")
		}
	})
}

// TestCloseLogsUnread: an answer the engine printed that no call read is
// in the log once the engine is closed, so a call that timed out just
// before the answer came still shows it. The engine answers isready with
// readyok (the UCI protocol) before it reads the quit Close sends.
func TestCloseLogsUnread(t *testing.T) {
	e := start(t, 10*time.Second)
	if err := e.Send("isready"); err != nil {
		t.Fatal(err)
	}
	e.Close()
	log := e.Log()
	if !strings.Contains(log, "< readyok\n") {
		t.Errorf("log lacks the unread readyok:\n%s", log)
	}
}
