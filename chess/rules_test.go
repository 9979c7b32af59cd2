package chess

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// uciSet returns the sorted UCI spellings of moves.
func uciSet(moves []Move) []string {
	s := make([]string, len(moves))
	for i, m := range moves {
		s[i] = m.UCI()
	}
	slices.Sort(s)
	return s
}

func mustFEN(t *testing.T, fen string) Position {
	t.Helper()
	p, err := ParseFEN(fen)
	if err != nil {
		t.Fatalf("ParseFEN(%q): %v", fen, err)
	}
	return p
}

// mirrorUCI colour-flips a UCI move's squares (rank r becomes 9-r).
func mirrorUCI(s string) string {
	b := []byte(s)
	b[1] = '1' + '8' - b[1]
	b[3] = '1' + '8' - b[3]
	return string(b)
}

// TestLegalMoveSets checks hand-built positions whose legal move set follows
// from the rules alone; the reasoning for each row is in its comment. Every
// row is also checked colour-flipped (the rules are symmetric).
func TestLegalMoveSets(t *testing.T) {
	tests := []struct {
		name string
		fen  string
		want []string
	}{
		{
			// Black has just played d7-d5, giving check to Ke4 with the pawn.
			// Ra3 covers d3 e3 f3, Rf8 covers f3 f4 f5, Nb5 covers d4, c6
			// defends d5, e5 is White's own pawn, e5-e6 does not answer the
			// check: the only answer is to capture the checker en passant.
			name: "check by a double-pushed pawn, answered only by en passant",
			fen:  "5r1k/8/2p5/1n1pP3/4K3/r7/8/8 w - d6 0 2",
			want: []string{"e5d6"},
		},
		{
			// bxc6 would empty rank 5 between Ka5 and Rh5, so it is illegal;
			// b4 is covered by the c5 pawn; b6 and the king's a4 a6 b6 remain.
			name: "horizontally pinned pair may not capture en passant",
			fen:  "8/8/8/KPp4r/8/8/8/7k w - c6 0 2",
			want: []string{"a5a4", "a5a6", "a5b6", "b5b6"},
		},
		{
			// The same without the rook: the capture is legal.
			name: "the same capture without the pin",
			fen:  "8/8/8/KPp5/8/8/8/7k w - c6 0 2",
			want: []string{"a5a4", "a5a6", "a5b6", "b5b6", "b5c6"},
		},
		{
			// Re8 and Nd3 both check Ke1. Qxd3 and Rxe8 each answer only one
			// check, so only the king moves: e2 stays on the rook's file, f2
			// is covered by the knight, d1 d2 f1 are free.
			name: "double check allows only king moves",
			fen:  "1k2r2R/8/8/8/8/Q2n4/8/4K3 w - - 0 1",
			want: []string{"e1d1", "e1d2", "e1f1"},
		},
		{
			// Ke1 is in check from Re8 (through the empty e-file) and the
			// rook on a1 cannot block; castling out of check is illegal. The
			// king may go to d1 d2 f1 f2 (e2 stays on the file).
			name: "no castling out of check",
			fen:  "1k2r3/8/8/8/8/8/8/R3K2R w KQ - 0 1",
			want: []string{"e1d1", "e1d2", "e1f1", "e1f2"},
		},
		{
			// A lone king stalemated in the corner: no legal move.
			name: "stalemate",
			fen:  "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1",
			want: []string{},
		},
		{
			// Mate by the queen supported by the king.
			name: "checkmate",
			fen:  "7k/6Q1/6K1/8/8/8/8/8 b - - 0 1",
			want: []string{},
		},
		{
			// The promotion square e8 is free and the pawn is not pinned:
			// four promotions plus the king's moves (d1 d2 e2 f1 f2; the
			// black king on a8 is far).
			name: "promotions",
			fen:  "k7/4P3/8/8/8/8/8/4K3 w - - 0 1",
			want: []string{"e1d1", "e1d2", "e1e2", "e1f1", "e1f2", "e7e8b", "e7e8n", "e7e8q", "e7e8r"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := mustFEN(t, tc.fen)
			got := uciSet(p.LegalMoves(nil))
			want := slices.Sorted(slices.Values(tc.want))
			if !slices.Equal(got, want) {
				t.Errorf("%s: legal moves %v, want %v", tc.fen, got, want)
			}
			m := p.Mirror()
			gotM := uciSet(m.LegalMoves(nil))
			var wantM []string
			for _, s := range want {
				wantM = append(wantM, mirrorUCI(s))
			}
			slices.Sort(wantM)
			if len(wantM) == 0 {
				wantM = []string{}
			}
			if !slices.Equal(gotM, wantM) {
				t.Errorf("mirror %s: legal moves %v, want %v", m.FEN(), gotM, wantM)
			}
		})
	}
}

