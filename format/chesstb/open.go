package chesstb

import (
	"context"
	"github.com/tbfs/tbfs/format/blockcache"
	"sync"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/source"
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

// maxPrefetch bounds the blocks one probe fetches ahead.
const maxPrefetch = 24

// openAhead starts opening, concurrently, the kinds tables of n's material
// and of the material of every child a capture or promotion of n reaches
// (its opposing-pair material too, where the child holds a pair), then
// fetches ahead the blocks holding n's own cells in them, or, where n's
// frame is dropped and rebuilt, its children's cells (prefetchCells). It
// does not wait: the work runs in goroutines, counted as a probe in flight
// so Close waits for them, and fills the table slots and the source cache
// the probe asks next; a failure is left for that probe to meet (and, when
// transient, to try again).
func (tb *Tablebase) openAhead(ctx context.Context, n *node, kinds []Kind) {
	switch f, done := tb.tables.Peek(tableKey{KindWDL, n.mat}); {
	case f != nil && !canPrefetch(f):
		// A source that cannot fetch ahead is local (memory-mapped):
		// its tables open as fast as the probe asks for them.
		return
	case done && f == nil:
		// n's own table is missing, refused or corrupt: the probe
		// fails (or asks again) itself and needs nothing ahead.
		return
	}
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
	var todo []tableKey
	for _, m := range mats {
		for _, k := range kinds {
			if !tb.opened(k, m) {
				todo = append(todo, tableKey{k, m})
			}
		}
	}
	if f := tb.openFile(KindWDL, n.mat); len(todo) == 0 && (f == nil || !canPrefetch(f)) {
		return // nothing to open, nothing to fetch ahead
	}
	root := *n
	tb.inflight.Add(1)
	go func() {
		defer tb.inflight.Done()
		var wg sync.WaitGroup
		for _, key := range todo {
			wg.Go(func() { tb.table(ctx, key.kind, key.mat) })
		}
		wg.Wait()
		tb.prefetchCells(ctx, &root, kinds)
	}()
}

// opened reports whether the kind-k table of m has its final outcome, open
// or known to be missing.
func (tb *Tablebase) opened(k Kind, m material) bool {
	_, done := tb.tables.Peek(tableKey{k, m})
	return done
}

// openFile returns the kind-k table of m when it is open, else nil.
func (tb *Tablebase) openFile(k Kind, m material) *tableFile {
	f, _ := tb.tables.Peek(tableKey{k, m})
	return f
}

// canPrefetch reports whether t's source can fetch ahead (it has a cache
// that can); a memory-mapped table needs no help.
func canPrefetch(t *tableFile) bool {
	_, ok := t.obj.(source.Prefetcher)
	return ok
}

// cellBlock is the block of frame c that holds cell idx.
func (t *tableFile) cellBlock(c int, idx uint64) uint64 {
	f := &t.hdr.frames[c]
	switch {
	case t.kind.layered():
		return idx / f.blockPositions
	case t.kind == KindWDL:
		return idx / 2 / f.blockSize
	}
	return idx / (f.blockSize / uint64(f.entryBytes))
}

// blockRange is the compressed bytes of one block, to be fetched ahead.
type blockRange struct {
	obj source.Object
	off int64
	n   int
}

// prefetchCells fetches, all at once, the compressed blocks that hold n's
// cell in each of its kinds tables that are open, and where n's frame is
// dropped, the cells of its children in the same kind and in WDL, which the
// rebuild reads. Blocks already decoded are skipped; at most maxPrefetch are
// fetched. Failures are ignored: the probe's own reads meet them.
func (tb *Tablebase) prefetchCells(ctx context.Context, n *node, kinds []Kind) {
	var want []blockRange
	seen := map[blockcache.Key]bool{}
	// cell adds the block of nd's kind-k cell and reports whether nd's
	// frame is rebuilt instead.
	cell := func(k Kind, nd *node) (derive bool) {
		if len(want) >= maxPrefetch || !tb.opened(k, nd.mat) {
			return false
		}
		t, err := tb.table(ctx, k, nd.mat)
		if err != nil {
			return false
		}
		if !canPrefetch(t) {
			return false
		}
		c, ps, derive, err := frameFor(t, nd)
		if err != nil || derive {
			return derive
		}
		f := &t.hdr.frames[c]
		if !f.stored() {
			return false
		}
		idx, err := cellIndex(t, c, &ps)
		if err != nil {
			return false
		}
		b := t.cellBlock(c, idx)
		key := blockcache.Key{File: t.id, Frame: uint8(c), Block: b}
		if b >= f.blockCnt || f.skipBlock(b) || seen[key] {
			return false
		}
		if t.cache.Has(key) {
			return false
		}
		lo, hi := f.offsets.get(b), f.offsets.get(b+1)
		if hi < lo || hi > f.dataSize {
			return false
		}
		seen[key] = true
		want = append(want, blockRange{obj: t.obj, off: f.dataOff + int64(lo), n: int(hi - lo)})
		return false
	}
	var children []node
	for _, k := range kinds {
		if !cell(k, n) {
			continue
		}
		if children == nil {
			for _, m := range n.pos.LegalMoves(nil) {
				if m.IsEnPassant() {
					continue // the ep overlay probes these afresh
				}
				child := n.pos.Play(m)
				cn := node{pos: child, mat: n.mat}
				if n.pos.IsZeroing(m) {
					cn = tb.nodeOf(ctx, &child)
				}
				if !cn.mat.bareKings() {
					children = append(children, cn)
				}
			}
		}
		for i := range children {
			cell(KindWDL, &children[i])
			if k != KindWDL {
				cell(k, &children[i])
			}
		}
	}
	var wg sync.WaitGroup
	for _, r := range want {
		wg.Go(func() { source.Prefetch(ctx, r.obj, r.off, r.n, source.HintData) })
	}
	wg.Wait()
}
