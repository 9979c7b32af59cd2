package retro

import (
	"container/heap"
	"errors"
	"fmt"

	"github.com/tbfs/tbfs/chess"
)

// ErrSeed is wrapped by every error AddSeed returns.
var ErrSeed = errors.New("retro: bad seed")

// Engine is a bounded retrograde engine. The caller declares seeds with
// AddSeed; Solve expands queued positions, generating their legal
// predecessors and proving what follows:
//
//   - a predecessor of a Loss(n) position is Win(n+1);
//   - a predecessor becomes Loss(1+max) once every one of its legal children
//     is proved Win, max being the largest of their distances.
//
// The queue is ordered by distance (then by insertion), so a Win distance is
// the shortest one the seeds allow and no proved value depends on the order
// in which positions were discovered. Before a value is stored it is
// re-derived from the parent's actual legal moves and the children's stored
// values, so a predecessor generator that emitted a wrong parent could not
// make the engine prove a wrong value.
//
// Positions are keyed canonically: the board, side to move, castling rights
// and en-passant square (the chess package keeps the latter only when a
// capture can use it); the clocks are ignored. An Engine is not safe for
// concurrent use.
type Engine struct {
	entries map[posKey]*entry
	queue   engineQueue
	seq     uint64
	// floor is the distance of the last expanded position: expanding in
	// distance order is what makes Win distances minimal, so a seed below it
	// is refused.
	floor   uint32
	started bool
	unmoves []chess.Unmove
	moves   []chess.Move
	parents []posKey
}

type entry struct {
	pos   chess.Position
	value Value
	seed  bool
	// remaining counts the legal children not yet proved Win; -1 until the
	// position is first reached from a Win child.
	remaining int
}

// NewEngine returns an empty engine.
func NewEngine() *Engine {
	return &Engine{entries: make(map[posKey]*entry)}
}

// AddSeed declares that pos has value v, which must be a Win or a Loss.
// The engine does not check the claim: seeds are the caller's assertions, and
// everything Solve proves is relative to them. Declaring the value a
// position already has is a no-op; declaring a different one is an error, as
// is a seed closer to mate than a position Solve has already expanded (it
// could shorten distances that are already proved).
func (e *Engine) AddSeed(pos chess.Position, v Value) error {
	if !v.Decided() {
		return fmt.Errorf("%w: value %v is neither a win nor a loss", ErrSeed, v)
	}
	k := key(&pos)
	en := e.entries[k]
	if en != nil && en.value.Decided() {
		if en.value == v {
			return nil
		}
		return fmt.Errorf("%w: %s already has value %v, not %v", ErrSeed, pos.FEN(), en.value, v)
	}
	if e.started && v.Plies < e.floor {
		return fmt.Errorf("%w: %v is below the distance %d the engine has already expanded", ErrSeed, v, e.floor)
	}
	if en == nil {
		en = &entry{pos: pos, remaining: -1}
		e.entries[k] = en
	}
	en.value, en.seed = v, true
	e.push(k, v.Plies)
	return nil
}

// Probe returns the value stored for pos. ok is false when the position was
// never stored (Absent); a stored position whose value is not proved yet
// comes back as Unknown with ok true. Draw is never returned: the engine
// does not prove draws.
func (e *Engine) Probe(pos chess.Position) (v Value, ok bool) {
	en := e.entries[key(&pos)]
	if en == nil {
		return Value{}, false
	}
	return en.value, true
}

// Seeded reports whether pos's value is a caller's seed rather than a value
// the engine proved.
func (e *Engine) Seeded(pos chess.Position) bool {
	en := e.entries[key(&pos)]
	return en != nil && en.seed
}

// Frontier returns the distance of the next position Solve would expand,
// and false when the queue is empty. Because expansion goes by distance,
// a caller can bound the work by distance rather than by count: every
// position whose value is at most d has been proved once Frontier reports
// more than d (relative to the seeds).
func (e *Engine) Frontier() (uint32, bool) {
	if e.queue.Len() == 0 {
		return 0, false
	}
	return e.queue[0].dist, true
}

