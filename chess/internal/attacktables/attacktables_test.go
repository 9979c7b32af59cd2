package attacktables

import "testing"

// TestKnownMagicsFit: every stored magic maps its square's occupancies
// without a harmful collision, so Build never falls back to searching and
// the generated file does not depend on the search.
func TestKnownMagicsFit(t *testing.T) {
	tb := Build()
	for sq := range 64 {
		if tb.RookMagics[sq].Magic != rookSeeds[sq] || tb.BishopMagics[sq].Magic != bishopSeeds[sq] {
			t.Errorf("square %d: a stored magic did not fit and was replaced", sq)
		}
	}
}
