package retro

import "github.com/tbfs/tbfs/chess"

// posKey identifies a position without its clocks, so that the same
// position reached at different move numbers is one entry.
type posKey struct {
	white, black chess.Bitboard
	byType       [6]chess.Bitboard
	side         chess.Color
	castling     chess.CastlingRights
	ep           chess.Square
}

func key(p *chess.Position) posKey {
	k := posKey{
		white:    p.ByColor(chess.White),
		black:    p.ByColor(chess.Black),
		side:     p.SideToMove(),
		castling: p.Castling(),
		ep:       p.EnPassant(),
	}
	for pt := chess.Pawn; pt <= chess.King; pt++ {
		k.byType[pt-1] = p.Pieces(chess.White, pt) | p.Pieces(chess.Black, pt)
	}
	return k
}
