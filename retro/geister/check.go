package geister

import (
	"context"
	"errors"
	"fmt"

	geistertb "github.com/tbfs/tbfs/format/geister"
	"github.com/tbfs/tbfs/geister"
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
func Check(ctx context.Context, tabs *Tables, m geistertb.Material, workers int) error {
	return checkRange(ctx, tabs, m, 0, m.Entries(), workers)
}

// checkRange is Check over the entries [from, to) only.
func checkRange(ctx context.Context, tabs *Tables, m geistertb.Material, from, to uint64, workers int) error {
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
		var mv [32]geister.Move
		// Entries are checked in groups: first every child index of the
		// group is computed, then the children's values are loaded in one
		// tight loop, whose independent cache misses overlap (the twin
		// table is far larger than the caches), then each entry's rule is
		// tested.
		const group = 64
		type pending struct {
			i        uint64
			first, n int // children in ts[first:first+n]
			lastBlue bool
		}
		var (
			pend  [group]pending
			ts    [group * 32]uint8
			load  [group * 32]uint64 // twin indices to load
			into  [group * 32]uint16 // where in ts each load goes
			np    int
			nts   int
			nload int
		)
		flush := func() error {
			for j, idx := range load[:nload] {
				ts[into[j]] = twin[idx]
			}
			for _, e := range pend[:np] {
				if want := geistertb.Backup(ts[e.first:e.first+e.n], e.lastBlue); want != vals[e.i] {
					p, _ := geistertb.Unrank(m, e.i)
					return fmt.Errorf("%w: %v entry %d (%v) holds %d, its children give %d", ErrInconsistent, m, e.i, p, vals[e.i], want)
				}
			}
			np, nts, nload = 0, 0, 0
			return nil
		}
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
			if np == group {
				if err := flush(); err != nil {
					return err
				}
			}
			moves := p.Moves(mv[:0])
			e := pending{i: i, first: nts, n: len(moves)}
			f := turn(p)
			for _, mo := range moves {
				e.lastBlue = e.lastBlue || p.CapturesLastBlue(mo)
				if mo.Capture != geister.Empty {
					if ts[nts], err = s.captureValue(rk, p.Play(mo)); err != nil {
						return err
					}
				} else {
					load[nload] = f.child(rk, mo, p.OwnRed&mo.From.Bit() != 0)
					into[nload] = uint16(nts)
					nload++
				}
				nts++
			}
			pend[np] = e
			np++
		}
		return flush()
	})
}
