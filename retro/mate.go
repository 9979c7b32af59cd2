package retro

import (
	"context"
	"fmt"

	"github.com/tbfs/tbfs/chess"
)

// MateKind says what ProveMate proved.
type MateKind uint8

// The outcomes of ProveMate.
const (
	// NoMate: neither side can force mate within the bound.
	NoMate MateKind = iota
	// Mates: the side to move forces mate.
	Mates
	// Mated: the side to move is mated whatever it plays.
	Mated
)

// String returns "none", "mate" or "mated", the words tbprobe prints.
func (k MateKind) String() string {
	switch k {
	case Mates:
		return "mate"
	case Mated:
		return "mated"
	}
	return "none"
}

// MateResult is what ProveMate proved.
type MateResult struct {
	Kind MateKind
	// Moves is the number of moves the winning side makes up to and
	// including the mate: mate in Moves, or mated in Moves (0 when the side
	// to move is already checkmated).
	Moves int
	// Line is one line of play that realises the result: the winner's moves
	// are proved to mate in time against every defence, and the loser's
	// replies chosen are ones that hold out longest.
	Line []chess.Move
	// Nodes counts the positions the search visited.
	Nodes int64
}

// ProveMate decides by exhaustive AND/OR search whether the side to move in
// pos mates in at most n moves, or is mated in at most n moves whatever it
// plays, and returns the shortest such result (NoMate when neither holds).
// The search prunes nothing and evaluates nothing: a result is a proof over
// every legal move, and NoMate is a proof that no mate exists within n.
// Results for (position, budget) pairs are cached, which is not pruning.
//
// With rule50 set, the 50-move rule applies from pos's half-move clock: a
// position whose clock has reached 100 is a draw unless its side to move is
// checkmated (the mate that brings the clock to exactly 100 counts, as in
// the chesstb dtm50 tables), so a mate that would land later does not count.
//
// The context is checked during the search; a cancelled search returns the
// context's error.
func ProveMate(ctx context.Context, pos chess.Position, n int, rule50 bool) (MateResult, error) {
	if n < 0 {
		return MateResult{}, fmt.Errorf("retro: mate bound %d is negative", n)
	}
	s := &mateSearch{ctx: ctx, rule50: rule50, tt: map[mateKey]*mateEntry{}}
	var res MateResult
	for k := 0; k <= n; k++ {
		if k > 0 && s.win(&pos, 2*k-1) {
			res = MateResult{Kind: Mates, Moves: k}
			s.line(&pos, 2*k-1, true, &res.Line)
			break
		}
		if s.err != nil {
			break
		}
		if s.lose(&pos, 2*k) {
			res = MateResult{Kind: Mated, Moves: k}
			s.line(&pos, 2*k, false, &res.Line)
			break
		}
		if s.err != nil {
			break
		}
	}
	res.Nodes = s.nodes
	if s.err != nil {
		return MateResult{Nodes: s.nodes}, s.err
	}
	return res, nil
}

// maxTT bounds the transposition table; beyond it results are not cached.
const maxTT = 1 << 22

type mateKey struct {
	pos   posKey
	clock int32
}

// mateEntry keeps, for one position, the budgets already settled: the
// smallest budget with which the claim was proved (0 = none yet; budgets are
// stored plus one) and the largest with which it was refuted.
type mateEntry struct {
	winProved, winRefuted   int16
	loseProved, loseRefuted int16
}

type mateSearch struct {
	ctx    context.Context
	rule50 bool
	nodes  int64
	err    error
	tt     map[mateKey]*mateEntry
}

func (s *mateSearch) entry(p *chess.Position) *mateEntry {
	k := mateKey{pos: key(p)}
	if s.rule50 {
		k.clock = int32(min(p.HalfmoveClock(), 100))
	}
	e := s.tt[k]
	if e == nil && len(s.tt) < maxTT {
		e = &mateEntry{}
		s.tt[k] = e
	}
	return e
}

func (s *mateSearch) tick() bool {
	s.nodes++
	if s.nodes&1023 == 0 && s.err == nil {
		s.err = s.ctx.Err()
	}
	return s.err == nil
}

// win reports whether the side to move mates within b plies (b odd).
func (s *mateSearch) win(p *chess.Position, b int) bool {
	if !s.tick() || b < 1 {
		return false
	}
	if s.rule50 && p.HalfmoveClock() >= 100 {
		return false
	}
	e := s.entry(p)
	if e != nil {
		if e.winProved != 0 && int(e.winProved)-1 <= b {
			return true
		}
		if e.winRefuted != 0 && int(e.winRefuted)-1 >= b {
			return false
		}
	}
	var buf [256]chess.Move
	moves := p.LegalMoves(buf[:0])
	found := false
	for _, m := range moves {
		c := p.Play(m)
		if s.lose(&c, b-1) {
			found = true
			break
		}
		if s.err != nil {
			return false
		}
	}
	if e != nil && s.err == nil {
		if found {
			e.winProved = int16(b + 1)
		} else {
			e.winRefuted = int16(b + 1)
		}
	}
	return found
}

// lose reports whether the side to move is mated within b plies (b even)
// whatever it plays.
func (s *mateSearch) lose(p *chess.Position, b int) bool {
	if !s.tick() {
		return false
	}
	var buf [256]chess.Move
	moves := p.LegalMoves(buf[:0])
	if len(moves) == 0 {
		return p.InCheck()
	}
	if b < 2 || (s.rule50 && p.HalfmoveClock() >= 100) {
		return false
	}
	e := s.entry(p)
	if e != nil {
		if e.loseProved != 0 && int(e.loseProved)-1 <= b {
			return true
		}
		if e.loseRefuted != 0 && int(e.loseRefuted)-1 >= b {
			return false
		}
	}
	all := true
	for _, m := range moves {
		c := p.Play(m)
		if !s.win(&c, b-1) {
			all = false
			break
		}
	}
	if s.err != nil {
		return false
	}
	if e != nil {
		if all {
			e.loseProved = int16(b + 1)
		} else {
			e.loseRefuted = int16(b + 1)
		}
	}
	return all
}

// line appends one line realising a proved result with the minimal budget
// b: winning moves that keep the proof, and defences that need the whole
// remaining budget.
func (s *mateSearch) line(p *chess.Position, b int, winning bool, out *[]chess.Move) {
	pos := *p
	for s.err == nil {
		var buf [256]chess.Move
		moves := pos.LegalMoves(buf[:0])
		if len(moves) == 0 {
			return
		}
		var pick chess.Move
		if winning {
			for _, m := range moves {
				c := pos.Play(m)
				if s.lose(&c, b-1) {
					pick = m
					break
				}
			}
		} else {
			for _, m := range moves {
				c := pos.Play(m)
				if b-3 < 1 || !s.win(&c, b-3) {
					pick = m
					break
				}
			}
		}
		if pick == chess.NoMove {
			return
		}
		*out = append(*out, pick)
		pos = pos.Play(pick)
		b--
		winning = !winning
	}
}