func TestCheckmateStalemate(t *testing.T) {
	tests := []struct {
		fen                string
		check, mate, stale bool
	}{
		{"7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", false, false, true}, // king boxed in by Qf7 and Kg6
		{"7k/6Q1/6K1/8/8/8/8/8 b - - 0 1", true, true, false},  // Qg7 defended by Kg6
		{"7k/8/6K1/8/8/8/8/7Q b - - 0 1", true, false, false},  // Qh1 checks; g8 is free
		{StartFEN, false, false, false},
	}
	for _, tc := range tests {
		p := mustFEN(t, tc.fen)
		if p.InCheck() != tc.check || p.IsCheckmate() != tc.mate || p.IsStalemate() != tc.stale {
			t.Errorf("%s: check %v mate %v stalemate %v, want %v %v %v", tc.fen,
				p.InCheck(), p.IsCheckmate(), p.IsStalemate(), tc.check, tc.mate, tc.stale)
		}
	}
}

// castles returns the castling moves among the legal moves.
func castles(p *Position) []string {
	var s []string
	for _, m := range p.LegalMoves(nil) {
		if m.IsCastle() {
			s = append(s, m.UCI())
		}
	}
	slices.Sort(s)
	return s
}

// TestCastlingRules checks castling against the rules: the king may not
// castle out of, through or into check; squares only the rook crosses (b1)
// may be attacked; every square between king and rook must be empty.
func TestCastlingRules(t *testing.T) {
	tests := []struct {
		name, fen string
		want      []string
	}{
		{"both free", "4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1", []string{"e1c1", "e1g1"}},
		{"out of check", "1k2r3/8/8/8/8/8/8/R3K2R w KQ - 0 1", nil},
		{"through check on f1", "4kr2/8/8/8/8/8/8/R3K2R w KQ - 0 1", []string{"e1c1"}},
		{"into check on g1", "4k1r1/8/8/8/8/8/8/R3K2R w KQ - 0 1", []string{"e1c1"}},
		{"through check on d1", "3rk3/8/8/8/8/8/8/R3K2R w KQ - 0 1", []string{"e1g1"}},
		{"into check on c1", "2r1k3/8/8/8/8/8/8/R3K2R w KQ - 0 1", []string{"e1g1"}},
		{"b1 attacked is allowed", "1r2k3/8/8/8/8/8/8/R3K2R w KQ - 0 1", []string{"e1c1", "e1g1"}},
		{"b1 occupied blocks", "4k3/8/8/8/8/8/8/RN2K2R w KQ - 0 1", []string{"e1g1"}},
		{"only the rights held", "4k3/8/8/8/8/8/8/R3K2R w K - 0 1", []string{"e1g1"}},
		{"pawn attack on f1", "4k3/8/8/8/8/8/6p1/R3K2R w KQ - 0 1", []string{"e1c1"}},
		{"black both", "r3k2r/8/8/8/8/8/8/4K3 b kq - 0 1", []string{"e8c8", "e8g8"}},
		{"black through check", "r3k2r/8/8/8/8/8/8/4KR2 b kq - 0 1", []string{"e8c8"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := mustFEN(t, tc.fen)
			if got := castles(&p); !slices.Equal(got, tc.want) {
				t.Errorf("%s: castling moves %v, want %v", tc.fen, got, tc.want)
			}
		})
	}
}

func TestCastlingPlay(t *testing.T) {
	p := mustFEN(t, "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1")
	for _, tc := range []struct{ move, fen string }{
		{"e1g1", "r3k2r/8/8/8/8/8/8/R4RK1 b kq - 1 1"},
		{"e1c1", "r3k2r/8/8/8/8/8/8/2KR3R b kq - 1 1"},
		{"h1h8", "r3k2R/8/8/8/8/8/8/R3K3 b Qq - 0 1"},
		{"a1a8", "R3k2r/8/8/8/8/8/8/4K2R b Kk - 0 1"},
		{"e1e2", "r3k2r/8/8/8/8/8/4K3/R6R b kq - 1 1"},
	} {
		m, err := p.ParseMove(tc.move)
		if err != nil {
			t.Fatal(err)
		}
		c := p.Play(m)
		if got := c.FEN(); got != tc.fen {
			t.Errorf("%s: got %s, want %s", tc.move, got, tc.fen)
		}
	}
}

