package syzygy

import (
	"context"
	"math/bits"
	"sort"

	"github.com/tbfs/tbfs/chess"
)

// RootResult is Fathom's tb_probe_root answer for a position at its
// half-move clock.
type RootResult struct {
	// WDL is the root's value at the clock: ±2 when the table's DTZ plus
	// the clock is at most 100, ±1 when the 50-move rule intervenes, 0 for
	// a draw. A checkmated side gets -2.
	WDL int
	// DTZ is the root's table DTZ50″ in plies, unsigned as Fathom gives
	// it (WDL tells the side); 0 for draws and terminal positions.
	DTZ int
	// Best is Fathom's move: for a win the first move, in Fathom's
	// generation order, with the smallest winning DTZ; for a loss the first
	// with the largest losing DTZ; for a draw a drawing move Fathom picks
	// by a hash of the material. chess.NoMove in terminal positions.
	Best chess.Move
	// Moves holds every legal move in Fathom's generation order.
	Moves []RootMove
	// Checkmate and Stalemate mark terminal positions (Moves is empty).
	Checkmate, Stalemate bool
}

// RootMove is one legal move's value, seen from the side to move at the root.
type RootMove struct {
	Move chess.Move
	// WDL is the move's value at the root clock (as RootResult.WDL).
	WDL int
	// DTZ is Fathom's unsigned value: 1 for a mate or a zeroing move that
	// wins or loses, 101 for a zeroing move into the cursed band, 0 for a
	// drawing move, and otherwise the child's |DTZ| + 1.
	DTZ int
	// signed is DTZ with the sign of the mover's result.
	signed int
}

// fathomOrder is the rank of a piece type in Fathom's move generation:
// king, queens, rooks, bishops, knights, pawns.
var fathomOrder = [7]int{chess.King: 0, chess.Queen: 1, chess.Rook: 2, chess.Bishop: 3, chess.Knight: 4, chess.Pawn: 5}

// promoOrder is the order in which Fathom lists a pawn's promotions.
var promoOrder = [7]int{chess.Queen: 0, chess.Knight: 1, chess.Rook: 2, chess.Bishop: 3}

// fathomMoves returns pos's legal moves in Fathom's generation order: by
// piece type (K Q R B N P), then origin square, then, for a pawn, its
// en-passant capture first, then destination square, then promotion Q N R B.
func fathomMoves(pos *chess.Position) []chess.Move {
	moves := pos.LegalMoves(make([]chess.Move, 0, 64))
	key := func(m chess.Move) int {
		pt := pos.PieceAt(m.From()).Type()
		k := fathomOrder[pt]<<20 | int(m.From())<<12
		if !m.IsEnPassant() {
			k |= 1 << 11
		}
		return k | int(m.To())<<4 | promoOrder[m.Promotion()]
	}
	sort.Slice(moves, func(i, j int) bool { return key(moves[i]) < key(moves[j]) })
	return moves
}

// drawHash is Fathom's material key, which it uses to pick a drawing move:
// a sum over piece types of count times a fixed odd constant, the side to
// move's pieces counted as White's.
func drawHash(pos *chess.Position) uint64 {
	primes := [2][7]uint64{
		{chess.Queen: 11811845319353239651, chess.Rook: 10979190538029446137, chess.Bishop: 12311744257139811149,
			chess.Knight: 15202887380319082783, chess.Pawn: 17008651141875982339},
		{chess.Queen: 15484752644942473553, chess.Rook: 18264461213049635989, chess.Bishop: 15394650811035483107,
			chess.Knight: 13469005675588064321, chess.Pawn: 11695583624105689831},
	}
	us := pos.SideToMove()
	var h uint64
	for c := range 2 {
		side := chess.Color(c)
		if us == chess.Black {
			side = side.Other()
		}
		for pt := chess.Pawn; pt <= chess.Queen; pt++ {
			h += uint64(bits.OnesCount64(uint64(pos.Pieces(side, pt)))) * primes[c][pt]
		}
	}
	return h
}

// clockWDL is the WDL at half-move clock c of a signed DTZ d.
func clockWDL(c, d int) int {
	switch {
	case d > 0 && d+c <= 100:
		return 2
	case d > 0:
		return 1
	case d < 0 && -d+c <= 100:
		return -2
	case d < 0:
		return -1
	}
	return 0
}

// Root ranks the root moves as Fathom's tb_probe_root does, at the
// position's half-move clock.
func (tb *Tablebase) Root(ctx context.Context, pos *chess.Position) (RootResult, error) {
	if err := tb.enter(); err != nil {
		return RootResult{}, err
	}
	defer tb.exit()
	if err := checkPosition(pos); err != nil {
		return RootResult{}, err
	}
	tb.openAhead(pos, KindWDL, KindDTZ)
	st := stackPool.Get().(*posStack)
	defer stackPool.Put(st)
	st.n = 0
	clock := pos.HalfmoveClock()
	dtz, _, err := tb.probeDTZ(ctx, st, pos)
	if err != nil {
		return RootResult{}, err
	}
	moves := fathomMoves(pos)
	if len(moves) == 0 {
		if pos.InCheck() {
			return RootResult{WDL: -2, Checkmate: true}, nil
		}
		return RootResult{Stalemate: true}, nil
	}
	res := RootResult{WDL: clockWDL(clock, dtz), DTZ: abs(dtz), Moves: make([]RootMove, 0, len(moves))}
	draws := 0
	for _, m := range moves {
		child := st.play(pos, m)
		var v int
		var err error
		switch {
		case dtz > 0 && child.IsCheckmate():
			v = 1
		case !pos.IsZeroing(m):
			v, _, err = tb.probeDTZ(ctx, st, child)
			if err != nil {
				return RootResult{}, err
			}
			v = -v
			if v > 0 {
				v++
			} else if v < 0 {
				v--
			}
		default:
			var w int
			w, _, err = tb.probeWDL(ctx, st, child)
			v = wdlToDTZ[-w+2]
		}
		st.n = 0
		if err != nil {
			return RootResult{}, err
		}
		if v == 0 {
			draws++
		}
		res.Moves = append(res.Moves, RootMove{Move: m, WDL: clockWDL(clock, v), DTZ: abs(v), signed: v})
	}
	switch {
	case dtz > 0:
		best := 0
		for _, rm := range res.Moves {
			if rm.signed > 0 && (best == 0 || rm.signed < best) {
				best, res.Best = rm.signed, rm.Move
			}
		}
	case dtz < 0:
		best := 0
		for _, rm := range res.Moves {
			if rm.signed < best {
				best, res.Best = rm.signed, rm.Move
			}
		}
	default:
		if draws > 0 {
			n := drawHash(pos) % uint64(draws)
			for _, rm := range res.Moves {
				if rm.signed != 0 {
					continue
				}
				if n == 0 {
					res.Best = rm.Move
					break
				}
				n--
			}
		}
	}
	if res.Best == chess.NoMove {
		return RootResult{}, corruptf("%s: the tables' root value %d has no move that keeps it", pos.FEN(), dtz)
	}
	return res, nil
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
