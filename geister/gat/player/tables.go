package player

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"sync"

	geistertb "github.com/tbfs/tbfs/format/geister"
	"github.com/tbfs/tbfs/geister"
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
//  3. confident: with the tables covering the moves, the move that loses
//     in the fewest colourings; then the one that wins in the most (also
//     when every move loses somewhere, unlike the reference's ranking);
//     then, if it loses somewhere, the slowest quickest loss; then the
//     fastest longest win. A move to a board this policy has already
//     moved to twice in the game counts as a draw in every colouring, so
//     that a won game is not walked round a cycle to the 300-move draw;
//  4. heuristic: otherwise (see Heuristic).
//
// Ties are broken by board order: the lowest origin square (A1, B1, ...,
// F6 in the mover's view), then North, East, South, West. The policy is
// deterministic: the same game so far always gives the same move. A Tables
// remembers the boards of the game it is playing (Setup starts afresh), so
// it plays one game at a time.
type Tables struct {
	// TB answers the probes; nil means the heuristic alone.
	TB *geistertb.Tablebase
	// Red names the four own pieces (0..7) made red at the start; the
	// zero value (not a valid setup) means DefaultRed.
	Red [4]int
	// OnError, when set, is told of table errors other than a missing
	// table (transport failures, corrupt data); the policy then falls
	// back to the heuristic for that move rather than lose on time.
	OnError func(error)

	mu sync.Mutex
	// moved counts the boards (own pieces and the opponent's squares)
	// this policy's moves have produced in the current game.
	moved map[placement]int
}

// placement is a board without the opponent's colours: what repeats when a
// game goes round a cycle.
type placement struct{ ownBlue, ownRed, opp uint64 }

// after returns the placement move mv makes from o.
func after(o geister.Observation, mv geister.Move) placement {
	from, to := mv.From.Bit(), mv.To.Bit()
	p := placement{o.OwnBlue, o.OwnRed, o.Opp &^ to}
	if p.ownBlue&from != 0 {
		p.ownBlue ^= from | to
	} else {
		p.ownRed ^= from | to
	}
	return p
}

// repeatLimit is how many times a policy may move to the same board before
// doing so again counts as a draw.
const repeatLimit = 2

// DefaultRed is the setup Tables uses in tbprobe: the front row A..D red.
var DefaultRed = [4]int{0, 1, 2, 3}

// Setup returns t.Red, or DefaultRed when t.Red is the zero value. Four
// distinct pieces 0..7 are required.
func (t *Tables) Setup(ctx context.Context) ([4]int, error) {
	t.mu.Lock()
	t.moved = nil
	t.mu.Unlock()
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
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.moved == nil {
		t.moved = map[placement]int{}
	}
	if t.TB != nil && geistertb.ObservationMaterial(obs).Valid() {
		ov, err := t.TB.ObservationValues(ctx, obs)
		switch {
		case err == nil:
			if c, mv, ok := t.fromTables(b, obs, ov); ok {
				t.moved[after(obs, mv)]++
				return c, nil
			}
		case errors.Is(err, geistertb.ErrNoTable):
		case ctx.Err() != nil:
			return Choice{}, ctx.Err()
		default:
			if t.OnError != nil {
				t.OnError(err)
			}
		}
	}
	c, err := Heuristic(b, obs)
	if err == nil {
		x, y := int(b[c.Piece].X), int(b[c.Piece].Y)
		d := [4][2]int{{0, -1}, {1, 0}, {0, 1}, {-1, 0}}[c.Dir&3] // N, E, S, W
		t.moved[after(obs, geister.Move{From: geister.SquareAt(x, y), To: geister.SquareAt(x+d[0], y+d[1])})]++
	}
	return c, err
}

// fromTables applies rules 2 and 3 to the tables' answer.
func (t *Tables) fromTables(b gat.Board, obs geister.Observation, ov *geistertb.ObservationValues) (Choice, geister.Move, bool) {
	var wins, draws, losses int
	for _, c := range ov.Colourings {
		switch c.Result.Outcome {
		case geistertb.Win:
			wins++
		case geistertb.Loss:
			losses++
		default:
			draws++
		}
	}
	summary := fmt.Sprintf("%d colourings: %d won, %d drawn, %d lost", len(ov.Colourings), wins, draws, losses)
	choose := func(ms geistertb.MoveSummary, reason, note string) (Choice, geister.Move, bool) {
		i := b.At(ms.From.X(), ms.From.Y())
		if i < 0 || i >= 8 {
			return Choice{}, geister.Move{}, false
		}
		detail := summary + fmt.Sprintf("; this move wins %d of them (longest win %d plies), draws %d, loses %d (quickest loss %d plies)",
			ms.Wins, ms.MaxWin, ms.Draws, ms.Losses, ms.MinLoss) + note
		return Choice{Piece: i, Dir: ms.Dir, Reason: reason, Detail: detail}, ms.Move, true
	}
	// ov.Moves keeps Position.Moves order, which is board order, so the
	// first of equals is the tie-break's choice.
	for _, ms := range ov.Moves {
		if ms.BestInAll {
			return choose(ms, ReasonBestInAll, "")
		}
	}
	best, bestNote := -1, ""
	var bestKey geistertb.MoveSummary
	for i, ms := range ov.Moves {
		if ms.Missing > 0 {
			continue
		}
		key, note := ms, ""
		if n := t.moved[after(obs, ms.Move)]; n >= repeatLimit {
			key = geistertb.MoveSummary{Move: ms.Move, Draws: ms.Wins + ms.Draws + ms.Losses}
			note = fmt.Sprintf("; its board was reached %d times already, so it counts as a draw", n)
		}
		if best < 0 || better(key, bestKey) {
			best, bestKey, bestNote = i, key, note
		}
	}
	if best < 0 {
		return Choice{}, geister.Move{}, false
	}
	return choose(ov.Moves[best], ReasonConfident, bestNote)
}

// better reports whether move summary a ranks above b by the confident
// rule: fewer colourings lost, more won, a slower quickest loss (when both
// lose somewhere), a faster longest win. The reference's ranking looks at
// the wins only when some move loses nowhere, so where every move loses
// somewhere it can prefer a move that wins in no colouring to one that
// wins in some; here the wins always count.
func better(a, b geistertb.MoveSummary) bool {
	if a.Losses != b.Losses {
		return a.Losses < b.Losses
	}
	if a.Wins != b.Wins {
		return a.Wins > b.Wins
	}
	if a.Losses > 0 && a.MinLoss != b.MinLoss {
		return a.MinLoss > b.MinLoss
	}
	if a.Wins > 0 && a.MaxWin != b.MaxWin {
		return a.MaxWin < b.MaxWin
	}
	return false
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
