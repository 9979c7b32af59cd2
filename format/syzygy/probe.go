package syzygy

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/tbfs/tbfs/chess"
)

// wdlToMap picks the DTZ map for a WDL value (-2..2).
var wdlToMap = [5]int{1, 3, 0, 2, 0}

// wdlToDTZ is the DTZ of a position whose zeroing move is its best move.
var wdlToDTZ = [5]int{-1, -101, 0, 101, 1}

// plyFlag is the DTZ flag that says values of a WDL class are in plies.
var plyFlag = [5]uint8{dtzLossPlies, 0, 0, 0, dtzWinPlies}

// checkPosition refuses positions no Syzygy table holds.
func checkPosition(pos *chess.Position) error {
	if pos.Castling() != 0 {
		return fmt.Errorf("%w: castling rights %v", ErrBadPosition, pos.Castling())
	}
	if n := pos.Occupied().Count(); n > maxPieces {
		return fmt.Errorf("%w: %d men", ErrBadPosition, n)
	}
	return nil
}

// probeTable returns the value the kind-k table stores for pos (its side
// to move, without en-passant rights). For a DTZ table, wdl is the
// position's WDL, which picks the map; other reports that the table
// stores only the other side to move, and rounded that the value was
// stored in moves (so the distance may be one ply more).
func (tb *Tablebase) probeTable(ctx context.Context, pos *chess.Position, k Kind, wdl int) (v int, other, rounded bool, err error) {
	if pos.Occupied().Count() == 2 {
		return 0, false, false, nil // bare kings
	}
	t, swapped, err := tb.tableFor(ctx, pos, k)
	if err != nil {
		return 0, false, false, err
	}
	stm := pos.SideToMove()
	flip, bside := false, 0
	if t.lay.symmetric {
		flip = stm == chess.Black
	} else {
		flip = swapped
		if (stm == chess.White) == flip {
			bside = 1
		}
	}
	var p [maxPieces]int
	fill := func(e *encInfo, i, mirror int) int {
		pc := e.pieces[i]
		c := chess.Color(pc >> 3)
		if flip {
			c = c.Other()
		}
		for bb := pos.Pieces(c, chess.PieceType(pc&7)); bb != 0 && i < t.lay.num; {
			p[i] = int(bb.PopLSB()) ^ mirror
			i++
		}
		return i
	}
	side := bside
	if k == KindDTZ {
		side = 0
	}
	file := 0
	var e *encInfo
	var idx uint64
	ok := true
	if !t.lay.hasPawns {
		if k == KindDTZ && int(t.dtzFlags[0]&dtzSecondSide) != bside && !t.lay.symmetric {
			return 0, true, false, nil
		}
		if e = t.parts[0][side]; e == nil {
			return 0, false, false, &FileError{File: t.name, Err: corruptf("no sub-table for the second side to move")}
		}
		for i := 0; i < t.lay.num; {
			i = fill(e, i, 0)
		}
		idx, ok = e.encode(&t.lay, p[:t.lay.num], encPiece)
	} else {
		mirror := 0
		if flip {
			mirror = 0x38
		}
		i := fill(t.parts[0][0], 0, mirror)
		file = leadingPawn(&t.lay, p[:])
		if k == KindDTZ && int(t.dtzFlags[file]&dtzSecondSide) != bside && !t.lay.symmetric {
			return 0, true, false, nil
		}
		if e = t.parts[file][side]; e == nil {
			return 0, false, false, &FileError{File: t.name, Err: corruptf("no sub-table for the second side to move")}
		}
		for i < t.lay.num {
			i = fill(e, i, mirror)
		}
		idx, ok = e.encode(&t.lay, p[:t.lay.num], encFile)
	}
	if !ok {
		return 0, false, false, &FileError{File: t.name, Err: corruptf("position %s has no index", pos.FEN())}
	}
	raw, err := t.lookup(ctx, e, 2*file+side, idx)
	if err != nil {
		return 0, false, false, err
	}
	if k == KindWDL {
		if raw > 4 {
			return 0, false, false, &FileError{File: t.name, Err: corruptf("WDL value %d", raw)}
		}
		return int(raw) - 2, false, false, nil
	}
	v = int(raw)
	flags := t.dtzFlags[file]
	if flags&dtzMapped != 0 {
		mp := t.dtzMaps[file][wdlToMap[wdl+2]]
		if v >= len(mp) {
			return 0, false, false, &FileError{File: t.name, Err: corruptf("DTZ value %d past its map (%d)", v, len(mp))}
		}
		v = int(mp[v])
	}
	if flags&plyFlag[wdl+2] == 0 || wdl&1 != 0 {
		// Stored in moves: the distance in plies is 2v or 2v+1.
		return 2 * v, false, true, nil
	}
	return v, false, false, nil
}

