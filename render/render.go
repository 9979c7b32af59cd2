// Package render turns what the tables say about a position (a chess
// position through chessprobe, a Geister board through the Geister tables)
// into the forms people and programs read: human text and one JSON object.
// tbprobe prints them and the tbfs mount serves them as files, so both
// front ends say the same thing the same way.
package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"
)

// Category is the class of a position for the side to move under the
// 50-move rule at its half-move clock, named and computed as the lichess
// tablebase API does (see CategoryAt).
type Category string

// The categories, from best to worst for the side to move.
const (
	Win Category = "win"
	// SyzygyWin is a win or a cursed win: a rounded Syzygy DTZ reaches
	// the 50-move limit exactly, and may mean one ply more.
	SyzygyWin   Category = "syzygy-win"
	CursedWin   Category = "cursed-win" // wins, but only past the 50-move limit
	Draw        Category = "draw"
	BlessedLoss Category = "blessed-loss" // loses, but the winner needs more than the 50-move limit
	SyzygyLoss  Category = "syzygy-loss"  // a loss or a blessed loss, as SyzygyWin
	Loss        Category = "loss"
)

// CategoryOf names a WDL value (-2..2); any other value gives "".
func CategoryOf(wdl int) Category {
	switch wdl {
	case 2:
		return Win
	case 1:
		return CursedWin
	case 0:
		return Draw
	case -1:
		return BlessedLoss
	case -2:
		return Loss
	}
	return ""
}

// Metric names one value a table can answer. The names are the JSON keys.
type Metric string

// The metrics, in the order the human block shows them.
const (
	MetricWDL   Metric = "wdl"
	MetricDTZ   Metric = "dtz"
	MetricDTC   Metric = "dtc"
	MetricDTM   Metric = "dtm"
	MetricDTM50 Metric = "dtm50"
)

// Metrics lists every metric in display order.
var Metrics = []Metric{MetricWDL, MetricDTZ, MetricDTC, MetricDTM, MetricDTM50}

// DTC is a depth-to-conversion answer: the pawn pushes the winning side still
// owes before the next conversion, and the plies to the next zeroing move on
// that line, signed like the other distances (negative when the side to move
// loses).
type DTC struct {
	Pushes int `json:"pushes"`
	Plies  int `json:"plies"`
}

// Values are the answers for one position. A nil metric is one no table
// answered; Report.Unavailable says why.
type Values struct {
	Category Category `json:"category,omitempty"`
	WDL      *int     `json:"wdl,omitempty"`
	// DTZ is chesstb's plain distance to the next zeroing move where
	// chesstb answers it (or Syzygy's converts exactly); where only Syzygy
	// does, it is the Syzygy DTZ50'' as it stands, as in SyzygyDTZ.
	DTZ       *int `json:"dtz,omitempty"`
	DTM       *int `json:"dtm,omitempty"`
	DTM50     *int `json:"dtm50,omitempty"`
	DTC       *DTC `json:"dtc,omitempty"`
	Checkmate bool `json:"checkmate"`
	Stalemate bool `json:"stalemate"`
	// Formats are the table formats that answered ("chesstb", "syzygy");
	// none for a position the board alone settles.
	Formats []string `json:"formats,omitempty"`
	// SyzygyDTZ is the Syzygy DTZ table's DTZ50″ as it stands (a cursed
	// win or blessed loss past ±100), and PreciseDTZ the same value where
	// lila-tablebase's precise_dtz rule says it is not rounded.
	SyzygyDTZ  *int `json:"syzygy_dtz,omitempty"`
	PreciseDTZ *int `json:"precise_dtz,omitempty"`
}

// Int returns the named integer metric (WDL, DTZ, DTM, DTM50) and whether a
// table answered it. DTC is not an integer; use the field.
func (v *Values) Int(m Metric) (int, bool) {
	var p *int
	switch m {
	case MetricWDL:
		p = v.WDL
	case MetricDTZ:
		p = v.DTZ
	case MetricDTM:
		p = v.DTM
	case MetricDTM50:
		p = v.DTM50
	}
	if p == nil {
		return 0, false
	}
	return *p, true
}

