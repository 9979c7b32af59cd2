package geister_test

import (
	"errors"
	"testing"

	"github.com/tbfs/tbfs/geister"
)

// refStart is the first player's board at the standard start with pieces
// A..D red, the example board of the reference server's
// Board.getEncodedBoard (miyo/geister_server.java).
const refStart = "14R24R34R44R15B25B35B45B41u31u21u11u40u30u20u10u"

// TestParseGATBoard checks the one GAT board parser in both syntaxes. The
// arbiters: the rules of Geister (a player knows its own pieces' colours,
// a capture shows the captured piece's colour and only a blue escapes, no
// square holds two pieces), the reference server's encoding of a board
// (Board.getEncodedItem: B/R for a piece only its owner knows, b/r once
// both know it, u for an opponent piece of unknown colour, 99 captured, 88
// escaped), and the readers of the table tools (the reference client's
// ItemColor.decode and Unweaver's parse_board48 read colour letters in
// either case).
func TestParseGATBoard(t *testing.T) {
	const (
		ok      = "ok"
		bad     = "notation"
		twoOnSq = "two on a square"
	)
	tests := []struct {
		name        string
		board       string
		wire, table string // ok, or the error expected in that syntax
		arbiter     string
	}{
		{"standard start", refStart, ok, ok, "Board.getEncodedBoard's example"},
		{"end of game, every colour shown", "88b99b99b99b44R99r99r99r31b99b99b99b33r99r99r99r", ok, ok,
			"getEncodedItem with globalView: an escaped own piece 88b, opponents b/r"},
		{"upper-case unknown", "14R24R34R44R15B25B35B45B41U31u21u11u40u30u20u10u", bad, ok,
			"getEncodedItem writes u; ItemColor.decode and parse_board48 ignore case"},
		{"upper-case captured colour", "14R24R34R44R15B25B35B99B41u31u21u11u40u30u20u99R", ok, ok,
			"B, R, b, r are all colour letters of the notation"},
		{"letter that is no colour", "14X24R34R44R15B25B35B45B41u31u21u11u40u30u20u10u", bad, bad,
			"getEncodedItem writes only B, R, b, r, u"},
		{"own piece of unknown colour", "14u24R34R44R15B25B35B45B41u31u21u11u40u30u20u10u", bad, bad,
			"rules: a player knows its own pieces"},
		{"captured piece of unknown colour", "14R24R34R44R15B25B35B45B41u31u21u11u40u30u20u99u", bad, bad,
			"rules: a capture shows the piece's colour; getEncodedItem writes a taken piece's colour"},
		{"escaped piece of unknown colour", "14R24R34R44R15B25B35B45B41u31u21u11u40u30u20u88u", bad, bad,
			"rules: only a blue escapes, so the escape shows its colour"},
		{"two own pieces on a square", "24R24R34R44R15B25B35B45B41u31u21u11u40u30u20u10u", twoOnSq, twoOnSq,
			"rules: no step onto an own piece"},
		{"own and opponent on a square", "41R24R34R44R15B25B35B45B41u31u21u11u40u30u20u10u", twoOnSq, twoOnSq,
			"rules: a step onto an opponent captures it"},
		{"half captured", "19R24R34R44R15B25B35B45B41u31u21u11u40u30u20u10u", bad, bad,
			"getEncodedItem: off the board is 99 or 88"},
		{"column 6", "64R24R34R44R15B25B35B45B41u31u21u11u40u30u20u10u", bad, bad, "a 6x6 board"},
		{"short", refStart[:45], bad, bad, "16 pieces of 3 characters"},
	}
	check := func(t *testing.T, syntax string, want string, err error) {
		t.Helper()
		switch want {
		case ok:
			if err != nil {
				t.Errorf("%s: %v", syntax, err)
			}
		case bad:
			if !errors.Is(err, geister.ErrNotation) {
				t.Errorf("%s: %v, want ErrNotation", syntax, err)
			}
		case twoOnSq:
			if !errors.Is(err, geister.ErrInvalidPosition) {
				t.Errorf("%s: %v, want ErrInvalidPosition", syntax, err)
			}
		}
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, err := geister.ParseGATBoard(tc.board, geister.GATWire)
			check(t, "wire", tc.wire, err)
			if err == nil && w.String() != tc.board {
				t.Errorf("wire round trip %q (%s)", w.String(), tc.arbiter)
			}
			_, err = geister.ParseGATBoard(tc.board, geister.GATTable)
			check(t, "table", tc.table, err)
			if t.Failed() {
				t.Logf("arbiter: %s", tc.arbiter)
			}
		})
	}
}

// TestGATBoardPieces checks what the standard start's board says of its
// pieces, in the orientation the reference server sends it (own pieces on
// rows 4 and 5, the opponent's turned by 180 degrees: its H at its own
// (4,5) is at (1,0)), and that an unknown colour read in upper case is the
// same observation as in lower case.
func TestGATBoardPieces(t *testing.T) {
	b, err := geister.ParseGATBoard(refStart, geister.GATWire)
	if err != nil {
		t.Fatal(err)
	}
	if a := b[0]; a.X != 1 || a.Y != 4 || !a.Red() || a.Blue() || !a.OnBoard() {
		t.Errorf("A = %+v, want red on (1,4)", a)
	}
	if h := b[15]; h.X != 1 || h.Y != 0 || h.Colour != 'u' || h.Red() || h.Blue() {
		t.Errorf("h = %+v, want unknown on (1,0)", h)
	}
	if s := b[15].Square(); s != geister.SquareAt(1, 0) {
		t.Errorf("h's square %v, want B1", s)
	}
	lower, err := geister.ParseGATObservation(refStart)
	if err != nil {
		t.Fatal(err)
	}
	upper, err := geister.ParseGATObservation("14R24R34R44R15B25B35B45B41U31U21U11U40U30U20U10U")
	if err != nil || upper != lower {
		t.Errorf("upper-case u: %+v, %v; lower case gives %+v", upper, err, lower)
	}
	if lower.OppRed != 4 {
		t.Errorf("no red captured, so 4 opponent reds; got %d", lower.OppRed)
	}
}

// TestGATBoardEndOfGame: a board with an escaped piece is a legal board
// (the reference's WON:/LST: boards carry one) but no position or
// observation, since the escape ended the game.
func TestGATBoardEndOfGame(t *testing.T) {
	b, err := geister.ParseGATBoard("88b99b99b99b44R99r99r99r31b99b99b99b33r99r99r99r", geister.GATWire)
	if err != nil {
		t.Fatal(err)
	}
	if !b[0].IsEscaped() || !b[1].IsCaptured() {
		t.Errorf("A %+v, B %+v: want escaped and captured", b[0], b[1])
	}
	if _, err := b.Position(); !errors.Is(err, geister.ErrNotation) {
		t.Errorf("Position: %v, want ErrNotation", err)
	}
	if _, err := b.Observation(); !errors.Is(err, geister.ErrNotation) {
		t.Errorf("Observation: %v, want ErrNotation", err)
	}
}