// posStack holds the positions a probe's search visits, so children do not
// each cost a heap allocation. A probe takes one from stackPool.
type posStack struct {
	buf [32]chess.Position
	n   int
}

var stackPool = sync.Pool{New: func() any { return new(posStack) }}

// play returns pos after m, on top of the stack. The caller drops it by
// restoring n.
func (s *posStack) play(pos *chess.Position, m chess.Move) *chess.Position {
	if s.n == len(s.buf) {
		c := pos.Play(m) // deeper than any real search: fall back to the heap
		return &c
	}
	c := &s.buf[s.n]
	s.n++
	*c = pos.Play(m)
	return c
}

// mayCapture reports whether the side to move attacks any enemy man or has
// an en-passant square: a cheap test that lets most positions skip move
// generation in the capture search.
func mayCapture(pos *chess.Position) bool {
	if pos.EnPassant() != chess.NoSquare {
		return true
	}
	us := pos.SideToMove()
	theirs := pos.ByColor(us.Other())
	occ := pos.Occupied()
	var att chess.Bitboard
	for b := pos.Pieces(us, chess.King); b != 0; {
		att |= chess.KingAttacks(b.PopLSB())
	}
	for b := pos.Pieces(us, chess.Knight); b != 0; {
		att |= chess.KnightAttacks(b.PopLSB())
	}
	for b := pos.Pieces(us, chess.Bishop) | pos.Pieces(us, chess.Queen); b != 0; {
		att |= chess.BishopAttacks(b.PopLSB(), occ)
	}
	for b := pos.Pieces(us, chess.Rook) | pos.Pieces(us, chess.Queen); b != 0; {
		att |= chess.RookAttacks(b.PopLSB(), occ)
	}
	for b := pos.Pieces(us, chess.Pawn); b != 0; {
		att |= chess.PawnAttacks(us, b.PopLSB())
	}
	return att&theirs != 0
}

// captureMoves appends pos's legal captures (en passant included) to dst.
func captureMoves(pos *chess.Position, dst []chess.Move) []chess.Move {
	if !mayCapture(pos) {
		return dst
	}
	var buf [256]chess.Move
	for _, m := range pos.LegalMoves(buf[:0]) {
		if pos.IsCapture(m) {
			dst = append(dst, m)
		}
	}
	return dst
}

// alphaBeta resolves captures: the WDL of pos (which has no en-passant
// rights) within the window (alpha, beta).
func (tb *Tablebase) alphaBeta(ctx context.Context, st *posStack, pos *chess.Position, alpha, beta int) (int, error) {
	var buf [64]chess.Move
	mark := st.n
	for _, m := range captureMoves(pos, buf[:0]) {
		child := st.play(pos, m)
		v, err := tb.alphaBeta(ctx, st, child, -beta, -alpha)
		st.n = mark
		if err != nil {
			return 0, err
		}
		v = -v
		if v > alpha {
			if v >= beta {
				return v, nil
			}
			alpha = v
		}
	}
	v, _, _, err := tb.probeTable(ctx, pos, KindWDL, 0)
	if err != nil {
		return 0, err
	}
	return max(alpha, v), nil
}

