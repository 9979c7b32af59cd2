// Package chesstboracle parses the reference prober's oracle TSVs
// (probe.tsv, seed_cases.tsv, children.tsv and files of the same shape) into
// typed expected values, signed from the side to move as the library reports
// them. The reference prints distances unsigned next to a class name; the
// class gives the sign here. It is used only by tests: the rows are the
// arbiter, so a malformed row is an error, never a guess.
package chesstboracle

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/chess"
)

// Row is one line of an oracle file, its fields as the reference printed
// them. A metric field is empty when the reference printed nothing for it.
type Row struct {
	Where                     string // "file:line", for test messages
	Line                      int    // 1-based line number in the file (the header is line 1)
	FEN                       string // the position probed (the parent in children.tsv)
	Move                      string // UCI move, set only for children.tsv rows
	WDL, DTZ, DTC, DTM, DTM50 string
	Forms                     string // comma list of table folders that reproduce the row
}

// Parse reads an oracle file's text: a header line, then tab-separated rows
// of seven columns (fen wdl dtz dtc dtm dtm50 forms), or eight with the move
// after the fen when children is set. name prefixes each row's Where.
func Parse(r io.Reader, name string, children bool) ([]Row, error) {
	want := 7
	if children {
		want = 8
	}
	var rows []Row
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		if n == 1 {
			continue // header
		}
		c := strings.Split(sc.Text(), "\t")
		row := Row{Where: name + ":" + strconv.Itoa(n), Line: n}
		if len(c) != want {
			return nil, fmt.Errorf("%s: %d columns, want %d", row.Where, len(c), want)
		}
		row.FEN, c = c[0], c[1:]
		if children {
			row.Move, c = c[0], c[1:]
		}
		row.WDL, row.DTZ, row.DTC, row.DTM, row.DTM50, row.Forms = c[0], c[1], c[2], c[3], c[4], c[5]
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return rows, nil
}

// ReadFile parses the oracle file at path; a name ending in children.tsv
// is read with the move column.
func ReadFile(path string) ([]Row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Parse(f, filepath.Base(path), strings.HasSuffix(path, "children.tsv"))
}

// Read is ReadFile failing the test on any error.
func Read(tb testing.TB, path string) []Row {
	tb.Helper()
	rows, err := ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return rows
}

// HasForm reports whether the table folder form reproduces the row.
func (r Row) HasForm(form string) bool {
	for f := range strings.SplitSeq(r.Forms, ",") {
		if f == form {
			return true
		}
	}
	return false
}

// wdlByClass maps the reference's WDL class names to the library's -2..2.
var wdlByClass = map[string]int{"WIN": 2, "CURSED_WIN": 1, "DRAW": 0, "BLESSED_LOSS": -1, "LOSE": -2}

// Class returns the row's WDL class as -2..2.
func (r Row) Class() (int, error) {
	wdl, ok := wdlByClass[r.WDL]
	if !ok {
		return 0, fmt.Errorf("%s: class %q", r.Where, r.WDL)
	}
	return wdl, nil
}

// Distances returns the row's WDL class and its DTZ and DTM signed by that
// class (negative for a losing side to move), nil where the reference
// printed nothing.
func (r Row) Distances() (wdl int, dtz, dtm *int, err error) {
	wdl, err = r.Class()
	if err != nil {
		return 0, nil, nil, err
	}
	sign := 1
	if wdl < 0 {
		sign = -1
	}
	num := func(s string) (*int, error) {
		if s == "" {
			return nil, nil
		}
		v, err := strconv.Atoi(s)
		if err != nil {
			return nil, fmt.Errorf("%s: number %q", r.Where, s)
		}
		v *= sign
		return &v, nil
	}
	if dtz, err = num(r.DTZ); err != nil {
		return 0, nil, nil, err
	}
	if dtm, err = num(r.DTM); err != nil {
		return 0, nil, nil, err
	}
	return wdl, dtz, dtm, nil
}

// Want is Distances failing the test on a malformed row.
func (r Row) Want(tb testing.TB) (wdl int, dtz, dtm *int) {
	tb.Helper()
	wdl, dtz, dtm, err := r.Distances()
	if err != nil {
		tb.Fatal(err)
	}
	return wdl, dtz, dtm
}

// classSign maps the clock-aware classes of the dtc and dtm50 columns to
// the sign of their distance.
var classSign = map[string]int{"WIN": 1, "LOSE": -1, "DRAW": 0}

// ClockDistances returns the row's DTC ("CLASS/order/value") as pushes and
// signed plies, and its DTM50 ("CLASS/value") signed, nil where the
// reference printed nothing. The class gives the sign: WIN +, LOSE -,
// DRAW 0.
func (r Row) ClockDistances() (dtc *[2]int, dtm50 *int, err error) {
	if r.DTC != "" {
		f := strings.Split(r.DTC, "/")
		sign, ok := classSign[f[0]]
		if len(f) != 3 || !ok {
			return nil, nil, fmt.Errorf("%s: dtc %q", r.Where, r.DTC)
		}
		pushes, err1 := strconv.Atoi(f[1])
		plies, err2 := strconv.Atoi(f[2])
		if err1 != nil || err2 != nil {
			return nil, nil, fmt.Errorf("%s: dtc %q", r.Where, r.DTC)
		}
		dtc = &[2]int{pushes, sign * plies}
	}
	if r.DTM50 != "" {
		f := strings.Split(r.DTM50, "/")
		sign, ok := classSign[f[0]]
		if len(f) != 2 || !ok {
			return nil, nil, fmt.Errorf("%s: dtm50 %q", r.Where, r.DTM50)
		}
		v, err := strconv.Atoi(f[1])
		if err != nil {
			return nil, nil, fmt.Errorf("%s: dtm50 %q", r.Where, r.DTM50)
		}
		v *= sign
		dtm50 = &v
	}
	return dtc, dtm50, nil
}

