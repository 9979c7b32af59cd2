package player

import (
	"context"
	"errors"
	"fmt"
	"math/bits"

	"github.com/tbfs/tbfs/format/geister"
	"github.com/tbfs/tbfs/geister/gat"
)

// Tables is the table-driven policy. On each board it takes the first rule
// that applies:
//
//  1. escape: an own blue on an exit leaves the board (West from (0,0),
//     East from (5,0)), which wins at once;
//  2. best-in-all: when the tables cover every colouring of the opponent's
//     pieces that the board allows (the observation's material and every
//     child's), a move that is best in each of them;
//  3. confident: with the tables covering the moves, the reference's
//     "confident" ranking (fewest colourings lost, then the slowest loss,
//     else the most colourings won, then the fastest win);
//  4. heuristic: otherwise (see Heuristic).
//
// Ties are broken by board order: the lowest origin square (A1, B1, ...,
// F6 in the mover's view), then North, East, South, West. The policy is
// deterministic: the same board always gives the same move.
type Tables struct {
	// TB answers the probes; nil means the heuristic alone.
	TB *geister.Tablebase
	// Red names the four own pieces (0..7) made red at the start; the
	// zero value (not a valid setup) means DefaultRed.
	Red [4]int
	// OnError, when set, is told of table errors other than a missing
	// table (transport failures, corrupt data); the policy then falls
	// back to the heuristic for that move rather than lose on time.
	OnError func(error)
}

// DefaultRed is the setup Tables uses in tbprobe: the front row A..D red.
var DefaultRed = [4]int{0, 1, 2, 3}

// Setup returns t.Red, or DefaultRed when t.Red is the zero value. Four
// distinct pieces 0..7 are required.
func (t *Tables) Setup(ctx context.Context) ([4]int, error) {
	red := t.Red
	if red == [4]int{} {
		red = DefaultRed
	}
	var seen [8]bool
	for _, i := range red {
		if i < 0 || i > 7 || seen[i] {
			return red, fmt.Errorf("player: red pieces %v are not four distinct pieces 0..7", red)
		}
		seen[i] = true
	}
	return red, nil
}

// Choose picks the move for b.
func (t *Tables) Choose(ctx context.Context, b gat.Board) (Choice, error) {
	for i := 0; i < 8; i++ {
		p := b[i]
		if p.OnBoard() && p.Blue() && p.Y == 0 && (p.X == 0 || p.X == 5) {
			d := geister.West
			if p.X == 5 {
				d = geister.East
			}
			return Choice{Piece: i, Dir: d, Reason: ReasonEscape}, nil
		}
	}
	obs, err := b.Observation()
	if err != nil {
		return Choice{}, err
	}
	if t.TB != nil && obs.Material().Valid() {
		ov, err := t.TB.ObservationValues(ctx, obs)
		switch {
		case err == nil:
			if c, ok := fromTables(b, ov); ok {
				return c, nil
			}
		case errors.Is(err, geister.ErrNoTable):
		case ctx.Err() != nil:
			return Choice{}, ctx.Err()
		default:
			if t.OnError != nil {
				t.OnError(err)
			}
		}
	}
	return Heuristic(b, obs)
}

// fromTables applies rules 2 and 3 to the tables' answer.
func fromTables(b gat.Board, ov *geister.ObservationValues) (Choice, bool) {
	var wins, draws, losses int
	for _, c := range ov.Colourings {
		switch c.Result.Outcome {
		case geister.Win:
			wins++
		case geister.Loss:
			losses++
		default:
			draws++
		}
	}
	summary := fmt.Sprintf("%d colourings: %d won, %d drawn, %d lost", len(ov.Colourings), wins, draws, losses)
	pick := func(list []geister.Move, reason string) (Choice, bool) {
		// ObservationValues keeps Position.Moves order, which is board
		// order; the first is the tie-break's choice.
		if len(list) == 0 {
			return Choice{}, false
		}
		mv := list[0]
		i := b.At(mv.From.X(), mv.From.Y())
		if i < 0 || i >= 8 {
			return Choice{}, false
		}
		detail := summary
		for _, ms := range ov.Moves {
			if ms.From == mv.From && ms.Dir == mv.Dir {
				detail += fmt.Sprintf("; this move wins %d of them (longest win %d plies), draws %d, loses %d (quickest loss %d plies)",
					ms.Wins, ms.MaxWin, ms.Draws, ms.Losses, ms.MinLoss)
			}
		}
		return Choice{Piece: i, Dir: mv.Dir, Reason: reason, Detail: detail}, true
	}
	if c, ok := pick(ov.BestInAll, ReasonBestInAll); ok {
		return c, true
	}
	return pick(ov.Confident, ReasonConfident)
}

// Heuristic is the fallback policy where the tables do not reach. Among the
// legal moves it prefers, in order:
//
//  1. not capturing when the opponent has one red piece left on the board
//     (taking it would lose at once);
//  2. not moving a blue piece next to an opponent piece that could take it;
//  3. the smallest distance (in steps) from any own blue to its nearest
//     exit after the move;
//  4. a capture over a quiet move;
//
// and then board order. It needs no tables and always finds a move while
// the game is on.
func Heuristic(b gat.Board, obs geister.Observation) (Choice, error) {
	// Moves do not depend on the opponent's colours: treat them all as one.
	pos := geister.Position{OwnBlue: obs.OwnBlue, OwnRed: obs.OwnRed, OppBlue: obs.Opp}
	moves := pos.Moves(nil)
	if len(moves) == 0 {
		return Choice{}, errors.New("player: no legal move on the board")
	}
	best, bestKey := -1, [4]int{}
	for i, mv := range moves {
		capture := mv.Capture != geister.Empty
		var key [4]int
		if !(capture && obs.OppRed == 1) {
			key[0] = 1
		}
		opp := obs.Opp &^ mv.To.Bit()
		blue := obs.OwnBlue
		if blue&mv.From.Bit() != 0 {
			blue ^= mv.From.Bit() | mv.To.Bit()
			if neighbours(mv.To)&opp == 0 {
				key[1] = 1
			}
		} else {
			key[1] = 1
		}
		key[2] = -exitDistance(blue)
		if capture {
			key[3] = 1
		}
		if best < 0 || less(bestKey, key) {
			best, bestKey = i, key
		}
	}
	mv := moves[best]
	piece := b.At(mv.From.X(), mv.From.Y())
	if piece < 0 || piece >= 8 {
		return Choice{}, fmt.Errorf("player: no own piece on %s", mv.From)
	}
	return Choice{Piece: piece, Dir: mv.Dir, Reason: ReasonHeuristic}, nil
}

// less compares keys lexicographically.
func less(a, b [4]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// neighbours returns the squares one step from s.
func neighbours(s geister.Square) uint64 {
	b := s.Bit()
	return (b<<1 | b>>1 | b<<8 | b>>8) & geister.BoardMask
}

// exitDistance is the fewest steps from any blue in set to an own exit
// (A1 or F1), or 100 with no blue.
func exitDistance(set uint64) int {
	d := 100
	for ; set != 0; set &= set - 1 {
		s := geister.Square(bits.TrailingZeros64(set))
		x, y := s.X(), s.Y()
		d = min(d, y+min(x, 5-x))
	}
	return d
}
