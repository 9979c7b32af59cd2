// Package player is a GAT-protocol Geister client: Play answers a server's
// SET? and MOV? messages with the choices of a Policy until the game ends.
// Tables is the policy driven by the perfect-information tables (escape
// when possible, else a move best in every colouring the observation
// allows, else a confident ranking over the colourings, else a simple
// heuristic).
package player

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/tbfs/tbfs/geister"
	"github.com/tbfs/tbfs/geister/gat"
)

// Choice is a move a policy picked, with why.
type Choice struct {
	// Piece is the own piece to move, 0..7 (A..H).
	Piece int
	// Dir is the direction; an escape is West from (0,0) or East from
	// (5,0).
	Dir geister.Dir
	// Reason is the rule that chose the move: ReasonEscape,
	// ReasonBestInAll, ReasonConfident or ReasonHeuristic (or a policy's
	// own word).
	Reason string
	// Detail says more, for the log.
	Detail string
}

// The reasons Tables gives.
const (
	ReasonEscape    = "escape"
	ReasonBestInAll = "best-in-all"
	ReasonConfident = "confident"
	ReasonHeuristic = "heuristic"
)

// Policy chooses a client's setup and moves.
type Policy interface {
	// Setup returns the four own pieces (indexes 0..7) to make red.
	Setup(ctx context.Context) ([4]int, error)
	// Choose returns a legal move on the board, which is the client's
	// view of the game before its move.
	Choose(ctx context.Context, b gat.Board) (Choice, error)
}

// Options configures Play.
type Options struct {
	// Timeout bounds each wait for the server (0: gat.DefaultTimeout).
	// It includes the opponent's thinking time, so it should be longer
	// than the server's own reply deadline.
	Timeout time.Duration
	// Log receives one line per exchange; nil discards them.
	Log io.Writer
}

// Decision is one move the client made.
type Decision struct {
	// Board is the server's board the move answered.
	Board  gat.Board
	Choice Choice
}

// Outcome is how a game ended for the client.
type Outcome struct {
	// Result is gat.Won, gat.Lost or gat.Drawn; 0 when the game did not
	// end properly (see Play's error).
	Result gat.Kind
	// Board is the final board the server revealed.
	Board     gat.Board
	Decisions []Decision
}

// ErrRefused is matched by Play's error when the server answers NG.
var ErrRefused = errors.New("player: the server refused the command")

// Play runs one game on c (already connected to the server's port for the
// first or second player) and closes c. It returns when the server sends
// WON, LST or DRW; a time-out, a closed connection, a malformed server
// message or ctx's end stop it with an error (the Outcome so far is
// returned with it). After an NG it reads on: the result that follows is
// returned in the Outcome, with an error matching ErrRefused.
func Play(ctx context.Context, c net.Conn, p Policy, opts Options) (*Outcome, error) {
	conn := gat.NewConn(c, opts.Timeout)
	defer conn.Close()
	log := opts.Log
	if log == nil {
		log = io.Discard
	}
	out := &Outcome{}
	last := ""        // the last command sent, for errors
	var refusal error // set once the server has answered NG
	for {
		line, err := conn.ReadLine(ctx)
		if err != nil {
			err = fmt.Errorf("player: waiting for the server after %d moves: %w", len(out.Decisions), err)
			if refusal != nil {
				err = errors.Join(refusal, err)
			}
			return out, err
		}
		msg, err := gat.ParseServer(line)
		if err != nil {
			return out, fmt.Errorf("player: %w", err)
		}
		switch msg.Kind {
		case gat.SetQuery:
			red, err := p.Setup(ctx)
			if err != nil {
				return out, fmt.Errorf("player: setup: %w", err)
			}
			last = gat.Message{Kind: gat.Set, Red: red}.String()
		case gat.MoveQuery:
			ch, err := p.Choose(ctx, msg.Board)
			if err != nil {
				return out, fmt.Errorf("player: choosing a move on %s: %w", msg.Board, err)
			}
			out.Decisions = append(out.Decisions, Decision{Board: msg.Board, Choice: ch})
			last = gat.Message{Kind: gat.MoveCmd, Piece: ch.Piece, Dir: ch.Dir}.String()
			fmt.Fprintf(log, "move %d: %s (%s%s)\n", len(out.Decisions), last, ch.Reason, detail(ch.Detail))
		case gat.Accepted:
			continue
		case gat.Refused:
			// The reference server follows a refused move with LST (a
			// refused SET: it leaves open for another try, which this
			// client, with its one setup, does not take); read on for
			// the result rather than drop it.
			refusal = fmt.Errorf("%w: %s", ErrRefused, last)
			fmt.Fprintf(log, "refused: %s\n", last)
			continue
		case gat.Won, gat.Lost, gat.Drawn:
			out.Result, out.Board = msg.Kind, msg.Board
			fmt.Fprintf(log, "result: %s after %d own moves; board %s\n", msg.Kind, len(out.Decisions), msg.Board)
			return out, refusal
		}
		if err := conn.WriteLine(ctx, last); err != nil {
			return out, fmt.Errorf("player: sending %s: %w", last, err)
		}
	}
}

func detail(s string) string {
	if s == "" {
		return ""
	}
	return ": " + s
}
