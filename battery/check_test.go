package battery_test

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/battery"
	"github.com/tbfs/tbfs/chess"
)

// shippedFile returns the shipped rows as their file's text.
func shippedFile(t *testing.T) (string, []battery.Row) {
	t.Helper()
	rows, err := battery.Shipped()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := battery.WriteRows(&b, rows); err != nil {
		t.Fatal(err)
	}
	return b.String(), rows
}

// checkFile parses a row file and runs the checker over it; a file that
// does not parse fails the check as well.
func checkFile(t *testing.T, text string, tb battery.Prober) error {
	t.Helper()
	rows, err := battery.ParseRows(strings.NewReader(text), "copy")
	if err != nil {
		return err
	}
	q, err := battery.ShippedQuotas()
	if err != nil {
		t.Fatal(err)
	}
	return battery.Check(context.Background(), rows, tb, q.Groups())
}

// TestShippedRowsCheck runs the checker over the shipped rows: every
// expected property is what the row's arbiter computes. Without the
// shared tables (never under CI) the tables rows are left out; under the
// race detector or -short every fourth row is checked, less the mates in 4.
func TestShippedRowsCheck(t *testing.T) {
	text, rows := shippedFile(t)
	if raceEnabled || testing.Short() {
		lines := strings.Split(strings.TrimSpace(text), "\n")
		kept := lines[:1]
		for i := 1; i < len(lines); i += 4 {
			// The deepest proofs take seconds without the detector.
			if !strings.Contains(lines[i], "\tprover:4\t") {
				kept = append(kept, lines[i])
			}
		}
		text = strings.Join(kept, "\n")
	}
	tb := sharedTables(t)
	if tb == nil {
		var kept []string
		for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
			if !strings.Contains(line, "\ttables\t") {
				kept = append(kept, line)
			}
		}
		t.Logf("no shared tables: checking %d of %d rows", len(kept)-1, len(rows))
		text = strings.Join(kept, "\n")
		if err := checkFile(t, text, nil); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err := checkFile(t, text, tb); err != nil {
		t.Fatal(err)
	}
	if n := len(rows); n < 100 {
		t.Errorf("%d shipped rows, want about 100 or more", n)
	}
}

