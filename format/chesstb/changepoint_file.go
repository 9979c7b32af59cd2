package chesstb

import (
	"context"
	"sync/atomic"

	"github.com/tbfs/tbfs/format/chesstb/internal/changepoint"
)

// This file reads cells of the two changepoint packs, DTM50 (.lzdtm50) and
// DTC (.lzdtc). A block is decoded once into changepoint.Block, whose prefix
// index makes a lookup independent of the block size, and kept in the shared
// block cache in that form.

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
func (t *tableFile) packRecord(ctx context.Context, c int, idx uint64) (rec changepoint.Record, found bool, err error) {
	f := &t.hdr.frames[c]
	if f.singular {
		return rec, false, nil
	}
	b := idx / f.blockPositions
	if b >= f.blockCnt {
		return rec, false, t.fileErr(-1, corruptf("cell %d beyond the last block", idx))
	}
	if f.skipBlock(b) {
		return rec, false, nil
	}
	positions := f.blockPositions
	if b == f.blockCnt-1 && f.tailPositions != 0 {
		positions = f.tailPositions
	}
	key := blockKey{file: t.id, frame: uint8(c), block: b}
	v, err := t.cache.getValue(ctx, key, func() (any, int64, error) {
		usize := f.usizes.get(b)
		if usize < 24 || usize > maxBlockBytes {
			return nil, 0, corruptf("decoded size %d", usize)
		}
		comp, err := t.readCompressed(ctx, c, b)
		if err != nil {
			return nil, 0, err
		}
		payload, err := decodeLZMA(comp, usize)
		if err != nil {
			return nil, 0, err
		}
		blk, err := changepoint.Decode(payload, changepoint.Params{
			Layers:     packLayers(t.kind),
			EntryBytes: f.entryBytes,
			Positions:  int(positions),
			Ranks:      len(f.ranks),
		})
		if err != nil {
			return nil, 0, corruptf("%v", err)
		}
		return blk, int64(blk.Bytes()), nil
	})
	if err != nil {
		if _, ok := err.(*FileError); !ok {
			err = t.fileErr(int64(b), err)
		}
		return rec, false, err
	}
	blk := v.(*changepoint.Block)
	rec, err = blk.Lookup(int(idx - b*f.blockPositions))
	if err != nil {
		return rec, false, t.fileErr(int64(b), corruptf("%v", err))
	}
	return rec, true, nil
}

// packValue maps a record's rank to the stored value. Decode has checked
// every rank against the table, so this cannot fail on a decoded block.
func packValue(f *frame, rank uint16) uint16 { return f.ranks[rank] }

// packVisitHook, set only by tests, sees the record shape of every pack
// cell read, so a test can show each shape was exercised.
var packVisitHook atomic.Pointer[func(Kind, changepoint.State)]

func notePackVisit(k Kind, s changepoint.State) {
	if f := packVisitHook.Load(); f != nil {
		(*f)(k, s)
	}
}
