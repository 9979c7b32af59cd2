package chesstb

import (
	"context"
	"errors"
	"github.com/tbfs/tbfs/format/blockcache"
	"sync"
	"sync/atomic"

	"github.com/tbfs/tbfs/format/chesstb/internal/changepoint"
)

// This file reads cells of the two changepoint packs, DTM50 (.lzdtm50) and
// DTC (.lzdtc). Like a distance block, a pack block is decompressed only as
// far as the probes so far have needed (packBlock), and looked up through a
// changepoint.Partial, whose index of the decompressed part grows with the
// lookups and makes a lookup there independent of the block size.

// packLayers is the stack height of a pack kind.
func packLayers(k Kind) int {
	if k == KindDTC {
		return changepoint.DTCLayers
	}
	return changepoint.DTM50Layers
}

// packRecord returns the record of cell idx in frame c of a pack table.
// found is false where the frame stores nothing for the cell (a singular
// frame, or a skipped block), which the format reads as drawn everywhere.
// memo (which may be nil) remembers the blocks one probe read last.
func (t *tableFile) packRecord(ctx context.Context, c int, idx uint64, memo *packMemo) (rec changepoint.Record, found bool, err error) {
	f := &t.hdr.frames[c]
	if f.singular {
		return rec, false, nil
	}
	b := idx / f.blockPositions
	if b >= f.blockCnt {
		return rec, false, t.fileErr(-1, corruptf("cell %d beyond the last block", idx))
	}
	key := blockcache.Key{File: t.id, Frame: uint8(c), Block: b}
	if pb := memo.get(key); pb != nil && !pb.evicted.Load() {
		return t.packLookup(pb, f, b, idx)
	}
	if f.skipBlock(b) {
		return rec, false, nil
	}
	positions := f.blockPositions
	if b == f.blockCnt-1 && f.tailPositions != 0 {
		positions = f.tailPositions
	}
	params := changepoint.Params{
		Layers:     packLayers(t.kind),
		EntryBytes: f.entryBytes,
		Positions:  int(positions),
		Ranks:      len(f.ranks),
	}
	v, ok := t.cache.Peek(key)
	if !ok {
		v, err = t.cache.GetValue(ctx, key, func() (any, int64, error) {
			usize := f.usizes.get(b)
			if usize < 24 || usize > maxBlockBytes {
				return nil, 0, corruptf("decoded size %d", usize)
			}
			pa, err := changepoint.NewPartial(params, int(usize))
			if err != nil {
				return nil, 0, corruptf("%v", err)
			}
			lb, err := t.openLZMABlock(ctx, c, b, int(usize))
			if err != nil {
				return nil, 0, err
			}
			t.tierWalkIndex(ctx, c, b, lb, pa)
			pb := &packBlock{lzmaBlock: lb, part: pa}
			pb.onGrow = func(delta int64) { t.cache.Resize(key, pb, delta) }
			// The budget counts the coder with its compressed bytes, then
			// the payload buffer and the lookup index as they grow.
			pb.indexBytes = int64(pa.Bytes())
			return pb, pb.memSize() + pb.indexBytes, nil
		})
		if err != nil {
			if _, ok := err.(*FileError); !ok {
				err = t.fileErr(int64(b), err)
			}
			return rec, false, err
		}
	}
	pb := v.(*packBlock)
	memo.put(key, pb)
	return t.packLookup(pb, f, b, idx)
}

// packLookup reads the record of cell idx from pb, block b of frame f.
func (t *tableFile) packLookup(pb *packBlock, f *frame, b, idx uint64) (rec changepoint.Record, found bool, err error) {
	rec, err = pb.lookup(int(idx - b*f.blockPositions))
	if err != nil {
		if !errors.Is(err, ErrCorrupt) {
			err = corruptf("%v", err)
		}
		return rec, false, t.fileErr(int64(b), err)
	}
	return rec, true, nil
}

// packMemo remembers the last few pack blocks one probe read, as blockMemo
// does for WDL blocks: a rebuild reads dozens of children's records, mostly
// from the same few blocks, and the memo spares each read after the first
// the shared cache's lock, map lookup and LRU update. A block the cache has
// dropped is not used from the memo: a lookup could decode it further, and
// that memory would no longer count against the budget, so the read goes
// back through the cache, which decodes the block afresh and counts it.
// The zero value is empty; a nil memo remembers nothing.
type packMemo struct {
	keys   [4]blockcache.Key
	blocks [4]*packBlock
	next   int
}

func (m *packMemo) get(key blockcache.Key) *packBlock {
	if m == nil {
		return nil
	}
	for i := range m.keys {
		if m.blocks[i] != nil && m.keys[i] == key {
			return m.blocks[i]
		}
	}
	return nil
}

func (m *packMemo) put(key blockcache.Key, pb *packBlock) {
	if m == nil {
		return
	}
	m.keys[m.next], m.blocks[m.next] = key, pb
	m.next = (m.next + 1) % len(m.keys)
}

// packBlock is a pack block decompressed as far as probes have needed. A
// lookup decompresses up to the bytes its position's record lives in (the
// state vector up to it, then its stream up to the record) and a later one
// resumes from there; changepoint.Partial keeps the state counts and the
// records walked so far, so a lookup in the covered part costs what a
// lookup in a whole parsed block does, and nothing forces a block to be
// decompressed or checked beyond what its lookups read. (Completing a block
// on its second lookup and checking it whole cost more, in decompression
// and checking, than it saved: BenchmarkProbeCold.)
type packBlock struct {
	*lzmaBlock
	pmu  sync.Mutex // serialises lookups, which extend part
	part *changepoint.Partial
	err  error // a lookup's failure, repeated to every later one
	// indexBytes is what part held when the cache was last told.
	indexBytes int64
}

// lookup returns the record of position pos of the block.
func (pb *packBlock) lookup(pos int) (changepoint.Record, error) {
	pb.pmu.Lock()
	defer pb.pmu.Unlock()
	if pb.err != nil {
		return changepoint.Record{}, pb.err
	}
	if pb.have != nil && pb.part.Indexed() {
		// A block from the decoded store with its walk index: read only
		// the chunks the lookup reads.
		rec, err := pb.part.LookupIndexed(pb.buf, func(lo, hi int) error {
			_, err := pb.span(lo, hi)
			return err
		}, pos)
		if err != nil {
			pb.err = err
		}
		return rec, err
	}
	for {
		have := min(int(pb.done.Load()), pb.size)
		rec, need, err := pb.part.Lookup((*pb.view.Load())[:have], pos)
		if err == nil && need == 0 {
			if n := int64(pb.part.Bytes()); n != pb.indexBytes {
				pb.onGrow(n - pb.indexBytes)
				pb.indexBytes = n
			}
			return rec, nil
		}
		if err == nil && need <= have {
			err = corruptf("pack block parser asked for %d bytes, holding %d", need, have)
		}
		if err == nil {
			_, err = pb.upTo(need)
		}
		if err != nil {
			// The index may be part-way through extending itself.
			pb.err = err
			return changepoint.Record{}, err
		}
	}
}

// packValue maps a record's rank to the stored value. changepoint.Partial
// has checked every rank of the record it returns against the table, so
// this cannot fail.
func packValue(f *frame, rank uint16) uint16 { return f.ranks[rank] }

// packVisitHook, set only by tests, sees the record shape of every pack
// cell read, so a test can show each shape was exercised.
var packVisitHook atomic.Pointer[func(Kind, changepoint.State)]

func notePackVisit(k Kind, s changepoint.State) {
	if f := packVisitHook.Load(); f != nil {
		(*f)(k, s)
	}
}
