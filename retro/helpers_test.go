package retro

import (
	"strings"
	"testing"

	cchess "github.com/corentings/chess/v2"

	"github.com/tbfs/tbfs/chess"
)

func mustFEN(t testing.TB, fen string) chess.Position {
	t.Helper()
	p, err := chess.ParseFEN(fen)
	if err != nil {
		t.Fatalf("ParseFEN(%q): %v", fen, err)
	}
	return p
}

// fenFields returns the first n fields of a FEN.
func fenFields(fen string, n int) string {
	f := strings.Fields(fen)
	return strings.Join(f[:min(n, len(f))], " ")
}

// ccGame opens fen with the independent corentings/chess library.
func ccGame(t testing.TB, fen string) *cchess.Game {
	t.Helper()
	opt, err := cchess.FEN(fen)
	if err != nil {
		t.Fatalf("corentings cannot read %q: %v", fen, err)
	}
	return cchess.NewGame(opt)
}

// ccReaches reports whether some legal move of parent (according to
// corentings/chess) leads to child, comparing board, side to move and
// castling rights. The en-passant field is compared only when ours carries
// one: corentings records the target after every double push, ours only
// when a capture can use it.
func ccReaches(t testing.TB, parent, child chess.Position) bool {
	t.Helper()
	g := ccGame(t, parent.FEN())
	want := child.FEN()
	for _, m := range g.Position().ValidMoves() {
		next := g.Position().Update(&m).String()
		if fenFields(next, 3) != fenFields(want, 3) {
			continue
		}
		if child.EnPassant() != chess.NoSquare && strings.Fields(next)[3] != child.EnPassant().String() {
			continue
		}
		return true
	}
	return false
}

// reaches reports whether some legal move of parent (by our chess package)
// leads to child, ignoring the clocks.
func reaches(parent, child chess.Position) bool {
	for _, m := range parent.LegalMoves(nil) {
		c := parent.Play(m)
		if key(&c) == key(&child) {
			return true
		}
	}
	return false
}

// ccLineMates replays line from fen with corentings/chess and reports
// whether every move is legal there and the final position is checkmate.
func ccLineMates(t testing.TB, fen string, line []chess.Move) bool {
	t.Helper()
	g := ccGame(t, fen)
	for _, m := range line {
		if err := g.PushNotationMove(m.UCI(), cchess.UCINotation{}, nil); err != nil {
			t.Errorf("corentings rejects %s in line from %s: %v", m.UCI(), fen, err)
			return false
		}
	}
	return g.Position().Status() == cchess.Checkmate
}