// TestEnPassantKeptOnlyWhenLegal: the square is reported only when a legal
// capture onto it exists.
func TestEnPassantKeptOnlyWhenLegal(t *testing.T) {
	tests := []struct {
		fen  string
		want Square
	}{
		{"rnbqkbnr/ppp1pppp/8/3p4/8/8/PPPPPPPP/RNBQKBNR w KQkq d6 0 2", NoSquare}, // no white pawn beside d5
		{"rnbqkbnr/ppp1pppp/8/3pP3/8/8/PPPP1PPP/RNBQKBNR w KQkq d6 0 3", D6},      // e5 may take
		{"8/8/8/KPp4r/8/8/8/7k w - c6 0 2", NoSquare},                             // the only capture is pinned
		{"4k3/8/8/8/3pP3/8/8/4K3 b - e3 0 1", E3},                                 // d4 may take on e3
		{"4k3/8/8/8/3pP3/8/8/4KR2 b - e3 0 1", E3},                                // no pin: f1 rook is on f-file
		{"8/8/8/8/k2pP2Q/8/8/4K3 b - e3 0 1", NoSquare},                           // Qh4 pins along rank 4
		{"8/8/8/8/1k1pP3/8/8/4K1B1 b - e3 0 1", E3},                               // not a pin
	}
	for _, tc := range tests {
		p := mustFEN(t, tc.fen)
		if got := p.EnPassant(); got != tc.want {
			t.Errorf("%s: EnPassant() = %v, want %v", tc.fen, got, tc.want)
		}
	}
	// After 1.e4 from the start no black pawn can take: no square.
	p := StartPosition()
	m, _ := p.ParseMove("e4")
	c := p.Play(m)
	if c.EnPassant() != NoSquare || !strings.Contains(c.FEN(), " b KQkq - 0 1") {
		t.Errorf("after 1.e4: %s", c.FEN())
	}
}

