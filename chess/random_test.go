package chess

import (
	"math/rand/v2"
	"testing"
)

// randomSparse returns a random legal position with the two kings and up to
// extra other pieces, sometimes with castling rights and an en-passant
// square where the placement allows them.
func randomSparse(t testing.TB, rng *rand.Rand, extra int) Position {
	t.Helper()
	for tries := 0; tries < 10000; tries++ {
		var board [64]Piece
		free := func() Square {
			for {
				sq := Square(rng.IntN(64))
				if board[sq] == NoPiece {
					return sq
				}
			}
		}
		// Kings on their home squares now and then, so castling shows up.
		wk, bk := free(), Square(0)
		if rng.IntN(4) == 0 {
			wk = E1
		}
		board[wk] = MakePiece(White, King)
		bk = free()
		if rng.IntN(4) == 0 && board[E8] == NoPiece {
			bk = E8
		}
		board[bk] = MakePiece(Black, King)
		n := rng.IntN(extra + 1)
		for range n {
			c := Color(rng.IntN(2))
			pt := PieceType(1 + rng.IntN(5))
			sq := free()
			if pt == Pawn && (sq.Rank() == 0 || sq.Rank() == 7) {
				continue
			}
			board[sq] = MakePiece(c, pt)
		}
		var cr CastlingRights
		for i, h := range castleHomes {
			c := Color(i / 2)
			if rng.IntN(3) > 0 && board[h.rook] == NoPiece {
				board[h.rook] = MakePiece(c, Rook)
			}
			if board[h.king] == MakePiece(c, King) && board[h.rook] == MakePiece(c, Rook) && rng.IntN(2) == 0 {
				cr |= 1 << i
			}
		}
		side := Color(rng.IntN(2))
		ep := NoSquare
		if rng.IntN(3) == 0 {
			// Try to make the last move a double push beside a capturer.
			f := rng.IntN(8)
			pushed, epSq, origin := MakeSquare(f, 4), MakeSquare(f, 5), MakeSquare(f, 6)
			if side == Black {
				pushed, epSq, origin = MakeSquare(f, 3), MakeSquare(f, 2), MakeSquare(f, 1)
			}
			if board[epSq] == NoPiece && board[origin] == NoPiece && board[pushed] == NoPiece {
				board[pushed] = MakePiece(side.Other(), Pawn)
				if f > 0 && board[pushed-1] == NoPiece {
					board[pushed-1] = MakePiece(side, Pawn)
				}
				ep = epSq
			}
		}
		p, err := FromBoard(board, side, cr, ep, rng.IntN(5), 1+rng.IntN(40))
		if err == nil {
			return p
		}
	}
	t.Fatal("randomSparse: no legal position in 10000 tries")
	return Position{}
}

// playout calls visit on p and on each position of a random game from it,
// at most plies long.
func playout(rng *rand.Rand, p Position, plies int, visit func(p *Position, moves []Move) bool) {
	var buf [256]Move
	for range plies {
		moves := p.LegalMoves(buf[:0])
		if !visit(&p, moves) || len(moves) == 0 {
			return
		}
		p = p.Play(moves[rng.IntN(len(moves))])
	}
}