// TestCorruptedCopiesFail edits one shipped row per kind of corruption; the
// checker (with the parser it reads through) must reject every copy. Each
// copy is cut down to the rows the edit touches (and the rows in keep),
// and the same rows uncorrupted must pass, so each rejection is the
// edit's.
func TestCorruptedCopiesFail(t *testing.T) {
	text, rows := shippedFile(t)
	tb := sharedTables(t)
	byID := map[string]battery.Row{}
	for _, r := range rows {
		byID[r.ID] = r
	}
	// field replaces field i (0-based) of row id's line.
	field := func(id string, i int, f func(string) string) func(string) string {
		return func(text string) string {
			line := byID[id].Line()
			parts := strings.Split(line, "\t")
			parts[i] = f(parts[i])
			return strings.Replace(text, line, strings.Join(parts, "\t"), 1)
		}
	}
	const idF, groupF, arbF, fenF, propF = 0, 2, 3, 4, 5
	// only keeps the header, the lines of bad that text lacks, and the
	// rows named in keep.
	only := func(bad, text string, keep ...string) (cut, control string) {
		orig := strings.Split(strings.TrimSpace(text), "\n")
		have := map[string]bool{}
		for _, l := range orig {
			have[l] = true
		}
		out, ctl := []string{orig[0]}, []string{orig[0]}
		for _, l := range strings.Split(strings.TrimSpace(bad), "\n")[1:] {
			if !have[l] {
				out = append(out, l)
			}
		}
		for _, id := range keep {
			out = append(out, byID[id].Line())
		}
		for _, l := range orig[1:] {
			id, _, _ := strings.Cut(l, "\t")
			if slices.Contains(keep, id) || !strings.Contains(bad, l) {
				ctl = append(ctl, l)
			}
		}
		return strings.Join(out, "\n") + "\n", strings.Join(slices.Compact(ctl), "\n") + "\n"
	}
	for _, tc := range []struct {
		name   string
		tables bool
		edit   func(string) string
		keep   []string
	}{
		{"wrong mate distance", false, field("must-mated-in-3", propF, func(s string) string { return strings.Replace(s, "mate -3", "mate -4", 1) }), nil},
		{"illegal move in a set", false, field("game-opera-b1", propF, func(s string) string { return strings.Replace(s, "d1d8", "d1d9", 1) }), nil},
		{"legal but not mating move added", false, field("game-opera-b1", propF, func(s string) string { return strings.Replace(s, "d1d8", "d1d2,d1d8", 1) }), nil},
		{"mating move dropped", false, field("game-lasker-thomas-b1", propF, func(s string) string { return strings.Replace(s, "e1c1,", "", 1) }), nil},
		{"edited position of a game", false, field("game-opera-b1", fenF, func(s string) string { return strings.Replace(s, " 0 17", " 0 18", 1) }), nil},
		{"prover bound too small", false, field("game-immortal-b5", arbF, func(s string) string { return "prover:2" }), nil},
		{"flipped side to move", false, field("rules-stalemate", fenF, func(s string) string { return strings.Replace(s, " b ", " w ", 1) }), nil},
		{"single move changed", false, field("rules-ep-evasion-1", propF, func(s string) string { return "best-in a4a3" }), nil},
		{"unknown group", false, field("rules-dead-kbk", groupF, func(string) string { return "rulez" }), nil},
		{"duplicate id", false, field("rules-dead-knk", idF, func(string) string { return "rules-dead-kbk" }), []string{"rules-dead-kbk"}},
		{"changed half-move clock", true, field("must-krk-clock-88", fenF, func(s string) string { return strings.Replace(s, " 88 1", " 40 1", 1) }), nil},
		{"losing move added to a tables set", true, field("tables-win-01", propF, func(s string) string {
			pos, _ := chess.ParseFEN(byID["tables-win-01"].FEN)
			set := byID["tables-win-01"].Props[0].Moves
			for _, m := range pos.LegalMoves(nil) {
				if !slices.Contains(set, m.UCI()) {
					set = append(slices.Clone(set), m.UCI())
					slices.Sort(set)
					return "best-in " + strings.Join(set, ",")
				}
			}
			return s
		}), nil},
		{"no-mate turned into a mate claim", true, field("tables-nomate-01", propF, func(string) string { return "mate 5" }), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.tables && tb == nil {
				t.Skip("needs the shared tables")
			}
			bad := tc.edit(text)
			if bad == text {
				t.Fatal("the edit changed nothing")
			}
			var prober battery.Prober
			if tb != nil {
				prober = tb
			}
			cut, control := only(bad, text, tc.keep...)
			if err := checkFile(t, control, prober); err != nil {
				t.Fatalf("the uncorrupted rows fail: %v", err)
			}
			err := checkFile(t, cut, prober)
			if err == nil {
				t.Fatal("the checker accepted the corrupted copy")
			}
			t.Log(err)
		})
	}
}

// TestMustHoldRows: the two cases every battery must hold (a side mated in
// 3 whatever it plays, not 4; a mate the 50-move rule leaves no time for)
// are shipped as P rows with exactly those properties.
func TestMustHoldRows(t *testing.T) {
	_, rows := shippedFile(t)
	want := map[string]string{
		"8/N5k1/3Q4/7p/3R4/8/2P2K1P/8 b - - 0 38": "mate -3", // mated in 3 whatever Black plays, not 4
		"2k5/8/3R2K1/8/8/8/8/8 w - - 88 1":        "no-mate", // the 50-move rule draws it
	}
	for _, r := range rows {
		if p, ok := want[r.FEN]; ok {
			if r.Tier != battery.Mandatory || r.Properties() != p {
				t.Errorf("%s: tier %s, properties %q; want P, %q", r.ID, r.Tier, r.Properties(), p)
			}
			delete(want, r.FEN)
		}
	}
	for fen := range want {
		t.Errorf("no row for %s", fen)
	}
}