// WantDTC is ClockDistances failing the test on a malformed row.
func (r Row) WantDTC(tb testing.TB) (dtc *[2]int, dtm50 *int) {
	tb.Helper()
	dtc, dtm50, err := r.ClockDistances()
	if err != nil {
		tb.Fatal(err)
	}
	return dtc, dtm50
}

// DTM50Class returns the row's DTM50 column split into its class ("WIN",
// "LOSE" or "DRAW") and unsigned plies. A caller that must tell a
// checkmated side to move (LOSE/0) from a draw (DRAW/0) needs this: the
// signed form of WantDTC reads both as 0. ok is false where the reference
// printed nothing.
func (r Row) DTM50Class() (class string, plies int, ok bool, err error) {
	if r.DTM50 == "" {
		return "", 0, false, nil
	}
	class, val, found := strings.Cut(r.DTM50, "/")
	_, known := classSign[class]
	plies, err = strconv.Atoi(val)
	if !found || !known || err != nil || plies < 0 {
		return "", 0, false, fmt.Errorf("%s: dtm50 %q", r.Where, r.DTM50)
	}
	return class, plies, true, nil
}

// Clocks returns the half-move clock of the row's position and of the
// position before it: for a probe.tsv row the FEN's clock and one less
// (lila-tablebase's convention for a root), for a children.tsv row the
// clock the move leaves (0 after a capture or pawn move, one more
// otherwise, as the reference threads it) and the parent's clock.
func (r Row) Clocks() (clock, before int, err error) {
	pos, err := chess.ParseFEN(r.FEN)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", r.Where, err)
	}
	if r.Move == "" {
		return pos.HalfmoveClock(), pos.HalfmoveClock() - 1, nil
	}
	m, err := pos.ParseMove(r.Move)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", r.Where, err)
	}
	clock = pos.HalfmoveClock() + 1
	if pos.IsZeroing(m) {
		clock = 0
	}
	return clock, pos.HalfmoveClock(), nil
}

// LichessCategory is the category lila-tablebase gives the row's position
// (for a children.tsv row, the position after the move), built from the
// reference's values: the WDL class says who wins ignoring the clock; the
// clocked verdict (the DTC column's class where printed, else DTM50's,
// else the zeroing distance against the clock, the 50-move rule itself)
// says whether that result still stands at the clock. A result the clock
// draws is "cursed-win" or "blessed-loss"; a side already checkmated has
// lost (its DTM50 is LOSE/0 at any clock); and when the position before
// had a clock of 100 or more, lila reports every decisive result as
// cursed or blessed (its response.rs), since the draw could be claimed.
func (r Row) LichessCategory() (string, error) { return r.category(true) }

// RuleCategory is LichessCategory without lila's claimed-draw rule: the
// position's own result under the 50-move rule at its clock, which is a
// move's rule-true result (negated) when the row is a child.
func (r Row) RuleCategory() (string, error) { return r.category(false) }

func (r Row) category(claimed bool) (string, error) {
	wdl, err := r.Class()
	if err != nil {
		return "", err
	}
	clock, before, err := r.Clocks()
	if err != nil {
		return "", err
	}
	if wdl == 0 {
		return "draw", nil
	}
	verdict := ""
	switch {
	case r.DTC != "":
		verdict, _, _ = strings.Cut(r.DTC, "/")
	case r.DTM50 != "":
		verdict, _, _ = strings.Cut(r.DTM50, "/")
	default:
		dtz, err := strconv.Atoi(r.DTZ)
		if err != nil {
			return "", fmt.Errorf("%s: no dtc, dtm50 or dtz to price the clock", r.Where)
		}
		if (wdl == 2 || wdl == -2) && dtz+clock <= 100 {
			verdict = "WIN"
		}
	}
	stands := (verdict == "WIN" || verdict == "LOSE") && (before < 100 || !claimed)
	switch {
	case wdl > 0 && stands:
		return "win", nil
	case wdl > 0:
		return "cursed-win", nil
	case stands:
		return "loss", nil
	}
	return "blessed-loss", nil
}

// WantCategory is LichessCategory failing the test on a malformed row.
func (r Row) WantCategory(tb testing.TB) string {
	tb.Helper()
	c, err := r.LichessCategory()
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// WantRuleCategory is RuleCategory failing the test on a malformed row.
func (r Row) WantRuleCategory(tb testing.TB) string {
	tb.Helper()
	c, err := r.RuleCategory()
	if err != nil {
		tb.Fatal(err)
	}
	return c
}
