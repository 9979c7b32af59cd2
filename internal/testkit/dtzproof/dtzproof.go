// Package dtzproof proves short DTZ values from the rules of chess alone,
// for tests that need a position's exact DTZ where no oracle file holds it.
//
// The DTZ proved is chesstb's: the plies to the next zeroing move (a
// capture, a pawn move, or the mate itself) when the winner hastens it and
// the loser delays it, signed for the side to move, with no cursed band.
// The search is exhaustive over every legal move up to the horizon. The
// only facts it takes from outside the move tree are the results of the
// positions a zeroing move reaches, and those it proves too: a win or a
// loss by retro.ProveMate under the 50-move rule from the zeroing move, a
// draw (or better) by the rules: stalemate, material that cannot mate, a
// lone king that cannot win, or a capture into such material that the side
// to move may choose. Where a result it needs cannot be proved so, DTZ
// fails rather than guess.
package dtzproof

import (
	"context"
	"errors"
	"fmt"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/retro"
)

// ErrUnproved means the search met a position whose result it cannot prove
// within its bounds, or found no win or loss within the horizon.
var ErrUnproved = errors.New("dtzproof: no proof")

// ErrWithin means Beyond found the position won or lost within the plies
// it was to prove it was not.
var ErrWithin = errors.New("dtzproof: won or lost within the horizon")

// claim is the truth of a claim about a position: proved, refuted, or
// neither within the current bound.
type claim uint8

const (
	refuted claim = iota
	proved
	open
)

// goal names the two claims made of a position a zeroing move reaches, for
// its side to move.
type goal uint8

const (
	isWon goal = iota
	isLost
)

// prover holds one proof's current mate bound and the leaf results found.
type prover struct {
	ctx     context.Context
	bound   int
	settled map[leafKey]claim
	err     error
}

type leafKey struct {
	fen   string
	goal  goal
	bound int
}

// DTZ returns the DTZ of pos (chesstb's convention: positive when the side
// to move wins, negative when it loses, 0 for a checkmated side) when its
// size is at most maxPlies. mateMoves bounds the mate proofs of the
// positions zeroing moves reach (mate in at most that many moves); shorter
// bounds are tried first and suffice for most. It fails with ErrUnproved
// when pos is not won or lost within maxPlies, or when a result the proof
// needs cannot be proved within mateMoves.
func DTZ(ctx context.Context, pos chess.Position, maxPlies, mateMoves int) (int, error) {
	if pos.IsCheckmate() {
		return 0, nil
	}
	p := &prover{ctx: ctx, settled: map[leafKey]claim{}}
	for bound := 1; ; bound = min(2*bound, mateMoves) {
		p.bound = bound
		settled := true
		for k := 1; k <= maxPlies && settled; k++ {
			lose := p.loseWithin(&pos, k)
			if p.err != nil {
				return 0, p.err
			}
			if lose == proved {
				return -k, nil
			}
			win := p.winWithin(&pos, k)
			if p.err != nil {
				return 0, p.err
			}
			if win == proved {
				return k, nil
			}
			// A longer distance counts only once every shorter one is
			// refuted.
			settled = lose == refuted && win == refuted
		}
		switch {
		case settled:
			return 0, fmt.Errorf("%w: %s is neither won nor lost within %d plies of a zeroing move", ErrUnproved, pos.FEN(), maxPlies)
		case bound >= mateMoves:
			return 0, unprovedLeaf(&pos, mateMoves)
		}
	}
}

// Rounded settles a DTZ known only up to rounding: given rounded, a DTZ
// of pos that is exact or one ply short of the truth (a Syzygy value that
// may be rounded, signed for the side to move), it returns the exact one:
// rounded when pos is won or lost within that many plies, else one ply
// further from zero. Only the one question is proved (see Beyond), so it
// reaches distances DTZ's search from the first ply cannot; the bound
// itself is the caller's to trust.
func Rounded(ctx context.Context, pos chess.Position, rounded, mateMoves int) (int, error) {
	if rounded == 0 {
		return 0, fmt.Errorf("dtzproof: %s: a rounded DTZ of 0 is a draw, not a bound", pos.FEN())
	}
	plies, away := rounded, 1
	if rounded < 0 {
		plies, away = -rounded, -1
	}
	err := Beyond(ctx, pos, plies, mateMoves)
	switch {
	case err == nil:
		return rounded + away, nil
	case errors.Is(err, ErrWithin):
		return rounded, nil
	}
	return 0, err
}

