package match_test

import (
	"bufio"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tbfs/tbfs/geister/gat"
	"github.com/tbfs/tbfs/geister/gat/match"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// client is a scripted test client.
type client struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

func dial(t *testing.T, addr string) *client {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(30 * time.Second))
	t.Cleanup(func() { c.Close() })
	return &client{t, c, bufio.NewReader(c)}
}

// expect reads one line and checks it.
func (c *client) expect(want string) {
	c.t.Helper()
	line, err := c.r.ReadString('\n')
	if err != nil {
		c.t.Fatalf("reading, want %q: %v", want, err)
	}
	if !strings.HasSuffix(line, "\r\n") {
		c.t.Fatalf("line %q does not end with CRLF", line)
	}
	if got := strings.TrimSuffix(line, "\r\n"); got != want {
		c.t.Fatalf("got %q, want %q", got, want)
	}
}

func (c *client) send(s string) {
	c.t.Helper()
	if _, err := c.c.Write([]byte(s + "\r\n")); err != nil {
		c.t.Fatal(err)
	}
}

// server starts one match on loopback and returns the two addresses and a
// channel with the result.
func server(t *testing.T, opts match.Options) (string, string, <-chan *match.Result, *strings.Builder) {
	t.Helper()
	var ls [2]net.Listener
	for i := range ls {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		ls[i] = l
	}
	var log strings.Builder
	opts.Log = &log
	ch := make(chan *match.Result, 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	done := make(chan struct{})
	go func() {
		defer close(done)
		res, err := match.Run(ctx, ls[0], ls[1], opts)
		if err != nil {
			t.Errorf("Run: %v", err)
		}
		ch <- res
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return ls[0].Addr().String(), ls[1].Addr().String(), ch, &log
}

const start1 = "14R24R34R44R15B25B35B45B41u31u21u11u40u30u20u10u"

// Exchanges written out by hand from the protocol (docs/gat.md): each line
// the server must send is the arbiter.
func TestExchanges(t *testing.T) {
	t.Run("escape wins", func(t *testing.T) {
		setup := "00B99b99b99b55R99r99r99r" + "30b99b99b99b31r99r99r99r"
		a1, a2, res, log := server(t, match.Options{Setup: setup})
		p1, p2 := dial(t, a1), dial(t, a2)
		p1.expect("SET?")
		p1.send("SET:EFGH")
		p1.expect("OK ")
		p2.expect("SET?")
		p2.send("SET:ABCD")
		p2.expect("OK ")
		p1.expect("MOV?00B99b99b99b55R99r99r99r30u99b99b99b31u99r99r99r")
		p1.send("MOV:A,WEST")
		p1.expect("OK ")
		p1.expect("WON:88b99b99b99b55R99r99r99r30b99b99b99b31r99r99r99r")
		// The second player's own a at (3,0) in the first's view is at
		// (2,5) in its own; the first's E at (5,5) is at (0,0).
		p2.expect("LST:25B99b99b99b24R99r99r99r88b99b99b99b00r99r99r99r")
		r := <-res
		if r.Winner != 0 || r.Plies != 1 {
			t.Fatalf("result %+v", r)
		}
		if !strings.Contains(log.String(), "result: player 1 won after 1 plies") {
			t.Errorf("log:\n%s", log)
		}
	})
	t.Run("captures are announced", func(t *testing.T) {
		setup := "22B99b99b99b55R99r99r99r" + "40b99b99b99b32r42r99r99r"
		a1, a2, res, _ := server(t, match.Options{Setup: setup, MaxPlies: 2})
		p1, p2 := dial(t, a1), dial(t, a2)
		p1.expect("SET?")
		p1.send("SET:ABCD")
		p1.expect("OK ")
		p2.expect("SET?")
		p2.send("SET:ABCD")
		p2.expect("OK ")
		p1.expect("MOV?22B99b99b99b55R99r99r99r40u99b99b99b32u42u99r99r")
		p1.send("MOV:A,E")
		p1.expect("OKR")
		// The second player sees its piece e captured (lower case) and
		// f at (1,3); the first's A now at (3,2) is at (2,3).
		p2.expect("MOV?15B99b99b99b99r13R99r99r23u99b99b99b00u99r99r99r")
		p2.send("MOV:a,north")
		p2.expect("OK ")
		p1.expect("DRW:32B99b99b99b55R99r99r99r41b99b99b99b99r42r99r99r")
		p2.expect("DRW:14B99b99b99b99r13R99r99r23b99b99b99b00r99r99r99r")
		if r := <-res; r.Winner != gat.Draw || r.Plies != 2 || r.Records[0].Taken != 'R' {
			t.Fatalf("result %+v", r)
		}
	})
}

// A client at fault loses: the other is told WON, the culprit NG (for a
// command) and LST.
func TestForfeits(t *testing.T) {
	t.Run("illegal move", func(t *testing.T) {
		a1, a2, res, log := server(t, match.Options{})
		p1, p2 := dial(t, a1), dial(t, a2)
		p1.expect("SET?")
		p1.send("SET:ABCD")
		p1.expect("OK ")
		p2.expect("SET?")
		p2.send("SET:ABCD")
		p2.expect("OK ")
		p1.expect("MOV?" + start1)
		p1.send("MOV:E,NORTH") // E at (1,5); (1,4) holds A
		p1.expect("NG ")
		p1.expect("LST:14R24R34R44R15B25B35B45B41r31r21r11r40b30b20b10b")
		p2.expect("WON:14R24R34R44R15B25B35B45B41r31r21r11r40b30b20b10b")
		if r := <-res; r.Winner != 1 || !strings.Contains(r.Reason, "illegal") {
			t.Fatalf("result %+v", r)
		}
		if !strings.Contains(log.String(), "NG") {
			t.Errorf("log:\n%s", log)
		}
	})
	t.Run("malformed setups until the last attempt", func(t *testing.T) {
		a1, a2, res, _ := server(t, match.Options{})
		p1, p2 := dial(t, a1), dial(t, a2)
		p1.expect("SET?")
		for i := 0; i < match.SetAttempts; i++ {
			p1.send("SET:ABC")
			p1.expect("NG ")
		}
		p2.expect("SET?")
		p2.send("SET:ABCD")
		p2.expect("OK ")
		// A player whose setup failed is shown with A..D red; the
		// winner is told first.
		line, _ := p2.r.ReadString('\n')
		if !strings.HasPrefix(line, "WON:") {
			t.Fatalf("player 2 got %q", line)
		}
		p1.expect("LST:14R24R34R44R15B25B35B45B41r31r21r11r40b30b20b10b")
		if r := <-res; r.Winner != 1 {
			t.Fatalf("result %+v", r)
		}
	})
	t.Run("disconnect mid-game", func(t *testing.T) {
		a1, a2, res, _ := server(t, match.Options{})
		p1, p2 := dial(t, a1), dial(t, a2)
		p1.expect("SET?")
		p1.send("SET:ABCD")
		p1.expect("OK ")
		p2.expect("SET?")
		p2.send("SET:ABCD")
		p2.expect("OK ")
		p1.expect("MOV?" + start1)
		p1.send("MOV:A,NORTH")
		p1.expect("OK ")
		// Player 1's A went from (1,4) to (1,3): (4,2) in player 2's view.
		p2.expect("MOV?14R24R34R44R15B25B35B45B42u31u21u11u40u30u20u10u")
		p2.c.Close()
		line, err := p1.r.ReadString('\n')
		if err != nil || !strings.HasPrefix(line, "WON:") {
			t.Fatalf("player 1 got %q, %v", line, err)
		}
		if r := <-res; r.Winner != 0 || !strings.Contains(r.Reason, "closed") {
			t.Fatalf("result %+v", r)
		}
	})
	t.Run("silent client", func(t *testing.T) {
		// Each client dials just before its setup so that only player
		// 1's silence can reach the short deadline.
		a1, a2, res, _ := server(t, match.Options{Timeout: time.Second})
		p1 := dial(t, a1)
		p1.expect("SET?")
		p1.send("SET:ABCD")
		p1.expect("OK ")
		p2 := dial(t, a2)
		p2.expect("SET?")
		p2.send("SET:ABCD")
		p2.expect("OK ")
		p1.expect("MOV?" + start1)
		// Player 1 never answers.
		p1.expect("LST:14R24R34R44R15B25B35B45B41r31r21r11r40b30b20b10b")
		p2.expect("WON:14R24R34R44R15B25B35B45B41r31r21r11r40b30b20b10b")
		if r := <-res; r.Winner != 1 || !strings.Contains(r.Reason, "timed out") {
			t.Fatalf("result %+v", r)
		}
	})
}

// Run gives up waiting for clients when its context ends.
func TestRunCancelWhileWaiting(t *testing.T) {
	var ls [2]net.Listener
	for i := range ls {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ls[i] = l
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := match.Run(ctx, ls[0], ls[1], match.Options{})
		errc <- err
	}()
	dial(t, ls[0].Addr().String()).expect("SET?")
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Run error %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return")
	}
}

func TestBadSetup(t *testing.T) {
	_, err := match.Run(context.Background(), nil, nil, match.Options{Setup: "nonsense"})
	if !errors.Is(err, gat.ErrSyntax) {
		t.Fatalf("Run = %v, want ErrSyntax", err)
	}
}

// TestTranscripts replays the hand-written exchanges in testdata/gat
// against the server, as both clients.
func TestTranscripts(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(testenv.Testdata(t, "gat"), "*.txt"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var setup string
			var steps []string
			for _, line := range strings.Split(string(data), "\n") {
				switch {
				case line == "", strings.HasPrefix(line, "#"):
				case strings.HasPrefix(line, "setup "):
					setup = strings.TrimPrefix(line, "setup ")
				default:
					steps = append(steps, line)
				}
			}
			replay(t, setup, steps)
		})
	}
}

// replay plays a transcript against a fresh server, as both clients: each
// step is "N< line" (the server must send exactly line, then CRLF, to
// player N) or "N> line" (player N sends it). The game must end.
func replay(t *testing.T, setup string, steps []string) {
	t.Helper()
	a1, a2, res, _ := server(t, match.Options{Setup: setup})
	clients := [2]*client{dial(t, a1), dial(t, a2)}
	for _, s := range steps {
		if len(s) < 3 || (s[0] != '1' && s[0] != '2') || (s[1] != '<' && s[1] != '>') {
			t.Fatalf("bad transcript line %q", s)
		}
		c := clients[s[0]-'1']
		// One space follows the arrow; the rest is the line, trailing
		// spaces included.
		text := strings.TrimPrefix(s[2:], " ")
		if s[1] == '<' {
			c.expect(text)
		} else {
			c.send(text)
		}
	}
	if r := <-res; r == nil {
		t.Fatal("no result")
	}
}
