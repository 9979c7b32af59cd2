package render

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	geistertb "github.com/tbfs/tbfs/format/geister"
	"github.com/tbfs/tbfs/geister"
)

// GeisterProber is what CollectGeister needs; *geister.Tablebase is one.
type GeisterProber interface {
	Moves(ctx context.Context, p geister.Position) (*geistertb.Moves, error)
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
		if errors.Is(err, geistertb.ErrNoTable) || errors.Is(err, geistertb.ErrNoMaterial) ||
			errors.Is(err, geister.ErrInvalidPosition) {
			rep.Error = err.Error()
			return rep, nil
		}
		return nil, err
	}
	v := ms.Value
	r := geistertb.ResultOf(v)
	rep.Value, rep.Result, rep.Plies = &v, r.Outcome.String(), &r.Plies
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

func geisterMeaning(v uint8) string {
	r := geistertb.ResultOf(v)
	if r.Outcome == geistertb.Draw {
		return "draw"
	}
	return fmt.Sprintf("%s in %d plies", r.Outcome, r.Plies)
}
