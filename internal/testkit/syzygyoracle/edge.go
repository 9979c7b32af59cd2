package syzygyoracle

import (
	"strings"
	"testing"

	"github.com/tbfs/tbfs/chess"
)

// EdgePawnKNNvKP returns the rows of KNNvKP positions (two knights, one
// pawn, five men) that are not settled by the board, stand at clock 0 (where
// Fathom's class is the table's) and have the pawn on the a- or h-file.
// Their probes read the part of KNNvKP.rtbw for those pawn files, which the
// generator writes first, away from the file's end; tests that damage the
// file near its end use them as rows whose reads miss the damage.
func EdgePawnKNNvKP(tb testing.TB, rows []Row) []Row {
	tb.Helper()
	const fileA, fileH chess.Bitboard = 0x0101010101010101, 0x0101010101010101 << 7
	var out []Row
	for _, r := range rows {
		pos, err := chess.ParseFEN(r.FEN)
		if err != nil {
			tb.Fatalf("%s: %v", r.FEN, err)
		}
		pawns := pos.Pieces(chess.White, chess.Pawn) | pos.Pieces(chess.Black, chess.Pawn)
		knights := pos.Pieces(chess.White, chess.Knight).Count() + pos.Pieces(chess.Black, chess.Knight).Count()
		if knights == 2 && pawns.Count() == 1 && pos.Occupied().Count() == 5 && pawns&(fileA|fileH) != 0 &&
			!r.Terminal() && strings.Fields(r.FEN)[4] == "0" {
			out = append(out, r)
		}
	}
	return out
}
