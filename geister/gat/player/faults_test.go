package player_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/tbfs/tbfs/geister"
	"github.com/tbfs/tbfs/geister/gat"
	"github.com/tbfs/tbfs/geister/gat/player"
)

const startBoard = "14R24R34R44R15B25B35B45B41u31u21u11u40u30u20u10u"

// fakeServer accepts one client and runs script on it; the connection is
// closed when the script returns.
func fakeServer(t *testing.T, script func(w io.Writer, r *bufio.Reader)) string {
	t.Helper()
	l := listen(t)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(time.Minute))
		script(c, bufio.NewReader(c))
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
	})
	return l.Addr().String()
}

// setUp plays the SET exchange.
func setUp(w io.Writer, r *bufio.Reader) {
	io.WriteString(w, "SET?\r\n")
	r.ReadString('\n')
	io.WriteString(w, "OK \r\n")
}

// Each row is a server misbehaving; the client must stop with an error of
// the stated kind, in bounded time (the client's deadline is 1 s for the
// silent server, 10 s otherwise; the test's context allows 30 s).
func TestClientFaults(t *testing.T) {
	// A server that never speaks: the deadline ends the wait.
	// (The script returns when the client gives up and closes.)
	silent := func(w io.Writer, r *bufio.Reader) { r.ReadString('\n') }
	for _, tc := range []struct {
		name   string
		script func(w io.Writer, r *bufio.Reader)
		want   error
	}{
		{"garbage greeting", func(w io.Writer, r *bufio.Reader) { io.WriteString(w, "HELLO\r\n") }, gat.ErrSyntax},
		{"malformed board", func(w io.Writer, r *bufio.Reader) {
			setUp(w, r)
			io.WriteString(w, "MOV?14R24R34R44R15B25B35B45B41u31u21u11u40u30u20u1\r\n")
		}, gat.ErrSyntax},
		{"impossible board", func(w io.Writer, r *bufio.Reader) {
			setUp(w, r)
			// Five own blues cannot be.
			io.WriteString(w, "MOV?14B24R34R44R15B25B35B45B41u31u21u11u40u30u20u10u\r\n")
		}, geister.ErrInvalidPosition},
		{"endless line", func(w io.Writer, r *bufio.Reader) {
			io.WriteString(w, "SET?"+string(make([]byte, 4096)))
		}, gat.ErrSyntax},
		{"vanishes after SET", func(w io.Writer, r *bufio.Reader) { setUp(w, r) }, gat.ErrClosed},
		{"vanishes mid-game", func(w io.Writer, r *bufio.Reader) {
			setUp(w, r)
			io.WriteString(w, "MOV?"+startBoard+"\r\n")
			r.ReadString('\n')
			io.WriteString(w, "OK\r\n") // unpadded, as some servers send it
		}, gat.ErrClosed},
		{"vanishes mid-line", func(w io.Writer, r *bufio.Reader) {
			setUp(w, r)
			io.WriteString(w, "MOV?14R24R")
		}, gat.ErrClosed},
		{"refuses the move", func(w io.Writer, r *bufio.Reader) {
			setUp(w, r)
			io.WriteString(w, "MOV?"+startBoard+"\r\n")
			r.ReadString('\n')
			io.WriteString(w, "NG \r\n")
		}, player.ErrRefused},
		{"silent", silent, gat.ErrTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := fakeServer(t, tc.script)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			// Only the silent server should meet the deadline.
			timeout := 10 * time.Second
			if tc.want == gat.ErrTimeout {
				timeout = time.Second
			}
			out, err := player.Play(ctx, c, &player.Tables{}, player.Options{Timeout: timeout})
			if err == nil {
				t.Fatalf("Play = %+v, nil error", out)
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("Play error %v, want %v", err, tc.want)
			}
			if ctx.Err() != nil {
				t.Fatalf("the client needed the test's context to stop: %v", err)
			}
			t.Logf("%v", err)
		})
	}
}

// Cancelling the context stops a client waiting on a silent server.
func TestClientCancel(t *testing.T) {
	addr := fakeServer(t, func(w io.Writer, r *bufio.Reader) { r.ReadString('\n') })
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := player.Play(ctx, c, &player.Tables{}, player.Options{Timeout: time.Hour})
		errc <- err
	}()
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Play error %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Play did not return after cancel")
	}
}

// The reference server follows a refused move with the result
// (miyo/geister_server.java at 8ed0409, server/TCPServerWithBlock.java:
// 226 then 253-268): the client reports the refusal and still returns the
// LST it was sent.
func TestClientReadsResultAfterRefusal(t *testing.T) {
	const final = "14R24R34R44R15B25B35B45B41b31b21b11b40r30r20r10r"
	addr := fakeServer(t, func(w io.Writer, r *bufio.Reader) {
		setUp(w, r)
		io.WriteString(w, "MOV?"+startBoard+"\r\n")
		r.ReadString('\n')
		io.WriteString(w, "NG \r\nLST:"+final+"\r\n")
	})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := player.Play(ctx, c, &player.Tables{}, player.Options{Timeout: 10 * time.Second})
	if !errors.Is(err, player.ErrRefused) {
		t.Fatalf("Play error %v, want ErrRefused", err)
	}
	if out.Result != gat.Lost || out.Board.String() != final {
		t.Fatalf("outcome %v %s, want LST %s", out.Result, out.Board, final)
	}
}
