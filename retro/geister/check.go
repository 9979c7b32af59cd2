package geister

import (
	"context"
	"errors"
	"fmt"

	model "github.com/tbfs/tbfs/format/geister"
)

// ErrInconsistent is matched by errors from Check about an entry that
// breaks the consistency rule.
var ErrInconsistent = errors.New("geister: table entry breaks the consistency rule")

// Check tests every entry of m's table in tabs against the rules of
// FORMAT.md §2: a terminal position holds what the rules say, any other
// holds what Backup makes of its children's values (read from tabs: the
// twin material and every material a capture leads to must be held). An
// observation that is its own mirror image must hold the same value for a
// colouring and its mirror image, which the obsblk layout stores apart.
// It returns the first failures found, joined, or nil.
func Check(ctx context.Context, tabs *Tables, m model.Material, workers int) error {
	return checkRange(ctx, tabs, m, 0, m.Entries(), workers)
}

// checkRange is Check over the entries [from, to) only.
func checkRange(ctx context.Context, tabs *Tables, m model.Material, from, to uint64, workers int) error {
	vals, ok := tabs.Get(m)
	if !ok {
		return fmt.Errorf("%w: %v", ErrMissingTable, m)
	}
	twin, ok := tabs.Get(m.Swap())
	if !ok {
		return fmt.Errorf("%w: %v", ErrMissingTable, m.Swap())
	}
	s := newSolver(tabs, workers)
	to = min(to, uint64(len(vals)))
	if from >= to {
		return nil
	}
	return s.parallel(ctx, to-from, func(w int, lo, hi uint64) error {
		lo, hi = lo+from, hi+from
		rk := &s.rankers[w]
		cur := newCursor(rk, m)
		var mv [32]model.Move
		var ts [32]uint8
		for i := lo; i < hi; i++ {
			p, err := cur.at(i)
			if err != nil {
				return err
			}
			v := vals[i]
			if symmetricObservation(p) {
				if q := p.Mirror(); q != p {
					_, j, _, err := rk.Rank(q)
					if err != nil {
						return err
					}
					if vals[j] != v {
						return fmt.Errorf("%w: %v entries %d and %d are mirror images but hold %d and %d", ErrInconsistent, m, i, j, v, vals[j])
					}
				}
			}
			if tv, ok := p.Terminal(); ok {
				if v != tv {
					return fmt.Errorf("%w: %v entry %d (%v) holds %d, the rules say %d", ErrInconsistent, m, i, p, v, tv)
				}
				continue
			}
			moves := p.Moves(mv[:0])
			lastBlue := false
			f := turn(p)
			for j, mo := range moves {
				lastBlue = lastBlue || p.CapturesLastBlue(mo)
				if mo.Capture != model.Empty {
					if ts[j], err = s.captureValue(rk, p.Play(mo)); err != nil {
						return err
					}
					continue
				}
				ts[j] = twin[f.child(rk, mo, p.OwnRed&mo.From.Bit() != 0)]
			}
			if want := model.Backup(ts[:len(moves)], lastBlue); want != v {
				return fmt.Errorf("%w: %v entry %d (%v) holds %d, its children give %d", ErrInconsistent, m, i, p, v, want)
			}
		}
		return nil
	})
}