// TestEnPassantEvasionRows: the rules leave the en-passant capture as the
// only legal move, and it lands off every line to the king.
func TestEnPassantEvasionRows(t *testing.T) {
	_, rows := shippedFile(t)
	n := 0
	for _, r := range rows {
		if !strings.HasPrefix(r.ID, "rules-ep-evasion") {
			continue
		}
		n++
		pos, _ := chess.ParseFEN(r.FEN)
		legal := pos.LegalMoves(nil)
		if len(legal) != 1 || !legal[0].IsEnPassant() || !pos.InCheck() {
			t.Errorf("%s: legal %v, in check %v; want only an en-passant capture out of check", r.ID, legal, pos.InCheck())
		}
	}
	if n < 1 {
		t.Error("no en-passant evasion row")
	}
}

func TestParseRowsRejects(t *testing.T) {
	good := "2k5/8/3R2K1/8/8/8/8/8 w - - 88 1"
	for _, tc := range []struct{ name, text string }{
		{"no header", "x\tP\trules\trules\t" + good + "\tno-mate\tfen\n"},
		{"six fields", battery.Header + "\nx\tP\trules\trules\t" + good + "\tno-mate\n"},
		{"bad tier", battery.Header + "\nx\tR\trules\trules\t" + good + "\tno-mate\tfen\n"},
		{"bad arbiter", battery.Header + "\nx\tP\trules\toracle\t" + good + "\tno-mate\tfen\n"},
		{"bad fen", battery.Header + "\nx\tP\trules\trules\t8/8/8 w - - 0 1\tno-mate\tfen\n"},
		{"non-canonical fen", battery.Header + "\nx\tP\trules\trules\t2k5/8/3R2K1/8/8/8/8/8 w - -  88 1\tno-mate\tfen\n"},
		{"unknown property", battery.Header + "\nx\tP\trules\trules\t" + good + "\tdraw\tfen\n"},
		{"unsorted set", battery.Header + "\nx\tP\trules\trules\t" + good + "\tbest-in d6d7,d6d1\tfen\n"},
		{"mate without number", battery.Header + "\nx\tP\trules\trules\t" + good + "\tmate x\tfen\n"},
	} {
		if _, err := battery.ParseRows(strings.NewReader(tc.text), "t"); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
}

func TestQuotas(t *testing.T) {
	q, err := battery.ShippedQuotas()
	if err != nil {
		t.Fatal(err)
	}
	_, rows := shippedFile(t)
	for _, r := range rows {
		if _, ok := q.Rate[r.Group]; !ok {
			t.Errorf("%s: group %s has no quota", r.ID, r.Group)
		}
	}
	for _, tc := range []struct {
		name, text string
		ok         bool
	}{
		{"raise", "1\ta\t0.5\tx\n1\tb\t0.5\tx\n2\ta\t0.6\ty\n2\tb\t0.5\ty\n", true},
		{"lower", "1\ta\t0.5\tx\n2\ta\t0.4\ty\n", false},
		{"drop a group", "1\ta\t0.5\tx\n1\tb\t0.5\tx\n2\ta\t0.6\ty\n", false},
		{"skip a version", "1\ta\t0.5\tx\n3\ta\t0.6\ty\n", false},
		{"rate above 1", "1\ta\t1.5\tx\n", false},
		{"empty", "# nothing\n", false},
	} {
		got, err := battery.ParseQuotas(strings.NewReader(tc.text), "q")
		if (err == nil) != tc.ok {
			t.Errorf("%s: error %v, want ok %v", tc.name, err, tc.ok)
		}
		if tc.ok && (got.Version != 2 || got.Rate["a"] != 0.6) {
			t.Errorf("%s: version %d, rates %v", tc.name, got.Version, got.Rate)
		}
	}
}
