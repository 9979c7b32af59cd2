package match_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/tbfs/tbfs/geister/gat"
	"github.com/tbfs/tbfs/geister/gat/match"
	"github.com/tbfs/tbfs/geister/gat/player"
)

// FuzzMatch lets the first client send arbitrary bytes (then close) while
// the second is our client: the server must end the game with a legal
// result, never panic or hang, and the well-behaved client must be told
// its result in a message it can read.
func FuzzMatch(f *testing.F) {
	for _, s := range []string{
		"SET:ABCD\r\nMOV:A,NORTH\r\nMOV:A,NORTH\r\nMOV:A,NORTH\r\nMOV:A,WEST\r\n",
		"SET:ABCD\r\nMOV:E,NORTH\r\n",
		"SET:EFGH\nMOV:B,N\nMOV:B,N\nMOV:B,N\nMOV:B,N\nMOV:B,E\n",
		"SET:AAAA\r\n",
		"garbage",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		var ls [2]net.Listener
		for i := range ls {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			ls[i] = l
		}
		type served struct {
			res *match.Result
			err error
		}
		sch := make(chan served, 1)
		go func() {
			res, err := match.Run(ctx, ls[0], ls[1], match.Options{Timeout: 5 * time.Second})
			sch <- served{res, err}
		}()
		pch := make(chan error, 1)
		var out *player.Outcome
		go func() {
			c, err := net.Dial("tcp", ls[1].Addr().String())
			if err != nil {
				pch <- err
				return
			}
			o, err := player.Play(ctx, c, &player.Tables{}, player.Options{Timeout: 20 * time.Second})
			out = o
			pch <- err
		}()
		c, err := net.Dial("tcp", ls[0].Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.Write([]byte(data))
		c.(*net.TCPConn).CloseWrite()
		s := <-sch
		if s.err != nil {
			t.Fatalf("Run: %v", s.err)
		}
		if err := <-pch; err != nil {
			t.Fatalf("our client: %v (server result %+v)", err, s.res)
		}
		if w := s.res.Winner; w != 0 && w != 1 && w != gat.Draw {
			t.Fatalf("winner %d", w)
		}
		want := map[int]gat.Kind{0: gat.Lost, 1: gat.Won, gat.Draw: gat.Drawn}[s.res.Winner]
		if out.Result != want {
			t.Fatalf("our client told %v, server result %+v", out.Result, s.res)
		}
	})
}
