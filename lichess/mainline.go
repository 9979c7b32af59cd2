package lichess

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/format/chesstb"
	"github.com/tbfs/tbfs/source"
)

// MainlineStep is one move of a mainline, lila's shape: the move and the
// DTZ50″ of the position after it, for the side to move there.
type MainlineStep struct {
	UCI        string `json:"uci"`
	SAN        string `json:"san"`
	DTZ        int    `json:"dtz"`
	PreciseDTZ *int   `json:"precise_dtz"`
}

// Mainline is lila's /standard/mainline answer.
type Mainline struct {
	Mainline []MainlineStep `json:"mainline"`
	// Winner is "w" or "b" when the line ends in checkmate, else null.
	Winner     *string `json:"winner"`
	DTZ        int     `json:"dtz"`
	PreciseDTZ *int    `json:"precise_dtz"`
}

// errOutside wraps a probe error for a root outside the tables (404).
var errOutside = errors.New("not a position of these tables")

// BuildMainline follows the tables' best move from pos as lila-tablebase
// does: nothing when the position is drawn (DTZ 0), otherwise one move
// after another until checkmate, stalemate, or the 50-move rule, whose
// draw the line claims as soon as it can (the half-move clock reaches
// 100). Each move is the first of RankMoves with the 50-move rule at the
// clock reached, so the line keeps the rule-true result. The winner is set
// only when the line ends in checkmate.
func BuildMainline(ctx context.Context, p Prober, pos *chess.Position) (*Mainline, error) {
	res, err := probe(ctx, p, pos)
	if res == nil {
		if isTableError(err) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %w", errOutside, err)
	}
	if !res.HasDTZ && (res.Syzygy == nil || !res.Syzygy.HasDTZ) {
		return nil, &tableError{fmt.Errorf("no DTZ for %s: %v", pos.FEN(), res.Unavailable[chesstb.MetricDTZ])}
	}
	dtz, precise := lilaDTZ(res)
	ml := &Mainline{Mainline: []MainlineStep{}, DTZ: dtz}
	if precise {
		ml.PreciseDTZ = &dtz
	}
	cur := *pos
	if dtz != 0 {
		for cur.HalfmoveClock() < 100 {
			if len(ml.Mainline) >= maxMainline {
				return nil, &tableError{fmt.Errorf("mainline from %s did not end within %d plies", pos.FEN(), maxMainline)}
			}
			moves, err := p.RankMoves(ctx, &cur, chesstb.RankOptions{Ranker: chesstb.RankDTZ, Rule50: true})
			if err != nil {
				return nil, &tableError{fmt.Errorf("mainline at %s: %w", cur.FEN(), err)}
			}
			if len(moves) == 0 {
				break
			}
			best := &moves[0]
			d, precise := lilaDTZ(&best.After)
			step := MainlineStep{UCI: best.Move.UCI(), SAN: cur.SAN(best.Move), DTZ: d}
			if precise {
				step.PreciseDTZ = &d
			}
			ml.Mainline = append(ml.Mainline, step)
			cur = cur.Play(best.Move)
		}
	}
	if cur.IsCheckmate() {
		w := "w"
		if cur.SideToMove() == chess.White {
			w = "b"
		}
		ml.Winner = &w
	}
	return ml, nil
}

func (s *Server) mainline(w http.ResponseWriter, r *http.Request) {
	s.withPosition(w, r, func(ctx context.Context, pos *chess.Position) {
		start := time.Now()
		ml, err := BuildMainline(ctx, s.p, pos)
		s.observe(time.Since(start), errors.Is(err, errOutside), err)
		switch {
		case errors.Is(err, errOutside):
			replyError(w, r, http.StatusNotFound, err)
		case err != nil:
			replyFailure(w, r, err)
		default:
			reply(w, r, http.StatusOK, ml)
		}
	})
}

func isTransient(err error) bool { return errors.Is(err, source.ErrTransient) }