// TestFENRejects lists positions that cannot arise, each with the reason
// the error must name.
func TestFENRejects(t *testing.T) {
	tests := []struct {
		fen    string
		target error
		reason string
	}{
		{"8/8/8/8/8/8/8/K7 w - - 0 1", ErrIllegalPosition, "black has 0 kings"},
		{"4k3/8/8/8/8/8/8/KK6 w - - 0 1", ErrIllegalPosition, "white has 2 kings"},
		{"4k3/8/8/8/8/8/4R3/4K3 w - - 0 1", ErrIllegalPosition, "black is in check"},
		{"4k3/8/8/8/8/8/4r3/4K3 b - - 0 1", ErrIllegalPosition, "white is in check"},
		{"P3k3/8/8/8/8/8/8/4K3 w - - 0 1", ErrIllegalPosition, "pawn on a8"},
		{"4k3/8/8/8/8/8/8/p3K3 w - - 0 1", ErrIllegalPosition, "pawn on a1"},
		{"4k3/8/8/8/8/8/8/4K3 w - e6 0 1", ErrIllegalPosition, "without a black pawn on e5"},
		{"4k3/8/8/4p3/8/8/8/4K3 w - e3 0 1", ErrIllegalPosition, "not on rank 6"},
		{"4k3/8/4n3/4p3/8/8/8/4K3 w - e6 0 1", ErrIllegalPosition, "e6 is occupied"},
		{"4k3/4n3/8/4p3/8/8/8/4K3 w - e6 0 1", ErrIllegalPosition, "origin e7 is occupied"},
		{"4k3/8/8/8/4P3/8/8/4K3 b - e3 0 1", nil, ""},
		{"4k3/8/8/8/8/8/8/4K3 w K - 0 1", ErrIllegalPosition, "without the white rook on h1"},
		{"4k3/8/8/8/8/8/8/3K3R w K - 0 1", ErrIllegalPosition, "without the white king on e1"},
		{"4k3/8/8/8/8/8/8/R3K3 w K - 0 1", ErrIllegalPosition, "without the white rook on h1"},
		{"1r2k3/8/8/8/8/8/8/4K3 w q - 0 1", ErrIllegalPosition, "without the black rook on a8"},
		{"4k3/pppppppp/p7/8/8/8/8/4K3 w - - 0 1", ErrIllegalPosition, "black has 9 pawns"},
		{"4k3/8/8/8/8/8/PPPPPPPP/QQ2K3 w - - 0 1", ErrIllegalPosition, "8 pawns and 1 promoted"},
		{"4k3/8/8/8/8/8/8/QQQQKQQQ w - - 0 1", nil, ""},
		{"4k3/8/8/8/QQQQQQQQ/8/8/QQQQK3 w - - 0 1", ErrIllegalPosition, "0 pawns and 11 promoted"},
		{"4k3/8/8/8/NNNNNNNN/8/N7/NNNNKNNN w - - 0 1", ErrIllegalPosition, "17 pieces, at most 16"},
		{"4k3/8/8/8/8/8/8/4K3 x - - 0 1", ErrBadFEN, "side to move"},
		{"4k3/8/8/8/8/8/8 w - - 0 1", ErrBadFEN, "7 ranks"},
		{"4k3/8/8/8/8/8/8/4K4 w - - 0 1", ErrBadFEN, "more than 8"},
		{"4k3/8/8/8/8/8/8/4K2 w - - 0 1", ErrBadFEN, "7 squares"},
		{"4k3/8/8/8/8/8/8/4X3 w - - 0 1", ErrBadFEN, "bad character"},
		{"4k3/8/8/8/8/8/8/4K3 w KK - 0 1", ErrBadFEN, "repeats"},
		{"4k3/8/8/8/8/8/8/4K3 w A - 0 1", ErrBadFEN, "castling"},
		{"4k3/8/8/8/8/8/8/4K3 w - e9 0 1", ErrBadFEN, "en-passant"},
		{"4k3/8/8/8/8/8/8/4K3 w - - -1 1", ErrBadFEN, "half-move"},
		{"4k3/8/8/8/8/8/8/4K3 w - - 0 x", ErrBadFEN, "move number"},
		{"4k3/8/8/8/8/8/8/4K3 w - - 0 1 extra", ErrBadFEN, "fields"},
		{"", ErrBadFEN, "empty"},
	}
	for _, tc := range tests {
		_, err := ParseFEN(tc.fen)
		if tc.target == nil {
			if err != nil {
				t.Errorf("ParseFEN(%q): %v, want success", tc.fen, err)
			}
			continue
		}
		if !errors.Is(err, tc.target) || !strings.Contains(err.Error(), tc.reason) {
			t.Errorf("ParseFEN(%q) = %v, want %v naming %q", tc.fen, err, tc.target, tc.reason)
		}
	}
}

