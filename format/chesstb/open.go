package chesstb

import (
	"context"

	"github.com/tbfs/tbfs/chess"
)

// Opening tables ahead of a probe.
//
// Over object storage a table's first read costs a round trip, and a probe
// that opened its tables one after another paid one per table: the root's
// own tables, then every sub-table a rebuild reaches through a capture or a
// promotion. All of them are known as soon as the root's moves are
// generated, so openAhead opens them at once, and the probe that follows
// finds them open (or finds their open in flight and waits for it).

// everyKind is what a probe of every metric may read.
var everyKind = []Kind{KindWDL, KindDTZ, KindDTC, KindDTM, KindDTM50}

// wdlKind is what a WDL probe reads.
var wdlKind = []Kind{KindWDL}

// openAhead starts opening, concurrently, the kinds tables of n's material
// and of the material of every child a capture or promotion of n reaches
// (its opposing-pair material too, where the child holds a pair). It does
// not wait: each open runs in its own goroutine, counted as a probe in
// flight so Close waits for it, and fills the table slot the probe asks
// next; a failure is left for that probe to meet (and, when transient, to
// try again). Tables already opened cost nothing.
func (tb *Tablebase) openAhead(ctx context.Context, n *node, kinds []Kind) {
	var mats []material
	add := func(m material) {
		for _, o := range mats {
			if o == m {
				return
			}
		}
		mats = append(mats, m)
	}
	add(n.mat)
	var buf [256]chess.Move
	for _, m := range n.pos.LegalMoves(buf[:0]) {
		if !n.pos.IsCapture(m) && m.Promotion() == chess.NoPieceType {
			continue
		}
		child := n.pos.Play(m)
		if pm, _, ok := pairMaterial(&child); ok {
			add(pm)
		}
		if cn := canonicalNode(&child); !cn.mat.bareKings() {
			add(cn.mat)
		}
	}
	for _, m := range mats {
		for _, k := range kinds {
			if tb.opened(k, m) {
				continue
			}
			tb.inflight.Add(1)
			go func() {
				defer tb.inflight.Done()
				tb.table(ctx, k, m)
			}()
		}
	}
}

// opened reports whether the kind-k table of m has its final outcome, open
// or known to be missing.
func (tb *Tablebase) opened(k Kind, m material) bool {
	tb.mu.RLock()
	s := tb.tables[tableKey{k, m}]
	tb.mu.RUnlock()
	return s != nil && s.done.Load() != nil
}
