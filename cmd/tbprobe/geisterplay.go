package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tbfs/tbfs/cmd/internal/cli"
	"github.com/tbfs/tbfs/cmd/internal/tables"
	model "github.com/tbfs/tbfs/format/geister"
	"github.com/tbfs/tbfs/geister/gat"
	"github.com/tbfs/tbfs/geister/gat/match"
	"github.com/tbfs/tbfs/geister/gat/player"
)

// geisterPlayLong is geister play's help text.
const geisterPlayLong = `Plays one game of Geister as a GAT-protocol client (docs/gat.md). Connect to
the server's first-player port (10000 by default) or second-player port
(10001). Each move: escape if an own blue stands on an exit; else, when the
tables cover every colouring of the opponent's pieces the board allows, a
move best in all of them; else the confident ranking over the tables
(fewest colourings lost, then most won); else a heuristic (see
geister/gat/player). One line per move and the
result go to standard output. Exit status 0 when the game ended (won, lost
or drawn), 1 when it broke off (time-out, disconnect, malformed message) or
the server refused a command (NG), 2 for a usage error.`

// geisterServeLong is geister serve's help text.
const geisterServeLong = `Runs GAT-protocol Geister matches (docs/gat.md): the first player connects to
--listen (default 127.0.0.1:10000), the second to --listen2 (default: the
same host, the next port). The addresses are printed first, then a readable
log of each match. A client that sends a malformed or illegal command, misses
the --timeout or disconnects loses. --setup gives a custom start (a GAT
board from the first player's view with every colour known, captured pieces
as 99). With --matches 0 the server runs until interrupted.`

// geisterPlayOptions are the flags of "tbprobe geister play".
type geisterPlayOptions struct {
	tables      []string
	server, red string
	timeout     time.Duration
	metadataTTL tables.MetadataTTL
	manifests   tables.ManifestDir
}

// newGeisterPlayCmd is "tbprobe geister play".
func newGeisterPlayCmd() *cobra.Command {
	var o geisterPlayOptions
	cmd := &cobra.Command{
		Use:   "play --server HOST:PORT [flags]",
		Short: "Play one game of Geister as a GAT-protocol client",
		Long:  geisterPlayLong,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cli.Exit(runGeisterPlayCmd(cmd.Context(), o, args, cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
	fs := cmd.Flags()
	registerGeisterTables(fs, &o.tables)
	fs.StringVar(&o.server, "server", "", "the server's address, HOST:PORT")
	fs.StringVar(&o.red, "red", "ABCD", "the four own pieces to make red")
	fs.DurationVar(&o.timeout, "timeout", 5*time.Minute, "longest wait for the server (includes the opponent's thinking)")
	o.metadataTTL.Register(fs, geisterTTLUsage)
	o.manifests.Register(fs)
	return cmd
}

// runGeisterPlayCmd plays one game and returns the exit status.
func runGeisterPlayCmd(ctx context.Context, o geisterPlayOptions, args []string, stdout, stderr io.Writer) int {
	tables := o.tables
	if o.server == "" || len(args) > 0 {
		fmt.Fprintln(stderr, "tbprobe geister play: give --server HOST:PORT and no other arguments")
		return 2
	}
	setMsg, err := gat.ParseClient("SET:" + o.red)
	if err != nil {
		fmt.Fprintf(stderr, "tbprobe geister play: --red %q: %v\n", o.red, err)
		return 2
	}
	gt, err := openGeister(ctx, tables, o.manifests, model.Options{MissingTTL: o.metadataTTL.TTL()})
	if err != nil {
		fmt.Fprintf(stderr, "tbprobe geister play: %v\n", err)
		return 2
	}
	defer gt.Close()
	tb := gt.Tablebase
	pol := &player.Tables{TB: tb, Red: setMsg.Red, OnError: func(err error) {
		fmt.Fprintf(stderr, "tbprobe geister play: tables failed, using the heuristic for this move: %v\n", err)
	}}
	var d net.Dialer
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	conn, err := d.DialContext(dctx, "tcp", o.server)
	cancel()
	if err != nil {
		fmt.Fprintf(stderr, "tbprobe geister play: %v\n", err)
		return 1
	}
	out, err := player.Play(ctx, conn, pol, player.Options{Timeout: o.timeout, Log: stdout})
	switch {
	case err != nil && out.Result != 0:
		fmt.Fprintf(stderr, "tbprobe geister play: %v; then the server ended the game (%s)\n", err, out.Result)
		return 1
	case err != nil:
		fmt.Fprintf(stderr, "tbprobe geister play: game broken off after %d moves: %v\n", len(out.Decisions), err)
		return 1
	}
	return 0
}

// geisterServeOptions are the flags of "tbprobe geister serve".
type geisterServeOptions struct {
	listen, listen2, setup string
	matches, maxPlies      int
	timeout                time.Duration
}

// newGeisterServeCmd is "tbprobe geister serve".
func newGeisterServeCmd() *cobra.Command {
	var o geisterServeOptions
	cmd := &cobra.Command{
		Use:   "serve [flags]",
		Short: "Run GAT-protocol Geister matches",
		Long:  geisterServeLong,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cli.Exit(runGeisterServeCmd(cmd.Context(), o, args, cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.listen, "listen", "127.0.0.1:10000", "the first player's address")
	fs.StringVar(&o.listen2, "listen2", "", "the second player's address (default: --listen's host, next port)")
	fs.StringVar(&o.setup, "setup", "", "a custom start position (GAT board, first player's view, every colour known)")
	fs.IntVar(&o.matches, "matches", 0, "stop after this many matches (0: run until interrupted)")
	fs.DurationVar(&o.timeout, "timeout", match.DefaultTimeout, "longest wait for a client's reply")
	fs.IntVar(&o.maxPlies, "max-plies", gat.DefaultMaxPlies, "moves after which the game is drawn")
	return cmd
}

// runGeisterServeCmd runs the matches and returns the exit status.
func runGeisterServeCmd(ctx context.Context, o geisterServeOptions, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 || o.matches < 0 || o.maxPlies <= 0 || o.timeout <= 0 {
		fmt.Fprintln(stderr, "tbprobe geister serve: bad arguments (see -h)")
		return 2
	}
	if o.setup != "" {
		if _, err := gat.ParseSetup(o.setup); err != nil {
			fmt.Fprintf(stderr, "tbprobe geister serve: --setup: %v\n", err)
			return 2
		}
	}
	second := o.listen2
	if second == "" {
		host, port, err := net.SplitHostPort(o.listen)
		n, perr := strconv.Atoi(port)
		if err != nil || perr != nil {
			fmt.Fprintf(stderr, "tbprobe geister serve: --listen %q is not HOST:PORT\n", o.listen)
			return 2
		}
		if n != 0 {
			n++
		}
		second = net.JoinHostPort(host, strconv.Itoa(n))
	}
	var lc net.ListenConfig
	var ls [2]net.Listener
	for i, addr := range []string{o.listen, second} {
		l, err := lc.Listen(ctx, "tcp", addr)
		if err != nil {
			fmt.Fprintf(stderr, "tbprobe geister serve: %v\n", err)
			return 1
		}
		defer l.Close()
		ls[i] = l
	}
	fmt.Fprintf(stdout, "first player: %s\nsecond player: %s\n", ls[0].Addr(), ls[1].Addr())
	opts := match.Options{Setup: o.setup, MaxPlies: o.maxPlies, Timeout: o.timeout, Log: stdout}
	for n := 1; o.matches == 0 || n <= o.matches; n++ {
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
