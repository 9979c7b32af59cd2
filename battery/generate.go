package battery

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tbfs/tbfs/chess"
)

// A seed is a row before its expected properties are known: where its
// position comes from and which arbiter judges it.
type seed struct {
	id    string
	tier  Tier
	group string
	arb   string
	// fen is a typed position; otherwise game names an entry of games and
	// plies how many of its half-moves to play from the start position
	// (0 or less: that many fewer than the whole record).
	fen   string
	game  string
	plies int
}

// Generate builds the shipped rows from their seeds, every expected
// property computed by the row's arbiter (tb for the tables rows).
func Generate(ctx context.Context, tb Prober) ([]Row, error) {
	rows := make([]Row, 0, len(seeds))
	var errs []error
	for _, s := range seeds {
		row, err := s.row(ctx, tb)
		if err != nil {
			errs = append(errs, fmt.Errorf("battery: seed %s: %w", s.id, err))
			continue
		}
		rows = append(rows, row)
	}
	return rows, errors.Join(errs...)
}

func (s seed) row(ctx context.Context, tb Prober) (Row, error) {
	a, err := ParseArbiter(s.arb)
	if err != nil {
		return Row{}, err
	}
	var pos chess.Position
	source := "fen"
	if s.game != "" {
		g, ok := games[s.game]
		if !ok {
			return Row{}, fmt.Errorf("unknown game %q", s.game)
		}
		moves := strings.Fields(g.moves)
		plies := s.plies
		if plies <= 0 {
			plies += len(moves) // counted back from the game's end
		}
		if plies < 0 || plies > len(moves) {
			return Row{}, fmt.Errorf("game %s has %d half-moves, not %d", s.game, len(moves), s.plies)
		}
		source = s.game + ": " + strings.Join(moves[:plies], " ")
		if pos, err = Replay(source); err != nil {
			return Row{}, err
		}
	} else if pos, err = chess.ParseFEN(s.fen); err != nil {
		return Row{}, err
	}
	props, err := Expect(ctx, a, pos, tb)
	if err != nil {
		return Row{}, err
	}
	return Row{ID: s.id, Tier: s.tier, Group: s.group, Arbiter: a, FEN: pos.FEN(), Props: props, Source: source}, nil
}

// Replay plays a row's source ("name: SAN moves...") from the start
// position and returns the position reached.
func Replay(source string) (chess.Position, error) {
	_, moves, ok := strings.Cut(source, ": ")
	if !ok {
		return chess.Position{}, fmt.Errorf("source %q: want \"name: moves\"", source)
	}
	pos := chess.StartPosition()
	for i, s := range strings.Fields(moves) {
		m, err := pos.ParseMove(s)
		if err != nil {
			return chess.Position{}, fmt.Errorf("source %q: half-move %d: %w", source, i+1, err)
		}
		pos = pos.Play(m)
	}
	return pos, nil
}
