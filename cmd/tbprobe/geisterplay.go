package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/tbfs/tbfs/format/geister"
	"github.com/tbfs/tbfs/geister/gat"
	"github.com/tbfs/tbfs/geister/gat/match"
	"github.com/tbfs/tbfs/geister/gat/player"
	"github.com/tbfs/tbfs/source"
)

const geisterPlayUsage = `usage: tbprobe geister play --server HOST:PORT [--tables URL]... [--red ABCD] [--timeout D]

Plays one game of Geister as a GAT-protocol client (docs/gat.md). Connect to
the server's first-player port (10000 by default) or second-player port
(10001). Each move: escape if an own blue stands on an exit; else, when the
tables cover every colouring of the opponent's pieces the board allows, a
move best in all of them; else the reference's confident ranking over the
tables; else a heuristic (see geister/gat/player). One line per move and the
result go to standard output. Exit status 0 when the game ended (won, lost
or drawn), 1 when it broke off (time-out, disconnect, malformed message), 2
for a usage error.
`

const geisterServeUsage = `usage: tbprobe geister serve [--listen ADDR] [--listen2 ADDR] [--setup BOARD] [--matches N] [--timeout D] [--max-plies N]

Runs GAT-protocol Geister matches (docs/gat.md): the first player connects to
--listen (default 127.0.0.1:10000), the second to --listen2 (default: the
same host, the next port). The addresses are printed first, then a readable
log of each match. A client that sends a malformed or illegal command, misses
the --timeout or disconnects loses. --setup gives a custom start (a GAT
board from the first player's view with every colour known, captured pieces
as 99). With --matches 0 the server runs until interrupted.
`

// runGeisterPlay implements "tbprobe geister play".
func runGeisterPlay(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("geister play", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, geisterPlayUsage)
		fs.PrintDefaults()
	}
	var tables urlList
	fs.Var(&tables, "tables", "location of table files (repeatable; default: the repository's testdata/geister)")
	server := fs.String("server", "", "the server's address, HOST:PORT")
	red := fs.String("red", "ABCD", "the four own pieces to make red")
	timeout := fs.Duration("timeout", 5*time.Minute, "longest wait for the server (includes the opponent's thinking)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if *server == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "tbprobe geister play: give --server HOST:PORT and no other arguments")
		return 2
	}
	setMsg, err := gat.ParseClient("SET:" + *red)
	if err != nil {
		fmt.Fprintf(stderr, "tbprobe geister play: --red %q: %v\n", *red, err)
		return 2
	}
	if len(tables) == 0 {
		dir, err := defaultGeisterTables()
		if err != nil {
			fmt.Fprintf(stderr, "tbprobe geister play: %v; playing without tables\n", err)
		} else {
			tables = urlList{dir}
		}
	}
	var tb *geister.Tablebase
	if len(tables) > 0 {
		var srcs []source.Source
		defer func() {
			for _, s := range srcs {
				s.Close()
			}
		}()
		for _, u := range tables {
			s, err := source.Open(ctx, u)
			if err != nil {
				fmt.Fprintf(stderr, "tbprobe geister play: tables %s: %v\n", source.RedactURL(u), err)
				return 2
			}
			srcs = append(srcs, s)
		}
		if tb, err = geister.Open(geister.Options{}, srcs...); err != nil {
			fmt.Fprintf(stderr, "tbprobe geister play: %v\n", err)
			return 2
		}
		defer tb.Close()
	}
	pol := &player.Tables{TB: tb, Red: setMsg.Red, OnError: func(err error) {
		fmt.Fprintf(stderr, "tbprobe geister play: tables failed, using the heuristic for this move: %v\n", err)
	}}
	var d net.Dialer
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	conn, err := d.DialContext(dctx, "tcp", *server)
	cancel()
	if err != nil {
		fmt.Fprintf(stderr, "tbprobe geister play: %v\n", err)
		return 1
	}
	out, err := player.Play(ctx, conn, pol, player.Options{Timeout: *timeout, Log: stdout})
	if err != nil {
		fmt.Fprintf(stderr, "tbprobe geister play: game broken off after %d moves: %v\n", len(out.Decisions), err)
		return 1
	}
	return 0
}

// runGeisterServe implements "tbprobe geister serve".
func runGeisterServe(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("geister serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, geisterServeUsage)
		fs.PrintDefaults()
	}
	listen := fs.String("listen", "127.0.0.1:10000", "the first player's address")
	listen2 := fs.String("listen2", "", "the second player's address (default: --listen's host, next port)")
	setup := fs.String("setup", "", "a custom start position (GAT board, first player's view, every colour known)")
	matches := fs.Int("matches", 0, "stop after this many matches (0: run until interrupted)")
	timeout := fs.Duration("timeout", match.DefaultTimeout, "longest wait for a client's reply")
	maxPlies := fs.Int("max-plies", gat.DefaultMaxPlies, "moves after which the game is drawn")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 || *matches < 0 || *maxPlies <= 0 || *timeout <= 0 {
		fmt.Fprintln(stderr, "tbprobe geister serve: bad arguments (see -h)")
		return 2
	}
	if *setup != "" {
		if _, err := gat.ParseSetup(*setup); err != nil {
			fmt.Fprintf(stderr, "tbprobe geister serve: --setup: %v\n", err)
			return 2
		}
	}
	second := *listen2
	if second == "" {
		host, port, err := net.SplitHostPort(*listen)
		n, perr := strconv.Atoi(port)
		if err != nil || perr != nil {
			fmt.Fprintf(stderr, "tbprobe geister serve: --listen %q is not HOST:PORT\n", *listen)
			return 2
		}
		if n != 0 {
			n++
		}
		second = net.JoinHostPort(host, strconv.Itoa(n))
	}
	var lc net.ListenConfig
	var ls [2]net.Listener
	for i, addr := range []string{*listen, second} {
		l, err := lc.Listen(ctx, "tcp", addr)
		if err != nil {
			fmt.Fprintf(stderr, "tbprobe geister serve: %v\n", err)
			return 1
		}
		defer l.Close()
		ls[i] = l
	}
	fmt.Fprintf(stdout, "first player: %s\nsecond player: %s\n", ls[0].Addr(), ls[1].Addr())
	opts := match.Options{Setup: *setup, MaxPlies: *maxPlies, Timeout: *timeout, Log: stdout}
	for n := 1; *matches == 0 || n <= *matches; n++ {
		fmt.Fprintf(stdout, "match %d\n", n)
		res, err := match.Run(ctx, ls[0], ls[1], opts)
		if err != nil {
			if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
				fmt.Fprintf(stdout, "stopped: %v\n", ctx.Err())
				return 0
			}
			fmt.Fprintf(stderr, "tbprobe geister serve: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "match %d: %s\n", n, summary(res))
	}
	return 0
}

// summary states a match result in one line.
func summary(r *match.Result) string {
	var sb strings.Builder
	switch r.Winner {
	case gat.Draw:
		sb.WriteString("draw")
	default:
		fmt.Fprintf(&sb, "player %d won", r.Winner+1)
	}
	fmt.Fprintf(&sb, " after %d plies (%s)", r.Plies, r.Reason)
	return sb.String()
}