// Pending returns the number of positions queued for expansion.
func (e *Engine) Pending() int { return e.queue.Len() }

// Len returns the number of stored positions, proved or not.
func (e *Engine) Len() int { return len(e.entries) }

// Each calls f for every stored position and its value, in no particular
// order, until f returns false.
func (e *Engine) Each(f func(pos chess.Position, v Value) bool) {
	for _, en := range e.entries {
		if !f(en.pos, en.value) {
			return
		}
	}
}

func (e *Engine) push(k posKey, d uint32) {
	e.seq++
	heap.Push(&e.queue, queued{dist: d, seq: e.seq, key: k})
}

// Solve expands at most maxExpansions queued positions, nearest to mate
// first, and returns how many it expanded. Solve(0) does nothing. Running
// out of budget proves nothing about the positions left unresolved.
func (e *Engine) Solve(maxExpansions int) (expanded int) {
	for expanded < maxExpansions && e.queue.Len() > 0 {
		q := heap.Pop(&e.queue).(queued)
		expanded++
		e.started = true
		e.floor = q.dist
		e.expand(e.entries[q.key])
	}
	return expanded
}

// expand propagates the value of child to its predecessors.
func (e *Engine) expand(ce *entry) {
	cv := ce.value
	child := ce.pos
	e.unmoves = child.Unmoves(e.unmoves[:0])
	e.parents = e.parents[:0]
	for _, u := range e.unmoves {
		pp := child.Unmake(u)
		p := key(&pp)
		dup := false
		for _, seen := range e.parents {
			if seen == p {
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		e.parents = append(e.parents, p)
		en := e.entries[p]
		if en != nil && en.value.Decided() {
			continue
		}
		if en == nil {
			en = &entry{pos: pp, remaining: -1}
			e.entries[p] = en
		}
		switch cv.Kind {
		case LossKind:
			if v, ok := e.derive(&en.pos); ok && v.IsWin() {
				en.value = v
				e.push(p, v.Plies)
			}
		case WinKind:
			if en.remaining < 0 {
				en.remaining = en.pos.CountLegalMoves()
			}
			en.remaining--
			if en.remaining <= 0 {
				if v, ok := e.derive(&en.pos); ok && v.IsLoss() {
					en.value = v
					e.push(p, v.Plies)
				}
			}
		}
	}
}

// derive computes p's value from its legal children's stored values: a win
// if some child is a proved loss (the nearest one), a loss if every child is
// a proved win (the farthest one), and ok false otherwise.
func (e *Engine) derive(p *chess.Position) (Value, bool) {
	e.moves = p.LegalMoves(e.moves[:0])
	if len(e.moves) == 0 {
		return Value{}, false
	}
	best, haveWin := uint32(MaxPlies), false
	var worst uint32
	allWin := true
	for _, m := range e.moves {
		c := p.Play(m)
		en := e.entries[key(&c)]
		if en == nil {
			allWin = false
			continue
		}
		switch en.value.Kind {
		case LossKind:
			haveWin = true
			best = min(best, succ(en.value.Plies))
			allWin = false
		case WinKind:
			worst = max(worst, en.value.Plies)
		default:
			allWin = false
		}
	}
	switch {
	case haveWin:
		return Win(best), true
	case allWin:
		return Loss(succ(worst)), true
	}
	return Value{}, false
}

type queued struct {
	dist uint32
	seq  uint64
	key  posKey
}

// engineQueue is a min-heap by distance, then by insertion order.
type engineQueue []queued

func (q engineQueue) Len() int { return len(q) }
func (q engineQueue) Less(i, j int) bool {
	if q[i].dist != q[j].dist {
		return q[i].dist < q[j].dist
	}
	return q[i].seq < q[j].seq
}
func (q engineQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *engineQueue) Push(x any)   { *q = append(*q, x.(queued)) }
func (q *engineQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}
