package chess_test

import (
	"errors"
	"testing"

	"github.com/tbfs/tbfs/chess"
)

// TestParseFENLenient checks ParseFENLenient against shakmaty's FEN parser
// (shakmaty/src/fen.rs, Fen::from_ascii) and position rules
// (shakmaty/src/position.rs, validate; setup.rs, Castles::from_setup and
// EnPassant::from_setup) with the errors lila-tablebase ignores
// (src/request.rs: invalid castling rights, invalid en-passant square,
// impossible check). want is the FEN the position writes; err the class
// of a refusal.
func TestParseFENLenient(t *testing.T) {
	for _, tc := range []struct {
		name, fen, want string
		err             error
	}{
		// EnPassant::from_setup: no black pawn on e5 explains e6, so the
		// square is dropped (lila: ignore_invalid_ep_square).
		{"ep without pushed pawn", "8/8/8/3pP3/8/4k3/8/K7 w - e6 0 1", "8/8/8/3pP3/8/4k3/8/K7 w - - 0 1", nil},
		{"ep legal", "8/8/8/3pP3/8/4k3/8/K7 w - d6 0 1", "8/8/8/3pP3/8/4k3/8/K7 w - d6 0 1", nil},
		{"ep wrong rank", "8/8/8/3pP3/8/4k3/8/K7 w - d3 0 1", "8/8/8/3pP3/8/4k3/8/K7 w - - 0 1", nil},
		// Castles::from_setup: no rook on a1 or h1, both rights dropped
		// (lila: ignore_invalid_castling_rights).
		{"castling without rooks", "4k3/8/8/8/8/8/8/KQ6 w KQ - 0 1", "4k3/8/8/8/8/8/8/KQ6 w - - 0 1", nil},
		{"castling one rook", "4k3/8/8/8/8/8/8/R3K3 w KQ - 0 1", "4k3/8/8/8/8/8/8/R3K3 w Q - 0 1", nil},
		// Fen::from_ascii: Shredder-FEN file letters, any order, repeats.
		{"shredder", "r3k2r/8/8/8/8/8/8/R3K2R w HAha - 0 1", "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", nil},
		{"shredder order and repeats", "r3k2r/8/8/8/8/8/8/R3K2R w ahAHK - 0 1", "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", nil},
		// Standard castling mode: a chess960 rook (b1) or king (f1) is not
		// castled with; its right is dropped.
		{"x-fen inner rook", "4k3/8/8/8/8/8/8/1R2K3 w Q - 0 1", "4k3/8/8/8/8/8/8/1R2K3 w - - 0 1", nil},
		{"king off e1", "4k3/8/8/8/8/8/8/R4K1R w KQ - 0 1", "4k3/8/8/8/8/8/8/R4K1R w - - 0 1", nil},
		{"too many rights", "4k3/8/8/8/8/8/8/RR2K2R w ABH - 0 1", "", chess.ErrBadFEN},
		{"bad castling letter", "4k3/8/8/8/8/8/8/R3K2R w KX - 0 1", "", chess.ErrBadFEN},
		// Missing fields take 8/8/8/8/8/8/8/8 w - - 0 1's; '_' and runs
		// of spaces separate fields; move number 0 is 1.
		{"board only", "8/8/8/8/8/8/8/K1k5", "8/8/8/8/8/8/8/K1k5 w - - 0 1", nil},
		{"underscores", "8/8/8/8/8/8/8/K1k5__b_-_-_7_0", "8/8/8/8/8/8/8/K1k5 b - - 7 1", nil},
		{"negative clock", "8/8/8/8/8/8/8/K1k5 w - - -1 1", "", chess.ErrBadFEN},
		// Crazyhouse's ~ and pockets and Three-check's fields are read and
		// ignored (Chess::from_setup drops them).
		{"promoted mark", "6k1/8/8/8/8/8/8/KQ~6 w - - 0 1", "6k1/8/8/8/8/8/8/KQ6 w - - 0 1", nil},
		{"pocket in brackets", "6k1/8/8/8/8/8/8/KQ6[Qn] w - - 0 1", "6k1/8/8/8/8/8/8/KQ6 w - - 0 1", nil},
		{"pocket after a slash", "6k1/8/8/8/8/8/8/KQ6/qN w - - 0 1", "6k1/8/8/8/8/8/8/KQ6 w - - 0 1", nil},
		{"empty pocket", "6k1/8/8/8/8/8/8/KQ6[] w - - 0 1", "6k1/8/8/8/8/8/8/KQ6 w - - 0 1", nil},
		{"bad pocket", "6k1/8/8/8/8/8/8/KQ6[X] w - - 0 1", "", chess.ErrBadFEN},
		{"checks before clocks", "8/8/8/8/8/8/8/K1k5 w - - 3+3 5 9", "8/8/8/8/8/8/8/K1k5 w - - 5 9", nil},
		{"checks after clocks", "8/8/8/8/8/8/8/K1k5 w - - 5 9 +1+2", "8/8/8/8/8/8/8/K1k5 w - - 5 9", nil},
		{"two checks fields", "8/8/8/8/8/8/8/K1k5 w - - 3+3 5 9 +1+2", "", chess.ErrBadFEN},
		{"extra field", "8/8/8/8/8/8/8/K1k5 w - - 5 9 x", "", chess.ErrBadFEN},
		// validate: what lila does not ignore stays an error.
		{"opposite check", "8/8/8/8/8/8/8/KQ5k w - - 0 1", "", chess.ErrIllegalPosition},
		{"missing king", "8/8/8/8/8/8/8/K7 w - - 0 1", "", chess.ErrIllegalPosition},
		{"pawn on back rank", "P7/8/8/8/8/8/8/K1k5 w - - 0 1", "", chess.ErrIllegalPosition},
		// is_standard_material counts bishops by square colour: eight pawns
		// and two light-squared bishops need a promotion too many.
		{"same-colour bishops", "1k6/8/8/8/8/8/PPPPPPPP/KB1B4 w - - 0 1", "", chess.ErrIllegalPosition},
		{"bishop pair", "1k6/8/8/8/8/8/PPPPPPPP/KBB5 w - - 0 1", "1k6/8/8/8/8/8/PPPPPPPP/KBB5 w - - 0 1", nil},
		// An impossible check (three checkers) is ignored by lila.
		{"impossible check", "4k3/8/3N4/1B6/8/8/8/K3R3 b - - 0 1", "4k3/8/3N4/1B6/8/8/8/K3R3 b - - 0 1", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := chess.ParseFENLenient(tc.fen)
			switch {
			case tc.err != nil:
				if !errors.Is(err, tc.err) {
					t.Fatalf("%q: %v, want %v", tc.fen, err, tc.err)
				}
			case err != nil:
				t.Fatalf("%q: %v", tc.fen, err)
			case p.FEN() != tc.want:
				t.Fatalf("%q: %s, want %s", tc.fen, p.FEN(), tc.want)
			}
		})
	}
}

