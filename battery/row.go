// Package battery is a referee battery for chess engines: rows of positions
// whose expected answers are properties ("the best move is one of these",
// "mate in 3", "never a mate score") computed only by arbiters — the rules
// (move generation), the endgame tables, and the exhaustive mate prover —
// never by an engine. A runner plays every row against a UCI engine at
// fixed node budgets, twice, and a separate checker recomputes every
// expected property of a finished row file from its arbiter.
package battery

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/tbfs/tbfs/chess"
)

// Tier says how a row counts.
type Tier string

// The tiers.
const (
	// Mandatory rows must pass in every repetition at every budget.
	Mandatory Tier = "P"
	// Quota rows count towards their group's pass rate, which must meet
	// the group's quota.
	Quota Tier = "Q"
)

// Arbiter names what computes a row's expected properties.
type Arbiter struct {
	// Kind is "rules", "tables" or "prover".
	Kind string
	// Bound is the prover's bound in moves (only for "prover").
	Bound int
}

// String prints the arbiter as the row file writes it ("prover:3").
func (a Arbiter) String() string {
	if a.Kind == "prover" {
		return "prover:" + strconv.Itoa(a.Bound)
	}
	return a.Kind
}

// ParseArbiter reads an arbiter field.
func ParseArbiter(s string) (Arbiter, error) {
	switch {
	case s == "rules" || s == "tables":
		return Arbiter{Kind: s}, nil
	case strings.HasPrefix(s, "prover:"):
		n, err := strconv.Atoi(s[len("prover:"):])
		if err != nil || n < 1 || n > 20 {
			return Arbiter{}, fmt.Errorf("arbiter %q: prover bound must be 1..20", s)
		}
		return Arbiter{Kind: "prover", Bound: n}, nil
	}
	return Arbiter{}, fmt.Errorf("arbiter %q: want rules, tables or prover:N", s)
}

// Property is one expected fact about an engine's answer.
type Property struct {
	// Kind is one of:
	//	best-in  the best move is one of Moves
	//	mate     the final score is mate Mate (negative: the side to move is mated)
	//	no-mate  no score reported is a mate score
	//	no-move  the engine answers that there is no move ("(none)" or "0000")
	Kind  string
	Moves []string // best-in, sorted
	Mate  int      // mate
}

// String prints the property as the row file writes it.
func (p Property) String() string {
	switch p.Kind {
	case "best-in":
		return "best-in " + strings.Join(p.Moves, ",")
	case "mate":
		return "mate " + strconv.Itoa(p.Mate)
	}
	return p.Kind
}

// Row is one test of the battery.
type Row struct {
	ID      string
	Tier    Tier
	Group   string
	Arbiter Arbiter
	FEN     string
	Props   []Property
	// Source says where the position comes from: "fen" for a typed
	// position, or a game's name and the SAN moves played from the start
	// position to reach it ("opera: e4 e5 Nf3 ...").
	Source string
	// Where is "file:line", for messages.
	Where string
}

// Properties prints the row's properties as the row file writes them.
func (r Row) Properties() string {
	s := make([]string, len(r.Props))
	for i, p := range r.Props {
		s[i] = p.String()
	}
	return strings.Join(s, "; ")
}

// Header is the first line of a row file.
const Header = "id\ttier\tgroup\tarbiter\tfen\tproperties\tsource"

// Line prints the row as one line of a row file.
func (r Row) Line() string {
	return strings.Join([]string{r.ID, string(r.Tier), r.Group, r.Arbiter.String(), r.FEN, r.Properties(), r.Source}, "\t")
}

// WriteRows writes a row file: the header, then one line per row.
func WriteRows(w io.Writer, rows []Row) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, Header)
	for i := range rows {
		fmt.Fprintln(bw, rows[i].Line())
	}
	return bw.Flush()
}

// ParseRows reads a row file. Blank lines and lines starting with '#' are
// skipped; the header must come first. A row whose fields do not parse
// (a bad tier, FEN, arbiter or property, a move that is not legal in the
// row's position) is an error naming the line: a row the runner cannot
// judge must never count as passed.
func ParseRows(r io.Reader, name string) ([]Row, error) {
	var rows []Row
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), 1<<20)
	header := false
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		where := fmt.Sprintf("%s:%d", name, n)
		if !header {
			if line != Header {
				return nil, fmt.Errorf("%s: header %q, want %q", where, line, Header)
			}
			header = true
			continue
		}
		row, err := parseRow(line)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		row.Where = where
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if !header {
		return nil, fmt.Errorf("%s: no header line", name)
	}
	return rows, nil
}

func parseRow(line string) (Row, error) {
	f := strings.Split(line, "\t")
	if len(f) != 7 {
		return Row{}, fmt.Errorf("%d fields, want 7", len(f))
	}
	row := Row{ID: f[0], Tier: Tier(f[1]), Group: f[2], FEN: f[4], Source: f[6]}
	if row.ID == "" || strings.ContainsAny(row.ID, " ") {
		return Row{}, fmt.Errorf("id %q", row.ID)
	}
	if row.Tier != Mandatory && row.Tier != Quota {
		return Row{}, fmt.Errorf("%s: tier %q, want P or Q", row.ID, f[1])
	}
	if row.Group == "" {
		return Row{}, fmt.Errorf("%s: empty group", row.ID)
	}
	var err error
	if row.Arbiter, err = ParseArbiter(f[3]); err != nil {
		return Row{}, fmt.Errorf("%s: %w", row.ID, err)
	}
	pos, err := chess.ParseFEN(row.FEN)
	if err != nil {
		return Row{}, fmt.Errorf("%s: %w", row.ID, err)
	}
	if pos.FEN() != row.FEN {
		return Row{}, fmt.Errorf("%s: FEN %q is not in canonical form %q", row.ID, row.FEN, pos.FEN())
	}
	for _, s := range strings.Split(f[5], ";") {
		p, err := parseProperty(&pos, strings.TrimSpace(s))
		if err != nil {
			return Row{}, fmt.Errorf("%s: %w", row.ID, err)
		}
		row.Props = append(row.Props, p)
	}
	return row, nil
}

func parseProperty(pos *chess.Position, s string) (Property, error) {
	kind, arg, _ := strings.Cut(s, " ")
	p := Property{Kind: kind}
	switch kind {
	case "best-in":
		if arg == "" {
			return p, fmt.Errorf("property %q: no moves", s)
		}
		for _, m := range strings.Split(arg, ",") {
			mv, err := pos.ParseMove(m)
			if err != nil || mv.UCI() != m {
				return p, fmt.Errorf("property %q: %q is not a legal move in UCI form", s, m)
			}
			p.Moves = append(p.Moves, m)
		}
		if !slices.IsSorted(p.Moves) || len(slices.Compact(slices.Clone(p.Moves))) != len(p.Moves) {
			return p, fmt.Errorf("property %q: moves not sorted and distinct", s)
		}
	case "mate":
		n, err := strconv.Atoi(arg)
		if err != nil {
			return p, fmt.Errorf("property %q: mate distance %q", s, arg)
		}
		p.Mate = n
	case "no-mate", "no-move":
		if arg != "" {
			return p, fmt.Errorf("property %q takes no argument", s)
		}
	default:
		return p, fmt.Errorf("property %q: unknown kind %q", s, kind)
	}
	return p, nil
}

// parsedPosition parses a FEN that parseRow has already accepted.
func parsedPosition(fen string) (chess.Position, error) { return chess.ParseFEN(fen) }