// Move is one legal move and the values of the position it leads to, from
// the point of view of the side to move there.
type Move struct {
	UCI string `json:"uci"`
	SAN string `json:"san"`
	Values
	// Error says why the position after the move has no answer.
	Error string `json:"error,omitempty"`
	// Best marks the moves the prober's root ranking (MoveRanking) puts
	// first, ties included; none is marked when the moves are unranked.
	Best bool `json:"-"`
}

// Report is everything known about one position.
type Report struct {
	FEN string `json:"fen"`
	Values
	// Moves are the legal moves, best first by MoveRanking, when they were
	// asked for; an empty non-nil list means there are none (mate or
	// stalemate).
	Moves []Move `json:"moves,omitzero"`
	// MovesUnranked, when set, says why the moves could not be ranked; they
	// are then in UCI order and none is marked best.
	MovesUnranked string `json:"-"`
	// Error says why the position has no answer at all (no table for its
	// material, for instance); the values are then empty.
	Error string `json:"error,omitempty"`

	// Material is the material key, "KQvK".
	Material string `json:"-"`
	// Unavailable says, for each metric left nil, why no table answered.
	Unavailable map[Metric]string `json:"-"`
}

// Partial reports whether the report says that some table is missing: the
// position or a move has no answer, the moves could not be ranked, or a
// metric is unavailable. Such a report may change once the table appears;
// every other report stays right for as long as the tables do.
func (r *Report) Partial() bool {
	if r.Error != "" || r.MovesUnranked != "" || len(r.Unavailable) > 0 {
		return true
	}
	for i := range r.Moves {
		if r.Moves[i].Error != "" {
			return true
		}
	}
	return false
}

// JSON returns the report as one JSON object on one line, with a newline.
// Only the keys the tbprobe --json format defines appear.
func JSON(r *Report) []byte {
	b, err := json.Marshal(r)
	if err != nil {
		// Every field is a plain value; Marshal cannot fail on them.
		panic("render: " + err.Error())
	}
	return append(b, '\n')
}

// Text returns the human block for the report: the FEN, then one aligned
// line per fact, then what was unavailable and why, then the moves when
// they were asked for.
func Text(r *Report) []byte {
	var buf bytes.Buffer
	buf.WriteString(r.FEN)
	buf.WriteByte('\n')
	var space [12]textRow
	facts := space[:0]
	line := func(k, v string) { facts = append(facts, textRow{k, v}) }
	if r.Material != "" {
		line("material", r.Material)
	}
	if r.Error != "" {
		line("error", r.Error)
	}
	if r.Category != "" {
		line("category", string(r.Category))
	}
	for _, m := range Metrics {
		if s, ok := valueText(&r.Values, m); ok {
			line(m.label(), s)
		}
	}
	if r.SyzygyDTZ != nil {
		note := "precise"
		if r.PreciseDTZ == nil {
			note = "may be rounded: n or n+1 plies"
		}
		line("Syzygy DTZ", fmt.Sprintf("%d (DTZ50'', %s)", *r.SyzygyDTZ, note))
	}
	if len(r.Formats) > 0 {
		line("tables", strings.Join(r.Formats, "+"))
	}
	if r.Checkmate {
		line("checkmate", "the side to move is checkmated")
	}
	if r.Stalemate {
		line("stalemate", "the side to move is stalemated")
	}
	writeRows(&buf, "  ", facts)
	if len(r.Unavailable) > 0 {
		buf.WriteString("  unavailable:\n")
		keys := make([]string, 0, len(r.Unavailable))
		for m := range r.Unavailable {
			keys = append(keys, string(m))
		}
		sort.Slice(keys, func(i, j int) bool { return metricOrder(Metric(keys[i])) < metricOrder(Metric(keys[j])) })
		facts = facts[:0]
		for _, k := range keys {
			line(Metric(k).label(), r.Unavailable[Metric(k)])
		}
		writeRows(&buf, "    ", facts)
	}
	if r.Moves != nil {
		if len(r.Moves) == 0 {
			buf.WriteString("  moves: none\n")
		} else {
			if r.MovesUnranked != "" {
				fmt.Fprintf(&buf, "  moves (values after the move, for the side to move then; not ranked: %s):\n", r.MovesUnranked)
			} else {
				buf.WriteString("  moves (values after the move, for the side to move then; * = best):\n")
			}
			tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
			for _, mv := range r.Moves {
				mark := " "
				if mv.Best {
					mark = "*"
				}
				fmt.Fprintf(tw, "  %s %s\t%s\t%s", mark, mv.UCI, mv.SAN, orDash(string(mv.Category)))
				for _, m := range Metrics {
					s, ok := valueText(&mv.Values, m)
					if !ok {
						s = "-"
					}
					fmt.Fprintf(tw, "\t%s %s", strings.ToUpper(string(m)), s)
				}
				if mv.Checkmate {
					fmt.Fprint(tw, "\tcheckmate")
				}
				if mv.Stalemate {
					fmt.Fprint(tw, "\tstalemate")
				}
				if mv.Error != "" {
					fmt.Fprintf(tw, "\t%s", mv.Error)
				}
				fmt.Fprint(tw, "\n")
			}
			tw.Flush()
		}
	}
	return buf.Bytes()
}