// probeWDL returns pos's WDL for the side to move and whether a zeroing
// capture (or an en-passant capture) is a best move, in which case the DTZ
// table must not be trusted for pos.
func (tb *Tablebase) probeWDL(ctx context.Context, st *posStack, pos *chess.Position) (int, bool, error) {
	bestCap, bestEP := -3, -3
	var buf [64]chess.Move
	caps := captureMoves(pos, buf[:0])
	mark := st.n
	for _, m := range caps {
		child := st.play(pos, m)
		v, err := tb.alphaBeta(ctx, st, child, -2, -bestCap)
		st.n = mark
		if err != nil {
			return 0, false, err
		}
		v = -v
		if v > bestCap {
			if v == 2 {
				return 2, true, nil
			}
			if !m.IsEnPassant() {
				bestCap = v
			} else if v > bestEP {
				bestEP = v
			}
		}
	}
	v, _, _, err := tb.probeTable(ctx, pos, KindWDL, 0)
	if err != nil {
		return 0, false, err
	}
	if bestEP > bestCap {
		if bestEP > v {
			return bestEP, true, nil
		}
		bestCap = bestEP
	}
	if bestCap >= v {
		return bestCap, bestCap > 0, nil
	}
	if bestEP > -3 && v == 0 {
		// The table value is that of the position without en-passant
		// rights; if that position is stalemate, the capture decides.
		var all [256]chess.Move
		onlyEP := true
		for _, m := range pos.LegalMoves(all[:0]) {
			if !m.IsEnPassant() {
				onlyEP = false
				break
			}
		}
		if onlyEP && !pos.InCheck() {
			return bestEP, true, nil
		}
	}
	return v, false, nil
}

// probeDTZ returns pos's DTZ50″ for the side to move (Fathom's probe_dtz)
// and whether it may be rounded: one ply short of the true distance,
// because the table stores that class of values in moves, or because the
// value comes from a child's that may be.
func (tb *Tablebase) probeDTZ(ctx context.Context, st *posStack, pos *chess.Position) (int, bool, error) {
	wdl, zeroingBest, err := tb.probeWDL(ctx, st, pos)
	if err != nil || wdl == 0 {
		return 0, false, err
	}
	if zeroingBest {
		return wdlToDTZ[wdl+2], false, nil
	}
	var buf [256]chess.Move
	moves := pos.LegalMoves(buf[:0])
	mark := st.n
	if wdl > 0 {
		// A pawn move that keeps the win is a zeroing move one ply away.
		for _, m := range moves {
			if pos.PieceAt(m.From()).Type() != chess.Pawn || pos.IsCapture(m) {
				continue
			}
			child := st.play(pos, m)
			v, _, err := tb.probeWDL(ctx, st, child)
			st.n = mark
			if err != nil {
				return 0, false, err
			}
			if -v == wdl {
				return wdlToDTZ[wdl+2], false, nil
			}
		}
	}
	d, other, rounded, err := tb.probeTable(ctx, pos, KindDTZ, wdl)
	if err != nil {
		return 0, false, err
	}
	if !other {
		if wdl > 0 {
			return wdlToDTZ[wdl+2] + d, rounded, nil
		}
		return wdlToDTZ[wdl+2] - d, rounded, nil
	}
	// The table holds the other side to move: one ply of search. Among
	// tied children a win is exact if any is (the others can only be
	// longer), a loss rounded if any is (it may be the longer).
	best, bestRounded := math.MaxInt, false
	if wdl < 0 {
		best = wdlToDTZ[wdl+2]
	}
	for _, m := range moves {
		if pos.IsZeroing(m) {
			continue
		}
		child := st.play(pos, m)
		v, r, err := tb.probeDTZ(ctx, st, child)
		mate := err == nil && v == -1 && child.IsCheckmate()
		st.n = mark
		if err != nil {
			return 0, false, err
		}
		v = -v
		switch {
		case mate:
			best, bestRounded = 1, false
		case wdl > 0 && v > 0 && v+1 < best:
			best, bestRounded = v+1, r
		case wdl > 0 && v > 0 && v+1 == best:
			bestRounded = bestRounded && r
		case wdl < 0 && v-1 < best:
			best, bestRounded = v-1, r
		case wdl < 0 && v-1 == best:
			bestRounded = bestRounded || r
		}
	}
	if best == math.MaxInt {
		return 0, false, corruptf("won position %s has no winning move in the tables", pos.FEN())
	}
	return best, bestRounded, nil
}