// Beyond proves that pos is neither won nor lost within plies plies of a
// zeroing move: its DTZ, if it has one, is longer (or pos is drawn). It
// fails with ErrUnproved when a result the proof needs cannot be proved
// within mateMoves, and with ErrWithin when pos is won or lost within
// plies.
func Beyond(ctx context.Context, pos chess.Position, plies, mateMoves int) error {
	if pos.IsCheckmate() {
		return fmt.Errorf("dtzproof: %s is checkmate", pos.FEN())
	}
	p := &prover{ctx: ctx, settled: map[leafKey]claim{}}
	for bound := 1; ; bound = min(2*bound, mateMoves) {
		p.bound = bound
		// Both claims only grow with the horizon, so refuting them at
		// plies refutes every shorter distance too.
		lose := p.loseWithin(&pos, plies)
		win := p.winWithin(&pos, plies)
		switch {
		case p.err != nil:
			return p.err
		case lose == proved || win == proved:
			return fmt.Errorf("%w: %s within %d plies", ErrWithin, pos.FEN(), plies)
		case lose == refuted && win == refuted:
			return nil
		case bound >= mateMoves:
			return unprovedLeaf(&pos, mateMoves)
		}
	}
}

// unprovedLeaf is the error for a proof whose leaves the mate bound leaves
// open.
func unprovedLeaf(pos *chess.Position, mateMoves int) error {
	return fmt.Errorf("%w: %s: a position a zeroing move reaches is neither won nor lost nor drawn by a mate proof of %d moves or by the rules", ErrUnproved, pos.FEN(), mateMoves)
}

// winWithin claims the side to move forces, within k plies, a zeroing move
// into a position lost for the other side.
func (p *prover) winWithin(pos *chess.Position, k int) claim {
	if k <= 0 {
		return refuted
	}
	c := refuted
	for _, m := range pos.LegalMoves(nil) {
		child := pos.Play(m)
		var r claim
		switch {
		case child.IsCheckmate():
			r = proved
		case pos.IsZeroing(m):
			r = p.leaf(&child, isLost)
		default:
			r = p.loseWithin(&child, k-1)
		}
		if r == proved || p.err != nil {
			return r
		}
		if r == open {
			c = open
		}
	}
	return c
}

// loseWithin claims every move of the side to move leads, within k plies,
// to a zeroing move into a position won for the other side.
func (p *prover) loseWithin(pos *chess.Position, k int) claim {
	moves := pos.LegalMoves(nil)
	if k <= 0 || len(moves) == 0 {
		return refuted // no moves: stalemate; callers take a checkmate first
	}
	c := proved
	// The moves that keep the material first: most fail at once, and one
	// failure refutes the claim without any zeroing move's proof.
	for _, zeroing := range []bool{false, true} {
		for _, m := range moves {
			if pos.IsZeroing(m) != zeroing {
				continue
			}
			child := pos.Play(m)
			var r claim
			switch {
			case child.IsCheckmate(), child.IsStalemate():
				r = refuted
			case zeroing:
				r = p.leaf(&child, isWon)
			default:
				r = p.winWithin(&child, k-1)
			}
			if r == refuted || p.err != nil {
				return refuted
			}
			if r == open {
				c = open
			}
		}
	}
	return c
}

// leaf decides goal for the side to move in pos, a position a zeroing move
// reached, within the current mate bound.
func (p *prover) leaf(pos *chess.Position, g goal) claim {
	key := leafKey{pos.FEN(), g, p.bound}
	if c, ok := p.settled[key]; ok {
		return c
	}
	c := p.decide(pos, g)
	p.settled[key] = c
	return c
}

func (p *prover) decide(pos *chess.Position, g goal) claim {
	us, them := pos.SideToMove(), pos.SideToMove().Other()
	switch {
	case pos.IsStalemate(), pos.InsufficientMaterial():
		return refuted
	case g == isWon && loneKing(pos, us), g == isLost && loneKing(pos, them):
		return refuted // a lone king never mates
	case g == isLost && canReachDead(pos):
		return refuted
	}
	res, err := retro.ProveMate(p.ctx, *pos, p.bound, true)
	if err != nil {
		p.err = err
		return refuted
	}
	switch {
	case res.Kind == retro.Mates:
		return claimIf(g == isWon)
	case res.Kind == retro.Mated:
		return claimIf(g == isLost)
	case g == isWon && deadAfterEveryReply(pos):
		return refuted
	}
	return open
}

func claimIf(b bool) claim {
	if b {
		return proved
	}
	return refuted
}

// loneKing reports whether side c has nothing but its king.
func loneKing(pos *chess.Position, c chess.Color) bool {
	return pos.ByColor(c).Count() == 1
}

// canReachDead reports whether the side to move has a move after which
// neither side can mate (or the other is stalemated).
func canReachDead(pos *chess.Position) bool {
	for _, m := range pos.LegalMoves(nil) {
		child := pos.Play(m)
		if child.InsufficientMaterial() || child.IsStalemate() {
			return true
		}
	}
	return false
}

// deadAfterEveryReply reports whether the other side, whatever the side to
// move plays, is stalemated, left with material that cannot mate, or has a
// move to such a position.
func deadAfterEveryReply(pos *chess.Position) bool {
	moves := pos.LegalMoves(nil)
	for _, m := range moves {
		child := pos.Play(m)
		if child.IsCheckmate() {
			return false
		}
		if !child.IsStalemate() && !child.InsufficientMaterial() && !canReachDead(&child) {
			return false
		}
	}
	return len(moves) > 0
}