// textRow is one aligned line of the human block: a name and its value.
type textRow struct{ name, value string }

// writeRows writes each row as indent and name, padded with spaces to two
// more than the widest, then the value: the layout text/tabwriter (padding
// 2, spaces) gives "indent name\tvalue" lines, written without it. Rows
// holding a byte tabwriter acts on (a tab, a line break, its escape) go
// through tabwriter itself, so the layout stays its.
func writeRows(buf *bytes.Buffer, indent string, rows []textRow) {
	width := 0
	for _, r := range rows {
		if tabwriterSpecial(r.name) || tabwriterSpecial(r.value) || !plainIndent(indent) {
			tw := tabwriter.NewWriter(buf, 0, 0, 2, ' ', 0)
			for _, r := range rows {
				fmt.Fprintf(tw, "%s%s\t%s\n", indent, r.name, r.value)
			}
			tw.Flush()
			return
		}
		width = max(width, utf8.RuneCountInString(r.name))
	}
	for _, r := range rows {
		buf.WriteString(indent)
		buf.WriteString(r.name)
		for range width + 2 - utf8.RuneCountInString(r.name) {
			buf.WriteByte(' ')
		}
		buf.WriteString(r.value)
		buf.WriteByte('\n')
	}
}

// tabwriterSpecial reports whether s holds a byte text/tabwriter does not
// pass through as cell text: a cell or line end, or its escape.
func tabwriterSpecial(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\t', '\v', '\n', '\f', tabwriter.Escape:
			return true
		}
	}
	return false
}

// plainIndent reports whether indent is ASCII and no cell or line end, so
// a row's width is the indent's bytes and the name's runes.
func plainIndent(indent string) bool {
	for i := 0; i < len(indent); i++ {
		if indent[i] >= utf8.RuneSelf {
			return false
		}
	}
	return !tabwriterSpecial(indent)
}

// label is the metric's name in the human block: "WDL", "DTM50".
func (m Metric) label() string {
	switch m {
	case MetricWDL:
		return "WDL"
	case MetricDTZ:
		return "DTZ"
	case MetricDTC:
		return "DTC"
	case MetricDTM:
		return "DTM"
	case MetricDTM50:
		return "DTM50"
	}
	return strings.ToUpper(string(m))
}

// MetricText returns one metric as the single line the tbfs metric files
// hold ("19\n"; DTC as "pushes plies\n"), and false when no table answered
// it.
func MetricText(v *Values, m Metric) ([]byte, bool) {
	if m == MetricDTC {
		if v.DTC == nil {
			return nil, false
		}
		return fmt.Appendf(nil, "%d %d\n", v.DTC.Pushes, v.DTC.Plies), true
	}
	n, ok := v.Int(m)
	if !ok {
		return nil, false
	}
	return append(strconv.AppendInt(nil, int64(n), 10), '\n'), true
}

// valueText formats one metric for the human block.
func valueText(v *Values, m Metric) (string, bool) {
	if m == MetricDTC {
		if v.DTC == nil {
			return "", false
		}
		return fmt.Sprintf("%d (%d pushes)", v.DTC.Plies, v.DTC.Pushes), true
	}
	n, ok := v.Int(m)
	if !ok {
		return "", false
	}
	return strconv.Itoa(n), true
}

func metricOrder(m Metric) int {
	for i, x := range Metrics {
		if x == m {
			return i
		}
	}
	return len(Metrics)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