// WDL returns the table WDL of pos for the side to move: -2 loss, -1
// blessed loss (a loss that the 50-move rule saves), 0 draw, 1 cursed win,
// 2 win. The half-move clock is ignored; en passant is taken into account.
// These are python-chess's probe_wdl and Fathom's tb_probe_wdl values.
func (tb *Tablebase) WDL(ctx context.Context, pos *chess.Position) (int, error) {
	if err := tb.enter(); err != nil {
		return 0, err
	}
	defer tb.exit()
	if err := checkPosition(pos); err != nil {
		return 0, err
	}
	tb.openAhead(pos, KindWDL)
	if !mayCapture(pos) {
		// Without captures the table's value is the answer.
		v, _, _, err := tb.probeTable(ctx, pos, KindWDL, 0)
		return v, err
	}
	st := stackPool.Get().(*posStack)
	defer stackPool.Put(st)
	st.n = 0
	v, _, err := tb.probeWDL(ctx, st, pos)
	return v, err
}

// DTZ returns the DTZ50″ of pos in plies for the side to move, as
// python-chess's probe_dtz: positive when the side to move wins, negative
// when it loses, 0 for a draw, and |DTZ| > 100 in the cursed band (a win or
// loss that the 50-move rule turns into a draw). The value may be one ply
// more than the truth where the table stores moves rather than plies, as
// the format allows. A checkmated side gets -1, the value of a position
// whose (lost) zeroing has just happened. The clock is ignored.
func (tb *Tablebase) DTZ(ctx context.Context, pos *chess.Position) (int, error) {
	if err := tb.enter(); err != nil {
		return 0, err
	}
	defer tb.exit()
	if err := checkPosition(pos); err != nil {
		return 0, err
	}
	tb.openAhead(pos, KindWDL, KindDTZ)
	st := stackPool.Get().(*posStack)
	defer stackPool.Put(st)
	st.n = 0
	v, _, err := tb.probeDTZ(ctx, st, pos)
	return v, err
}

// DTZWithRounding is DTZ and whether the value may be rounded: where a
// table stores a class of distances in moves rather than plies, the true
// DTZ can be one ply further from zero than the value given (shakmaty-
// syzygy's MaybeRounded, whose precise half is lila-tablebase's
// precise_dtz). Values found from a zeroing move or a mate are exact.
// Where the table holds only the other side to move, the value is the best
// child's plus a ply, and may be rounded if that child's may. Among
// children tied at the best value, a win is exact if any of them is exact,
// and a loss may be rounded if any of them may be (a loss lasts as long as
// its longest line). shakmaty-syzygy takes the first tied child's flag in
// move order, which calls such a loss precise when a rounded child is
// tied with an exact one.
func (tb *Tablebase) DTZWithRounding(ctx context.Context, pos *chess.Position) (dtz int, maybeRounded bool, err error) {
	if err := tb.enter(); err != nil {
		return 0, false, err
	}
	defer tb.exit()
	if err := checkPosition(pos); err != nil {
		return 0, false, err
	}
	tb.openAhead(pos, KindWDL, KindDTZ)
	st := stackPool.Get().(*posStack)
	defer stackPool.Put(st)
	st.n = 0
	return tb.probeDTZ(ctx, st, pos)
}
