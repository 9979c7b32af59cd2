package chesstb

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/tbfs/tbfs/format/chesstb/internal/changepoint"
)

// This file reads cells of the two changepoint packs, DTM50 (.lzdtm50) and
// DTC (.lzdtc). Like a distance block, a pack block is decompressed only as
// far as the probes so far have needed (packBlock); once complete it is
// parsed into changepoint.Block, whose prefix index makes a lookup
// independent of the block size, and kept in the shared block cache in that
// form.

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
	params := changepoint.Params{
		Layers:     packLayers(t.kind),
		EntryBytes: f.entryBytes,
		Positions:  int(positions),
		Ranks:      len(f.ranks),
	}
	v, ok := t.cache.peek(key)
	if !ok {
		v, err = t.cache.getValue(ctx, key, func() (any, int64, error) {
			usize := f.usizes.get(b)
			if usize < 24 || usize > maxBlockBytes {
				return nil, 0, corruptf("decoded size %d", usize)
			}
			comp, err := t.readCompressed(ctx, c, b)
			if err != nil {
				return nil, 0, err
			}
			if len(comp) < lzmaPropsSize {
				return nil, 0, corruptf("LZMA block of %d bytes has no properties", len(comp))
			}
			z, err := newLZMADecoder(comp[:len(comp)-lzmaPropsSize], comp[len(comp)-lzmaPropsSize:])
			if err != nil {
				return nil, 0, corruptf("LZMA: %v", err)
			}
			pb := &packBlock{lzmaBlock: lzmaBlock{buf: make([]byte, usize), dec: z}, params: params}
			// The budget counts the payload, the coder state and the
			// compressed bytes it keeps until the block is complete, and
			// what the parsed block adds then (at most its prefix index
			// and draw-end hints).
			extra := int64(positions/256+1)*24 + int64(positions/64+2)*16 + 256
			return pb, int64(usize) + int64(len(comp)) + z.memSize() + extra, nil
		})
		if err != nil {
			if _, ok := err.(*FileError); !ok {
				err = t.fileErr(int64(b), err)
			}
			return rec, false, err
		}
	}
	rec, err = v.(*packBlock).lookup(int(idx - b*f.blockPositions))
	if err != nil {
		if !errors.Is(err, ErrCorrupt) {
			err = corruptf("%v", err)
		}
		return rec, false, t.fileErr(int64(b), err)
	}
	return rec, true, nil
}

// packBlock is a pack block decompressed as far as probes have needed. A
// probe decompresses up to the bytes its position's record lives in (the
// state vector up to it, then its stream up to the record) and a later probe
// resumes from there; once a probe has needed the whole payload, the block
// is parsed and checked in full and later lookups use its prefix index.
type packBlock struct {
	lzmaBlock
	params  changepoint.Params
	partial atomic.Int32 // lookups so far that found the block incomplete
	once    sync.Once
	full    atomic.Pointer[changepoint.Block]
	err     error // the full parse's failure, set inside once
}

// maxPartialLookups is how many lookups may find a block incomplete before
// one completes it. Measured on BenchmarkProbeCold, more partial lookups win
// a little more at the 64 MiB budget but lose more at 4 GiB, where most
// blocks are needed whole in the end.
const maxPartialLookups = 1

// lookup returns the record of position pos of the block.
func (pb *packBlock) lookup(pos int) (changepoint.Record, error) {
	if blk := pb.full.Load(); blk != nil {
		return blk.Lookup(pos)
	}
	size := len(pb.buf)
	have := min(int(pb.done.Load()), size)
	if pb.partial.Add(1) > maxPartialLookups && have < size {
		// A partial lookup walks the block from its start; a block asked
		// for again is worth completing once for its prefix index.
		if _, err := pb.upTo(size); err != nil {
			return changepoint.Record{}, err
		}
		have = size
	}
	for have < size {
		rec, need, err := changepoint.LookupPrefix(pb.buf[:have], size, pb.params, pos)
		if err != nil || need == 0 {
			return rec, err
		}
		if need <= have {
			return rec, corruptf("pack block parser asked for %d bytes, holding %d", need, have)
		}
		if _, err := pb.upTo(need); err != nil {
			return rec, err
		}
		have = min(int(pb.done.Load()), size)
	}
	pb.once.Do(func() {
		blk, err := changepoint.Decode(pb.buf, pb.params)
		if err != nil {
			pb.err = corruptf("%v", err)
			return
		}
		pb.full.Store(blk)
	})
	if pb.err != nil {
		return changepoint.Record{}, pb.err
	}
	return pb.full.Load().Lookup(pos)
}

// packValue maps a record's rank to the stored value. Decode has checked
// every rank of the block against the table, and LookupPrefix those of the
// record it returns, so this cannot fail.
func packValue(f *frame, rank uint16) uint16 { return f.ranks[rank] }

// packVisitHook, set only by tests, sees the record shape of every pack
// cell read, so a test can show each shape was exercised.
var packVisitHook atomic.Pointer[func(Kind, changepoint.State)]

func notePackVisit(k Kind, s changepoint.State) {
	if f := packVisitHook.Load(); f != nil {
		(*f)(k, s)
	}
}
