package lichess

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/tbfs/tbfs/chess"
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

// errOutside wraps the reason a mainline has no answer because a table
// it needs is missing (404, as lila's MissingTable, Castling and
// TooManyPieces).
var errOutside = errors.New("not a position of these tables")

// BuildMainline follows the tables' best move from pos as lila-tablebase
// does (tablebases.rs, mainline_blocking): nothing when the position is
// drawn (DTZ 0), otherwise shakmaty-syzygy's best move (see bestMove) one
// after another while the half-move clock is below 100, so the line
// claims the 50-move draw as soon as it can, and ends at a position
// without moves. The winner is set only when the line ends in checkmate.
// A table missing for the root or for a move the choice has to weigh
// (lila's MissingTable) is errOutside; the other errors are failures to
// read the tables.
func BuildMainline(ctx context.Context, p Prober, pos *chess.Position) (*Mainline, error) {
	root, ok, why, err := lilaProbe(ctx, p, pos)
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return nil, fmt.Errorf("%w: %w", errOutside, why)
	case !root.hasDTZ:
		return nil, fmt.Errorf("%w: no DTZ table holds %s", errOutside, pos.MaterialKey())
	}
	ml := &Mainline{Mainline: []MainlineStep{}, DTZ: root.dtz}
	if root.precise {
		ml.PreciseDTZ = &root.dtz
	}
	cur := *pos
	if root.dtz != 0 {
		for cur.HalfmoveClock() < 100 {
			if len(ml.Mainline) >= maxMainline {
				return nil, &tableError{fmt.Errorf("mainline from %s did not end within %d plies", pos.FEN(), maxMainline)}
			}
			m, v, ok, err := bestMove(ctx, p, &cur)
			if err != nil {
				return nil, fmt.Errorf("mainline at %s: %w", cur.FEN(), err)
			}
			if !ok {
				break
			}
			step := MainlineStep{UCI: m.UCI(), SAN: cur.SAN(m), DTZ: v.dtz}
			if v.precise {
				step.PreciseDTZ = &step.DTZ
			}
			ml.Mainline = append(ml.Mainline, step)
			cur = cur.Play(m)
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

// bestMove is shakmaty-syzygy's Tablebase::best_move: of the moves whose
// child has the best WDL for the mover (the child's lowest), an immediate
// mate first; then, where the child loses, a zeroing move first and where
// it wins one that does not zero; then the child's DTZ50″ largest (ignoring
// rounding: nearest zero for a losing child, furthest for a winning one);
// ties to the move shakmaty generates first. ok is false for a position
// without moves. Every child's WDL, and the DTZ of every child of the best
// WDL, must be in the tables (else errOutside, as lila's MissingTable).
func bestMove(ctx context.Context, p Prober, pos *chess.Position) (chess.Move, lilaValue, bool, error) {
	moves := pos.LegalMoves(nil)
	shakmatyOrder(pos, moves)
	values := make([]lilaValue, len(moves))
	bestWDL := 3
	for i, m := range moves {
		child := pos.Play(m)
		v, ok, why, err := lilaProbe(ctx, p, &child)
		switch {
		case err != nil:
			return 0, v, false, fmt.Errorf("after %s: %w", m.UCI(), err)
		case !ok:
			return 0, v, false, fmt.Errorf("%w: after %s: %w", errOutside, m.UCI(), why)
		}
		values[i] = v
		bestWDL = min(bestWDL, v.wdl)
	}
	type rank struct {
		mate, fit bool // an immediate mate; zeroing as the child's sign wants
		dtz       int
	}
	better := func(a, b rank) bool {
		switch {
		case a.mate != b.mate:
			return a.mate
		case a.fit != b.fit:
			return a.fit
		}
		return a.dtz > b.dtz
	}
	best, found := -1, rank{}
	for i, m := range moves {
		v := values[i]
		if v.wdl != bestWDL {
			continue
		}
		child := pos.Play(m)
		if !v.hasDTZ {
			return 0, v, false, fmt.Errorf("%w: after %s: no DTZ table holds %s", errOutside, m.UCI(), child.MaterialKey())
		}
		r := rank{mate: v.dtz == -1 && child.IsCheckmate(), fit: pos.IsZeroing(m) == (v.dtz < 0), dtz: v.dtz}
		if best < 0 || better(r, found) {
			best, found = i, r
		}
	}
	if best < 0 {
		return 0, lilaValue{}, false, nil
	}
	return moves[best], values[best], true, nil
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