// TestParseFENLenientSaturates checks that a clock past what fits is
// taken as a large one rather than refused (shakmaty's fen.rs reads the
// clocks with btou_saturating); every clock from 100 on answers alike.
func TestParseFENLenientSaturates(t *testing.T) {
	p, err := chess.ParseFENLenient("8/8/8/8/8/8/8/K1k5 w - - 99999999999999999999 99999999999999999999")
	if err != nil {
		t.Fatal(err)
	}
	if p.HalfmoveClock() < 100 {
		t.Errorf("clock %d, want a saturated one", p.HalfmoveClock())
	}
}

// TestParseFENLenientAgreesWithStrict checks that on FENs ParseFEN
// accepts, ParseFENLenient reads the same position (shakmaty's rules
// refuse nothing standard FEN that ParseFEN takes, except for the bishops'
// square colours, which these FENs respect).
func TestParseFENLenientAgreesWithStrict(t *testing.T) {
	for _, fen := range []string{
		chess.StartFEN,
		"r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 3 20",
		"8/8/8/3pP3/8/4k3/8/K7 w - d6 0 1",
		"8/8/8/5k2/8/8/1Q6/K7 w - - 0 1",
		"k7/2p5/8/1QK5/8/8/8/8 w - - 13 9",
	} {
		strict, err := chess.ParseFEN(fen)
		if err != nil {
			t.Fatal(err)
		}
		lenient, err := chess.ParseFENLenient(fen)
		if err != nil {
			t.Fatalf("%s: %v", fen, err)
		}
		if strict != lenient {
			t.Errorf("%s: lenient %s, strict %s", fen, lenient.FEN(), strict.FEN())
		}
	}
}

// FuzzParseFENLenient checks that whatever ParseFENLenient accepts is a
// position ParseFEN accepts too, its FEN read back as the same position:
// leniency drops what is wrong, it never keeps it.
func FuzzParseFENLenient(f *testing.F) {
	for _, s := range []string{
		chess.StartFEN, "r3k2r/8/8/8/8/8/8/R3K2R w HAha - 0 1", "8/8/8/3pP3/8/4k3/8/K7 w - e6 0 1",
		"4k3/8/8/8/8/8/8/KQ6 w KQ - 0 1", "6k1/8/8/8/8/8/8/KQ~6[Qn] w - - 3+3 0 1", "8/8/8/8/8/8/8/K1k5__b",
		"4k3/8/8/8/8/8/8/RR2K2R w ABH - 0 1", "1k6/8/8/8/8/8/PPPPPPPP/KB1B4 w - - 0 1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := chess.ParseFENLenient(s)
		if err != nil {
			return
		}
		q, err := chess.ParseFEN(p.FEN())
		if err != nil {
			t.Fatalf("%q read as %s, which ParseFEN refuses: %v", s, p.FEN(), err)
		}
		if q != p {
			t.Fatalf("%q read as %s, which ParseFEN reads as %s", s, p.FEN(), q.FEN())
		}
	})
}
