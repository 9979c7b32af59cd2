// Package match runs GAT-protocol Geister matches between two clients: it
// accepts the first player on one listener and the second on another, asks
// both for their setups, relays boards and moves, enforces the rules
// (gat.Game), and ends the game with WON, LST or DRW and the revealed
// board. A client that sends a malformed or illegal command, misses its
// deadline or disconnects loses; the server itself never waits without a
// deadline once both clients are connected.
package match

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/tbfs/tbfs/geister"
	"github.com/tbfs/tbfs/geister/gat"
)

// Options configures a match.
type Options struct {
	// Setup is a custom start position (see gat.ParseSetup); empty means
	// the standard start with the colours the clients choose. With a
	// custom setup the clients are still asked SET? (so every client
	// sees the same exchange) but their answers do not change the
	// colours.
	Setup string
	// MaxPlies draws the game after this many moves (0: 300).
	MaxPlies int
	// Timeout bounds each wait for a client's reply (0: 10 s).
	Timeout time.Duration
	// Log receives the readable match log; nil discards it.
	Log io.Writer
}

// DefaultTimeout is the reply deadline when Options.Timeout is 0.
const DefaultTimeout = 10 * time.Second

// Record is one move of a match.
type Record struct {
	// Ply counts from 1.
	Ply int
	// Player is 0 (first) or 1 (second).
	Player int
	// Piece (0..7, A..H) and Dir are the move in the mover's coordinates.
	Piece int
	Dir   geister.Dir
	// Taken is the colour captured, 'R', 'B' or 0.
	Taken byte
	// Before is the position the mover moved from, from its side, with
	// every colour known (the server's truth).
	Before geister.Position
}

// Result is how a match ended.
type Result struct {
	// Winner is 0, 1 or gat.Draw.
	Winner int
	// Reason says why the game ended.
	Reason string
	// Plies counts the moves made.
	Plies   int
	Records []Record
	// Final holds each player's end-of-game board as sent.
	Final [2]gat.Board
}

// player is one connected client.
type player struct {
	conn *gat.Conn
	err  error // the setup failure, if any
	set  gat.Message
}

// Run plays one match: it accepts one client on first (the first player)
// and one on second, plays the game and closes both connections. Faults
// of a client end the game with that client's loss and are part of the
// Result; Run's error is for a bad Setup, a listener failure, or ctx
// ending before the game is over.
func Run(ctx context.Context, first, second net.Listener, opts Options) (*Result, error) {
	var g *gat.Game
	if opts.Setup != "" {
		var err error
		if g, err = gat.ParseSetup(opts.Setup); err != nil {
			return nil, err
		}
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	m := &matchRun{opts: opts, log: io.Discard}
	if opts.Log != nil {
		// Both players' setups are read at once and both log.
		m.log = &lockedWriter{w: opts.Log}
	}
	players, err := m.connect(ctx, [2]net.Listener{first, second})
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, p := range players {
			p.conn.Close()
		}
	}()
	if g == nil {
		var red [2][4]int
		for i, p := range players {
			red[i] = p.set.Red
			if p.err != nil {
				// The game is lost already; A..D red keeps the
				// revealed board well formed.
				red[i] = [4]int{0, 1, 2, 3}
			}
		}
		g = gat.NewGame(red[0], red[1])
	}
	g.MaxPlies = opts.MaxPlies
	m.g = g
	fmt.Fprintf(m.log, "start (player 1's view, colours revealed): %s\n%s", g.View(0, true), g.View(0, true).Diagram())
	for i, p := range players {
		if p.err != nil {
			if players[1-i].err != nil {
				return m.finish(ctx, players, gat.Draw, "both players failed the setup")
			}
			g.Forfeit(i, fmt.Sprintf("player %d failed the setup: %v", i+1, p.err))
		}
	}
	res := &Result{}
	for {
		if over, _, _ := g.Over(); over {
			break
		}
		if err := ctx.Err(); err != nil {
			m.finish(context.WithoutCancel(ctx), players, gat.Draw, "the server stopped: "+err.Error())
			return nil, err
		}
		turn := g.Turn()
		rec, err := m.play(ctx, players[turn].conn, turn)
		if err != nil {
			if ctx.Err() != nil {
				continue // reported at the top of the loop
			}
			g.Forfeit(turn, fmt.Sprintf("player %d: %v", turn+1, err))
			continue
		}
		res.Records = append(res.Records, rec)
	}
	_, winner, reason := g.Over()
	fin, err := m.finish(ctx, players, winner, reason)
	if fin != nil {
		fin.Records = res.Records
	}
	return fin, err
}

// lockedWriter serialises writes to the match log.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// matchRun is the state of one Run.
type matchRun struct {
	opts Options
	log  io.Writer
	g    *gat.Game
}

// connect accepts both clients and reads their setups. It returns only when
// both are connected (or ctx ends or a listener fails).
func (m *matchRun) connect(ctx context.Context, ls [2]net.Listener) ([2]*player, error) {
	type accepted struct {
		i   int
		p   *player
		err error
	}
	// A failing listener stops the wait for the other client too.
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := make(chan accepted, 2)
	for i, l := range ls {
		go func() {
			p, err := m.accept(actx, l, i)
			ch <- accepted{i, p, err}
		}()
	}
	var players [2]*player
	var errs []error
	for range ls {
		a := <-ch
		if a.err != nil {
			cancel()
			errs = append(errs, a.err)
			continue
		}
		players[a.i] = a.p
	}
	if len(errs) > 0 {
		for _, p := range players {
			if p != nil {
				p.conn.Close()
			}
		}
		return players, errors.Join(errs...)
	}
	return players, nil
}