// TestFENForgiving: missing trailing fields default and '_' stands for a
// space.
func TestFENForgiving(t *testing.T) {
	tests := []struct{ in, want string }{
		{"4k3/8/8/8/8/8/8/K7", "4k3/8/8/8/8/8/8/K7 w - - 0 1"},
		{"4k3/8/8/8/8/8/8/K7 w", "4k3/8/8/8/8/8/8/K7 w - - 0 1"},
		{"4k3/8/8/8/8/8/8/K7 b -", "4k3/8/8/8/8/8/8/K7 b - - 0 1"},
		{"4k3/8/8/8/8/8/8/K7_b_-_-_12_40", "4k3/8/8/8/8/8/8/K7 b - - 12 40"},
		{"4k3/8/8/8/8/8/8/K7 w - - 3", "4k3/8/8/8/8/8/8/K7 w - - 3 1"},
		{"4k3/8/8/8/8/8/8/K7 w - - 0 0", "4k3/8/8/8/8/8/8/K7 w - - 0 1"},
		{"  " + StartFEN + " ", StartFEN},
	}
	for _, tc := range tests {
		p, err := ParseFEN(tc.in)
		if err != nil {
			t.Errorf("ParseFEN(%q): %v", tc.in, err)
			continue
		}
		if got := p.FEN(); got != tc.want {
			t.Errorf("ParseFEN(%q).FEN() = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestFromBoard(t *testing.T) {
	var board [64]Piece
	board[E1] = MakePiece(White, King)
	board[H1] = MakePiece(White, Rook)
	board[E8] = MakePiece(Black, King)
	board[D7] = MakePiece(Black, Pawn)
	p, err := FromBoard(board, White, WhiteKingside, NoSquare, 3, 7)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.FEN(), "4k3/3p4/8/8/8/8/8/4K2R w K - 3 7"; got != want {
		t.Errorf("FEN %q, want %q", got, want)
	}
	board[H1] = NoPiece
	if _, err := FromBoard(board, White, WhiteKingside, NoSquare, 0, 1); !errors.Is(err, ErrIllegalPosition) {
		t.Errorf("castling without rook: %v", err)
	}
	board[H1] = Piece(7)
	if _, err := FromBoard(board, White, 0, NoSquare, 0, 1); !errors.Is(err, ErrBadFEN) {
		t.Errorf("bad piece code: %v", err)
	}
	board[H1] = NoPiece
	if _, err := FromBoard(board, White, 0, Square(70), 0, 1); !errors.Is(err, ErrBadFEN) {
		t.Errorf("bad ep square: %v", err)
	}
}

// TestMaterialKey: the key lists White's pieces then Black's in the order
// K Q R B N P, by definition.
func TestMaterialKey(t *testing.T) {
	tests := []struct{ fen, want string }{
		{"8/8/8/5k2/8/8/1Q6/K7 w - - 0 1", "KQvK"},
		{"8/8/8/5k2/8/8/1q6/K7 w - - 0 1", "KvKQ"},
		{StartFEN, "KQRRBBNNPPPPPPPPvKQRRBBNNPPPPPPPP"},
		{"8/8/3r4/5k2/8/3P4/1R6/K7 w - - 0 1", "KRPvKR"},
		{"8/8/8/6k1/8/8/1NB5/K7 w - - 0 1", "KBNvK"},
	}
	for _, tc := range tests {
		p := mustFEN(t, tc.fen)
		if got := p.MaterialKey(); got != tc.want {
			t.Errorf("%s: MaterialKey %q, want %q", tc.fen, got, tc.want)
		}
		m := p.Mirror()
		parts := strings.Split(tc.want, "v")
		if got, want := m.MaterialKey(), parts[1]+"v"+parts[0]; got != want {
			t.Errorf("mirror of %s: MaterialKey %q, want %q", tc.fen, got, want)
		}
	}
}

// TestMirrorPublished: the published perft table's pos4mirror row is the
// colour flip of pos4.
func TestMirrorPublished(t *testing.T) {
	p := mustFEN(t, "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1")
	m := p.Mirror()
	if got, want := m.FEN(), "r2q1rk1/pP1p2pp/Q4n2/bbp1p3/Np6/1B3NBn/pPPP1PPP/R3K2R b KQ - 0 1"; got != want {
		t.Errorf("Mirror = %s, want %s", got, want)
	}
	if mm := m.Mirror(); mm != p {
		t.Errorf("Mirror twice = %s, want %s", mm.FEN(), p.FEN())
	}
	e := mustFEN(t, "rnbqkbnr/ppp1pppp/8/3pP3/8/8/PPPP1PPP/RNBQKBNR w KQkq d6 0 3")
	em := e.Mirror()
	if got, want := em.FEN(), "rnbqkbnr/pppp1ppp/8/8/3Pp3/8/PPP1PPPP/RNBQKBNR b KQkq d3 0 3"; got != want {
		t.Errorf("Mirror = %s, want %s", got, want)
	}
}

func TestInsufficientMaterial(t *testing.T) {
	tests := []struct {
		fen  string
		want bool
	}{
		{"k7/8/8/8/8/8/8/7K w - - 0 1", true},
		{"k7/8/8/8/8/8/1N6/7K w - - 0 1", true},
		{"k7/8/8/8/8/8/1B6/7K w - - 0 1", true},
		{"k7/8/8/8/8/8/1B6/1B5K w - - 0 1", false}, // b2 dark, b1 light
		{"k7/8/8/7b/8/8/1B6/7K w - - 0 1", false},  // h5 light, b2 dark
		{"k7/8/8/6b1/8/8/1B6/7K w - - 0 1", true},  // g5 dark, b2 dark
		{"k7/8/8/8/8/8/1NN5/7K w - - 0 1", false},
		{"k7/8/8/8/8/8/1P6/7K w - - 0 1", false},
		{"k7/8/8/8/8/8/1R6/7K w - - 0 1", false},
	}
	for _, tc := range tests {
		p := mustFEN(t, tc.fen)
		if got := p.InsufficientMaterial(); got != tc.want {
			t.Errorf("%s: InsufficientMaterial %v, want %v", tc.fen, got, tc.want)
		}
	}
}

// TestSAN checks SAN spelling against the notation rules.
func TestSAN(t *testing.T) {
	tests := []struct{ fen, uci, san string }{
		{StartFEN, "g1f3", "Nf3"},
		{StartFEN, "e2e4", "e4"},
		{"rnbqkbnr/ppp1pppp/8/3pP3/8/8/PPPP1PPP/RNBQKBNR w KQkq d6 0 3", "e5d6", "exd6"},
		{"k7/4P3/8/8/8/8/8/4K3 w - - 0 1", "e7e8q", "e8=Q+"},
		{"k7/4P3/8/8/8/8/8/4K3 w - - 0 1", "e7e8n", "e8=N"},
		{"r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "e1g1", "O-O"},
		{"r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "e1c1", "O-O-O"},
		{"r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "a1a8", "Rxa8+"},
		{"7k/8/6K1/8/8/8/8/R7 w - - 0 1", "a1a8", "Ra8#"},
		{"4k3/8/8/8/8/5N2/8/1N2K3 w - - 0 1", "b1d2", "Nbd2"},
		{"4k3/8/8/8/8/5N2/8/1N2K3 w - - 0 1", "f3e5", "Ne5"},
		{"4k3/8/8/1N6/8/1N6/8/4K3 w - - 0 1", "b3d4", "N3d4"},
		{"4k3/8/8/1N3N2/8/1N6/8/4K3 w - - 0 1", "b3d4", "N3d4"},
		{"4k3/8/8/1N6/8/1N3N2/8/4K3 w - - 0 1", "b3d4", "Nb3d4"},
	}
	for _, tc := range tests {
		p := mustFEN(t, tc.fen)
		m, err := p.ParseMove(tc.uci)
		if err != nil {
			t.Errorf("%s: ParseMove(%q): %v", tc.fen, tc.uci, err)
			continue
		}
		if got := p.SAN(m); got != tc.san {
			t.Errorf("%s: SAN(%s) = %q, want %q", tc.fen, tc.uci, got, tc.san)
		}
		back, err := p.ParseMove(tc.san)
		if err != nil || back != m {
			t.Errorf("%s: ParseMove(%q) = %v, %v; want %v", tc.fen, tc.san, back, err, m)
		}
	}
	p := StartPosition()
	for _, bad := range []string{"e5", "Nf4", "e2e5", "O-O", "", "zz", "e7e8q"} {
		if _, err := p.ParseMove(bad); !errors.Is(err, ErrIllegalMove) {
			t.Errorf("ParseMove(%q) = %v, want ErrIllegalMove", bad, err)
		}
	}
	for _, tc := range []struct{ fen, in, uci string }{
		{StartFEN, "Ng1f3", "g1f3"},
		{StartFEN, "Nf3!?", "g1f3"},
		{StartFEN, " e2e4 ", "e2e4"},
		{"k7/4P3/8/8/8/8/8/4K3 w - - 0 1", "e8q", "e7e8q"},
		{"k7/4P3/8/8/8/8/8/4K3 w - - 0 1", "e8N", "e7e8n"},
		{"k7/4P3/8/8/8/8/8/4K3 w - - 0 1", "E7E8R", "e7e8r"},
		{"r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "0-0-0", "e1c1"},
	} {
		p := mustFEN(t, tc.fen)
		if m, err := p.ParseMove(tc.in); err != nil || m.UCI() != tc.uci {
			t.Errorf("%s: ParseMove(%q) = %v, %v; want %s", tc.fen, tc.in, m, err, tc.uci)
		}
	}
}

// TestZeroPosition: the zero Position is not a valid position, but asking
// it questions must not panic.
func TestZeroPosition(t *testing.T) {
	var p Position
	if n := len(p.LegalMoves(nil)); n != 0 || p.CountLegalMoves() != 0 {
		t.Errorf("zero position has %d moves", n)
	}
	if len(p.Unmoves(nil)) != 0 || p.InCheck() {
		t.Error("zero position has unmoves or is in check")
	}
	_ = p.FEN()
	_ = p.MaterialKey()
	_ = p.Mirror()
	_ = p.IsCheckmate()
	_ = p.IsStalemate()
	_ = p.InsufficientMaterial()
	if _, err := p.ParseMove("e2e4"); !errors.Is(err, ErrIllegalMove) {
		t.Errorf("ParseMove on the zero position: %v", err)
	}
}
