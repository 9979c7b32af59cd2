package syzygy

import (
	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/source"
)

// Over object storage every table open is a round trip (and its header
// and index reads follow it). The tables a probe can need are known from
// its position: its own material's, and those its captures and promotions
// reach. openAhead starts opening them together, so the search finds them
// open (or their open in flight) instead of paying one round trip after
// another. A memory-mapped table opens as fast as the search asks, so once
// the position's own table is known to be local nothing is done.

// openAhead starts opening, in the background, the kinds tables of pos's
// material and the WDL tables of every material a capture or promotion of
// pos reaches. It does not wait.
func (tb *Tablebase) openAhead(pos *chess.Position, kinds ...Kind) {
	if tb.openedLocal.Load() && !tb.openedRemote.Load() {
		return // every table so far is local: nothing to gain
	}
	own := materialKey(pos, KindWDL)
	if r := tb.recent[recentSlot(own)].Load(); r != nil && r.key == own {
		if _, remote := r.file.obj.(source.Prefetcher); !remote {
			return
		}
	}
	m := materialOf(pos)
	if m.total() == 2 {
		return
	}
	type want struct {
		k Kind
		m material
	}
	var todo []want
	add := func(k Kind, m material) {
		if m.total() == 2 {
			return
		}
		m, _ = m.canonical()
		for _, w := range todo {
			if w.k == k && w.m == m {
				return
			}
		}
		if !tb.opened(k, m) {
			todo = append(todo, want{k, m})
		}
	}
	for _, k := range kinds {
		add(k, m)
	}
	var buf [256]chess.Move
	for _, mv := range pos.LegalMoves(buf[:0]) {
		if pos.IsCapture(mv) || mv.Promotion() != chess.NoPieceType {
			child := pos.Play(mv)
			add(KindWDL, materialOf(&child))
		}
	}
	for _, w := range todo {
		tb.bgWG.Add(1)
		go func() {
			defer tb.bgWG.Done()
			tb.table(tb.bgCtx, w.k, w.m)
		}()
	}
}

// opened reports whether the kind-k table of m has a final outcome (open,
// or known to be missing or corrupt).
func (tb *Tablebase) opened(k Kind, m material) bool {
	_, done := tb.tables.Peek(tableKey{k, m})
	return done
}

// openedFile returns the kind-k table of m when it is open, else nil.
func (tb *Tablebase) openedFile(k Kind, m material) *tableFile {
	f, _ := tb.tables.Peek(tableKey{k, m})
	return f
}
