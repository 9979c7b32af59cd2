package retro

import (
	"fmt"
	"math"
)

// Kind says what a Value asserts about the side to move.
type Kind uint8

// The kinds of value. Unknown is epistemic: the position is known to the
// engine but nothing has been proved about it; it is not a draw.
const (
	Unknown Kind = iota
	WinKind
	LossKind
	DrawKind
)

// MaxPlies is the largest distance a Value carries. Arithmetic on distances
// saturates there instead of wrapping around.
const MaxPlies = math.MaxUint32

// Value is a game-theoretic value for the side to move: a win or a loss in a
// number of plies, a draw, or Unknown. The zero Value is Unknown.
type Value struct {
	Kind  Kind
	Plies uint32
}

// Win returns the value "the side to move mates in n plies".
func Win(n uint32) Value { return Value{Kind: WinKind, Plies: n} }

// Loss returns the value "the side to move is mated in n plies"; Loss(0) is a
// side to move that is checkmated.
func Loss(n uint32) Value { return Value{Kind: LossKind, Plies: n} }

// Draw is the value of a position neither side can force a mate from.
var Draw = Value{Kind: DrawKind}

// IsWin reports whether v is a win.
func (v Value) IsWin() bool { return v.Kind == WinKind }

// IsLoss reports whether v is a loss.
func (v Value) IsLoss() bool { return v.Kind == LossKind }

// Decided reports whether v is a win or a loss.
func (v Value) Decided() bool { return v.Kind == WinKind || v.Kind == LossKind }

// String spells the value as "Win(3)", "Loss(0)", "Draw" or "Unknown".
func (v Value) String() string {
	switch v.Kind {
	case WinKind:
		return fmt.Sprintf("Win(%d)", v.Plies)
	case LossKind:
		return fmt.Sprintf("Loss(%d)", v.Plies)
	case DrawKind:
		return "Draw"
	case Unknown:
		return "Unknown"
	}
	return fmt.Sprintf("Value(%d,%d)", v.Kind, v.Plies)
}

// succ returns n+1, saturating at MaxPlies.
func succ(n uint32) uint32 {
	if n == MaxPlies {
		return MaxPlies
	}
	return n + 1
}
