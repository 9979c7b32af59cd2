package match_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tbfs/tbfs/geister/gat"
	"github.com/tbfs/tbfs/geister/gat/match"
	"github.com/tbfs/tbfs/geister/gat/player"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// The reference's own client (RandomPlayer on BasePlayer) plays whole games
// against our server to the end: its recv reads the acknowledgement's
// third character (player/BasePlayer.java:91-92), which crashed with a
// StringIndexOutOfBoundsException on an unpadded "OK". The arbiter is the
// reference client itself: it must exit normally, print no exception, and
// report the result our server recorded ("won", "lost" or "draw",
// RandomPlayer.java:34-40).
func TestReferenceClient(t *testing.T) {
	cp := testenv.GATReference(t)
	for _, tc := range []struct {
		name string
		ours int // the seat our table player takes, or -1 for none
	}{
		{"reference vs reference", -1},
		{"reference vs ours", 1},
		{"ours vs reference", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			a1, a2, results, _ := server(t, match.Options{Timeout: 30 * time.Second})
			addrs := [2]string{a1, a2}
			var javas [2]*exec.Cmd
			var outs [2]bytes.Buffer
			ourErr := make(chan error, 1)
			for i, addr := range addrs {
				_, port, _ := net.SplitHostPort(addr)
				if i == tc.ours {
					go func() {
						c, err := net.Dial("tcp", addr)
						if err != nil {
							ourErr <- err
							return
						}
						_, err = player.Play(ctx, c, &player.Tables{}, player.Options{Timeout: time.Minute})
						ourErr <- err
					}()
					continue
				}
				cmd := testenv.GATReferenceClient(ctx, cp, port)
				cmd.Stdout, cmd.Stderr = &outs[i], &outs[i]
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				javas[i] = cmd
			}
			for i, cmd := range javas {
				if cmd == nil {
					continue
				}
				if err := cmd.Wait(); err != nil {
					t.Errorf("reference client %d: %v\n%s", i+1, err, tail(outs[i].String()))
				}
			}
			if tc.ours >= 0 {
				if err := <-ourErr; err != nil {
					t.Errorf("our client: %v", err)
				}
			}
			res := <-results
			if res == nil {
				t.Fatal("the server gave no result")
			}
			for i, cmd := range javas {
				if cmd == nil {
					continue
				}
				text := outs[i].String()
				if strings.Contains(text, "Exception") {
					t.Errorf("reference client %d threw:\n%s", i+1, tail(text))
				}
				want := "draw"
				switch res.Winner {
				case i:
					want = "won"
				case 1 - i:
					want = "lost"
				}
				lines := strings.Fields(text)
				if len(lines) == 0 || lines[len(lines)-1] != want {
					t.Errorf("reference client %d ended with %q, server says %s (%s)", i+1, tail(text), want, res.Reason)
				}
			}
			t.Logf("%s after %d plies", resultWord(res), res.Plies)
		})
	}
}

func resultWord(r *match.Result) string {
	if r.Winner == gat.Draw {
		return "draw: " + r.Reason
	}
	return fmt.Sprintf("player %d won: %s", r.Winner+1, r.Reason)
}

// tail returns the end of a client's output, for messages.
func tail(s string) string {
	if len(s) > 600 {
		return "..." + s[len(s)-600:]
	}
	return s
}
