package render

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	geistertb "github.com/tbfs/tbfs/format/geister"
	"github.com/tbfs/tbfs/geister"
)

// GeisterProber is what CollectGeister needs; format/geister's Tablebase is
// one.
type GeisterProber interface {
	Moves(ctx context.Context, p geister.Position) (*geistertb.Moves, error)
}

// GeisterValuer is what CollectGeisterValue needs; format/geister's
// Tablebase is one.
type GeisterValuer interface {
	DTW(ctx context.Context, p geister.Position) (uint8, error)
}

// GeisterMove is one legal move with the stored value of the position it
// leads to, from the side to move there. The JSON keys are tbprobe
// geister's.
type GeisterMove struct {
	From    string `json:"from"`
	To      string `json:"to"`
	Dir     string `json:"dir"`
	Capture string `json:"capture"` // the captured piece's letter, or "-"
	Value   uint8  `json:"value"`
	Best    bool   `json:"best"`
}

// GeisterReport is what the Geister tables say about one board, in the
// JSON shape tbprobe geister prints.
type GeisterReport struct {
	Board  string        `json:"board"`
	Value  *uint8        `json:"value,omitempty"`  // the stored byte: 0 draw, odd win, even loss
	Result string        `json:"result,omitempty"` // "win", "loss" or "draw" for the side to move
	Plies  *int          `json:"plies,omitempty"`
	Moves  []GeisterMove `json:"moves,omitzero"`
	Error  string        `json:"error,omitempty"`
}

// CollectGeister answers board p and every move of it. As with Collect, a
// board the tables do not cover is a report with Error; a transport failure
// or a corrupt table is an error and no report.
func CollectGeister(ctx context.Context, tb GeisterProber, p geister.Position) (*GeisterReport, error) {
	rep := &GeisterReport{Board: p.String()}
	ms, err := tb.Moves(ctx, p)
	if err != nil {
		return rep.failed(err)
	}
	rep.setValue(ms.Value)
	rep.Moves = make([]GeisterMove, 0, len(ms.List))
	for _, mv := range ms.List {
		capture := "-"
		if mv.Capture != geister.Empty {
			capture = string(mv.Capture.Letter())
		}
		rep.Moves = append(rep.Moves, GeisterMove{
			From: mv.From.Coord(), To: mv.To.Coord(), Dir: mv.Dir.String(),
			Capture: capture, Value: mv.Value, Best: mv.Best,
		})
	}
	return rep, nil
}

// CollectGeisterValue answers board p alone, without its moves: one read
// of p's table, so a move whose child has no table does not matter. Errors
// are as for CollectGeister.
func CollectGeisterValue(ctx context.Context, tb GeisterValuer, p geister.Position) (*GeisterReport, error) {
	rep := &GeisterReport{Board: p.String()}
	v, err := tb.DTW(ctx, p)
	if err != nil {
		return rep.failed(err)
	}
	rep.setValue(v)
	return rep, nil
}

// failed turns a probe error into the report's Error when it is a fact
// about the board (no table, not a table material, not a position), and
// returns it otherwise.
func (r *GeisterReport) failed(err error) (*GeisterReport, error) {
	if errors.Is(err, geistertb.ErrNoTable) || errors.Is(err, geistertb.ErrNoMaterial) ||
		errors.Is(err, geister.ErrInvalidPosition) {
		r.Error = err.Error()
		return r, nil
	}
	return nil, err
}

// setValue fills the stored byte and its meaning.
func (r *GeisterReport) setValue(v uint8) {
	res := geistertb.ResultOf(v)
	r.Value, r.Result, r.Plies = &v, res.Outcome.String(), &res.Plies
}

// GeisterJSON returns the report as one JSON line.
func GeisterJSON(r *GeisterReport) []byte {
	b, err := json.Marshal(r)
	if err != nil {
		panic("render: " + err.Error())
	}
	return append(b, '\n')
}

// GeisterText returns the human block: the board, its value and meaning,
// then every move best first.
func GeisterText(r *GeisterReport) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\n", r.Board)
	if r.Error != "" {
		fmt.Fprintf(&b, "  error   %s\n", r.Error)
		return b.Bytes()
	}
	fmt.Fprintf(&b, "  value   %d\n  result  %s\n", *r.Value, geisterMeaning(*r.Value))
	for _, m := range r.Moves {
		mark := " "
		if m.Best {
			mark = "*"
		}
		fmt.Fprintf(&b, "  %s %s-%s %s capture %s: child %d (%s for the opponent)\n",
			mark, m.From, m.To, m.Dir, m.Capture, m.Value, geisterMeaning(m.Value))
	}
	return b.Bytes()
}

// GeisterLine returns the report in the line form tbprobe geister prints:
// the board, the value and its meaning separated by tabs (or the board and
// the error), then, when the report has moves, one indented line per move
// in the report's order with the child's value and what it means for the
// opponent, and "best" after a tab on the best moves. The board is quoted
// (strconv.Quote) when it holds a character that does not print, since a
// bad board is echoed as it was given.
func GeisterLine(r *GeisterReport) []byte {
	var b bytes.Buffer
	board := r.Board
	if strings.IndexFunc(board, func(c rune) bool { return !unicode.IsPrint(c) }) >= 0 {
		board = strconv.Quote(board)
	}
	if r.Error != "" {
		fmt.Fprintf(&b, "%s\terror: %s\n", board, r.Error)
		return b.Bytes()
	}
	fmt.Fprintf(&b, "%s\t%d\t%s\n", board, *r.Value, geisterOutcome(*r.Value, ""))
	for _, m := range r.Moves {
		best := ""
		if m.Best {
			best = "\tbest"
		}
		fmt.Fprintf(&b, "  %s-%s %s capture %s\tchild %d (%s for the opponent)%s\n",
			m.From, m.To, m.Dir, m.Capture, m.Value, geisterOutcome(m.Value, ""), best)
	}
	return b.Bytes()
}

// geisterMeaning is what stored byte v means for the side to move, with
// its distance in plies.
func geisterMeaning(v uint8) string { return geisterOutcome(v, " plies") }

// geisterOutcome is "draw", or the outcome for the side to move and its
// distance followed by unit.
func geisterOutcome(v uint8, unit string) string {
	r := geistertb.ResultOf(v)
	if r.Outcome == geistertb.Draw {
		return "draw"
	}
	return fmt.Sprintf("%s in %d%s", r.Outcome, r.Plies, unit)
}
