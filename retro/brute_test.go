package retro

import (
	"github.com/tbfs/tbfs/chess"
)

// bruteParents finds every legal parent of child by trying every way a
// single move could have produced it — any man of the side that just moved
// put back on any empty square (as a pawn too, when it stands on its
// promotion rank), with nothing or any enemy man restored on the square it
// stands on, any superset of the child's castling rights and any
// en-passant square — plus en-passant captures and castling, and keeping
// the candidates from which a legal forward move reaches child. It shares
// nothing with the chess package's unmove generator, so it can referee it:
// the forward move generator is the arbiter of what a parent is.
func bruteParents(child chess.Position) []chess.Position {
	mover := child.SideToMove().Other()
	var cb [64]chess.Piece
	occ := child.Occupied()
	for b := occ; b != 0; {
		sq := b.PopLSB()
		cb[sq] = child.PieceAt(sq)
	}
	var out []chess.Position
	seen := map[posKey]bool{}
	epRank := 2 // the parent's en-passant square: behind a pawn the opponent (of mover) pushed
	if mover == chess.White {
		epRank = 5
	}
	homes := [4][2]chess.Square{{chess.E1, chess.H1}, {chess.E1, chess.A1}, {chess.E8, chess.H8}, {chess.E8, chess.A8}}
	try := func(board [64]chess.Piece) {
		// Only rights whose king and rook stand at home, and only en-passant
		// squares behind a pawn that could just have been pushed, can pass
		// validation; skipping the rest is an optimisation only.
		var possible chess.CastlingRights
		for i, h := range homes {
			c := chess.Color(i / 2)
			if board[h[0]] == chess.MakePiece(c, chess.King) && board[h[1]] == chess.MakePiece(c, chess.Rook) {
				possible |= 1 << i
			}
		}
		pushed := 8 // from the en-passant square to the pushed pawn
		if mover == chess.Black {
			pushed = -8
		}
		for cr := chess.CastlingRights(0); cr <= chess.AllCastling; cr++ {
			if cr&child.Castling() != child.Castling() || cr&^possible != 0 {
				continue
			}
			for ep := -1; ep < 8; ep++ {
				sq := chess.NoSquare
				if ep >= 0 {
					sq = chess.MakeSquare(ep, epRank)
					if board[int(sq)-pushed] != chess.MakePiece(mover.Other(), chess.Pawn) {
						continue
					}
				}
				p, err := chess.FromBoard(board, mover, cr, sq, 0, 1)
				if err != nil || p.EnPassant() != sq {
					continue
				}
				k := key(&p)
				if seen[k] || !reaches(p, child) {
					continue
				}
				seen[k] = true
				out = append(out, p)
			}
		}
	}
	promoRank, pawnDir := 7, 8
	if mover == chess.Black {
		promoRank, pawnDir = 0, -8
	}
	for b := child.ByColor(mover); b != 0; {
		s := b.PopLSB()
		pc := cb[s]
		types := []chess.PieceType{pc.Type()}
		if pc.Type() != chess.King && pc.Type() != chess.Pawn && s.Rank() == promoRank {
			types = append(types, chess.Pawn)
		}
		for o := chess.Square(0); o < 64; o++ {
			if occ.Has(o) {
				continue
			}
			for _, ot := range types {
				if ot == chess.Pawn && (o.Rank() == 0 || o.Rank() == 7) {
					continue
				}
				for _, cap := range []chess.PieceType{chess.NoPieceType, chess.Queen, chess.Rook, chess.Bishop, chess.Knight, chess.Pawn} {
					if cap == chess.Pawn && (s.Rank() == 0 || s.Rank() == 7) {
						continue
					}
					board := cb
					board[s] = chess.MakePiece(mover.Other(), cap)
					board[o] = chess.MakePiece(mover, ot)
					try(board)
				}
			}
		}
		// En passant: the captured pawn stood behind s.
		if pc.Type() == chess.Pawn && s.Rank() == epRank {
			behind := s - chess.Square(pawnDir)
			for _, df := range []int{-1, 1} {
				f := s.File() + df
				if f < 0 || f > 7 || occ.Has(behind) {
					continue
				}
				o := chess.MakeSquare(f, behind.Rank())
				if occ.Has(o) {
					continue
				}
				board := cb
				board[s] = chess.NoPiece
				board[o] = pc
				board[behind] = chess.MakePiece(mover.Other(), chess.Pawn)
				try(board)
			}
		}
	}
	// Castling: the king two squares from e1/e8 and the rook beside it.
	home := chess.MakeSquare(4, 0)
	if mover == chess.Black {
		home = chess.MakeSquare(4, 7)
	}
	for _, side := range []struct{ kTo, rTo, rFrom int }{{6, 5, 7}, {2, 3, 0}} {
		kTo, rTo, rFrom := home+chess.Square(side.kTo-4), home+chess.Square(side.rTo-4), home+chess.Square(side.rFrom-4)
		if cb[kTo] != chess.MakePiece(mover, chess.King) || cb[rTo] != chess.MakePiece(mover, chess.Rook) || occ.Has(home) || occ.Has(rFrom) {
			continue
		}
		board := cb
		board[kTo], board[rTo] = chess.NoPiece, chess.NoPiece
		board[home], board[rFrom] = chess.MakePiece(mover, chess.King), chess.MakePiece(mover, chess.Rook)
		try(board)
	}
	return out
}