// deadliner is a listener whose Accept can be interrupted, as
// *net.TCPListener is.
type deadliner interface{ SetDeadline(time.Time) error }

// accept waits for player i's client on l and asks for its setup.
func (m *matchRun) accept(ctx context.Context, l net.Listener, i int) (*player, error) {
	if d, ok := l.(deadliner); ok {
		stop := context.AfterFunc(ctx, func() { d.SetDeadline(time.Unix(1, 0)) })
		defer func() {
			if !stop() {
				d.SetDeadline(time.Time{})
			}
		}()
	}
	c, err := l.Accept()
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("match: waiting for player %d: %w", i+1, ctx.Err())
		}
		return nil, fmt.Errorf("match: accept player %d on %s: %w", i+1, l.Addr(), err)
	}
	p := &player{conn: gat.NewConn(c, m.opts.Timeout)}
	fmt.Fprintf(m.log, "player %d connected from %s\n", i+1, c.RemoteAddr())
	if p.err = p.conn.WriteLine(ctx, "SET?"); p.err != nil {
		return p, nil
	}
	for attempt := 1; ; attempt++ {
		line, err := p.conn.ReadLine(ctx)
		if err != nil {
			p.err = err
			return p, nil
		}
		msg, err := gat.ParseClient(line)
		if err == nil && msg.Kind != gat.Set {
			err = fmt.Errorf("%w: %q is not a SET: reply", gat.ErrSyntax, gat.Clean(line))
		}
		if err != nil {
			// The reference refuses a bad setup and waits for another
			// (GameServer.parse ends the game only for moves); the
			// attempts are bounded so that no client can stall a match.
			p.conn.WriteLine(ctx, refused)
			fmt.Fprintf(m.log, "player %d %q NG: %v\n", i+1, gat.Clean(line), err)
			if attempt == SetAttempts {
				p.err = fmt.Errorf("%d setups refused, the last: %w", attempt, err)
				return p, nil
			}
			continue
		}
		p.set = msg
		fmt.Fprintf(m.log, "player %d %s OK\n", i+1, msg)
		p.err = p.conn.WriteLine(ctx, accepted)
		return p, nil
	}
}

// SetAttempts is how many SET: replies a client may send before one is
// accepted; after that many refusals it loses.
const SetAttempts = 5

// The reference's plain acknowledgements, padded to three characters.
var (
	accepted = gat.Message{Kind: gat.Accepted}.String()
	refused  = gat.Message{Kind: gat.Refused}.String()
)

// play asks player turn for its move and makes it.
func (m *matchRun) play(ctx context.Context, c *gat.Conn, turn int) (Record, error) {
	g := m.g
	rec := Record{Ply: g.Ply + 1, Player: turn, Before: g.Position(turn)}
	if err := c.WriteLine(ctx, "MOV?"+g.View(turn, false).String()); err != nil {
		return rec, err
	}
	line, err := c.ReadLine(ctx)
	if err != nil {
		return rec, err
	}
	msg, err := gat.ParseClient(line)
	if err == nil && msg.Kind != gat.MoveCmd {
		err = fmt.Errorf("%w: %q is not a MOV: reply", gat.ErrSyntax, gat.Clean(line))
	}
	if err == nil {
		rec.Piece, rec.Dir = msg.Piece, msg.Dir
		rec.Taken, err = g.Move(turn, msg.Piece, msg.Dir)
	}
	if err != nil {
		fmt.Fprintf(m.log, "ply %d player %d %q NG: %v\n", rec.Ply, turn+1, gat.Clean(line), err)
		// Then the game ends, as the reference's does by default
		// (GameServer.parse with NG_TERMINATE): the culprit loses.
		c.WriteLine(ctx, refused)
		return rec, err
	}
	ok := gat.Message{Kind: gat.Accepted, Taken: rec.Taken}
	taken := ""
	if rec.Taken != 0 {
		taken = " takes " + map[byte]string{'R': "red", 'B': "blue"}[rec.Taken]
	}
	fmt.Fprintf(m.log, "ply %d player %d %s%s; board %s\n", rec.Ply, turn+1, msg, taken, g.View(0, true))
	if err := c.WriteLine(ctx, ok.String()); err != nil {
		// The move stands; the loss of the connection shows at the
		// player's next turn or in the final message.
		fmt.Fprintf(m.log, "ply %d player %d: %v\n", rec.Ply, turn+1, err)
	}
	return rec, nil
}

// finish sends each client its result with the revealed board and logs it.
func (m *matchRun) finish(ctx context.Context, players [2]*player, winner int, reason string) (*Result, error) {
	res := &Result{Winner: winner, Reason: reason, Plies: m.g.Ply}
	// The winner is told first, as the reference does.
	order := [2]int{0, 1}
	if winner == 1 {
		order = [2]int{1, 0}
	}
	for _, i := range order {
		p := players[i]
		kind := gat.Drawn
		switch winner {
		case i:
			kind = gat.Won
		case 1 - i:
			kind = gat.Lost
		}
		msg := gat.Message{Kind: kind, Board: m.g.View(i, true)}
		res.Final[i] = msg.Board
		if err := p.conn.WriteLine(ctx, msg.String()); err != nil {
			fmt.Fprintf(m.log, "result to player %d: %v\n", i+1, err)
		}
	}
	switch winner {
	case gat.Draw:
		fmt.Fprintf(m.log, "result: draw after %d plies: %s\n", res.Plies, reason)
	default:
		fmt.Fprintf(m.log, "result: player %d won after %d plies: %s\n", winner+1, res.Plies, reason)
	}
	fmt.Fprintf(m.log, "final board (player 1's view): %s\n%s", res.Final[0], res.Final[0].Diagram())
	return res, nil
}
