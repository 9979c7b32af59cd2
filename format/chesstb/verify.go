package chesstb

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tbfs/tbfs/format/chesstb/internal/changepoint"
)

// This file gives front ends (tbprobe ls, info, verify) a look at table
// files as files: what a header says, and whether every block decodes.
// Probing never needs it.

// TableInfo is what one table file's header says.
type TableInfo struct {
	Kind     Kind
	Material string // canonical material name, e.g. "KQKR"
	File     string // object name within its source, e.g. "dtz/KQKR.lzdtz"
	Size     int64  // file size in bytes
	// Colors is 1 when only White's frame is stored and Black's is its
	// colour flip (a symmetric material), else 2.
	Colors int
	// Frames describes the side-to-move halves: [0] White, [1] Black.
	Frames [2]FrameInfo
}

// FrameInfo describes one side-to-move half of a table file.
type FrameInfo struct {
	// Form is how the frame ships: "stored" (cells on file), "singular"
	// (one value for every cell), "dropped" (rebuilt by one-ply search at
	// probe time) or "mirrored" (the other colour's frame, colour-flipped).
	Form string
	// LossOnly and Relaxed mark the transcribed forms: only loss cells
	// priced, or WDL cells holding a bound.
	LossOnly, Relaxed bool
	// Blocks is the number of compressed blocks, SkippedBlocks those stored
	// empty (every cell drawn or illegal).
	Blocks, SkippedBlocks int64
	// DataBytes is the size of the compressed data, DataOffset where it
	// starts in the file.
	DataBytes, DataOffset int64
	// Ranks is the size of the rank table (distance kinds), EntryBytes the
	// bytes per stored cell (1 or 2) for them.
	Ranks, EntryBytes int
}

// BlockError names one block of a table file that failed to decode.
type BlockError struct {
	File  string
	Frame int // 0: White to move, 1: Black to move
	Block int64
	Err   error
}

// Error formats the failure as "file frame block n: cause".
func (e *BlockError) Error() string {
	return fmt.Sprintf("%s %s-to-move frame block %d: %v", e.File, [2]string{"white", "black"}[e.Frame], e.Block, e.Err)
}

// Unwrap returns the cause.
func (e *BlockError) Unwrap() error { return e.Err }

// ParseTableName recognises a table file name (with or without its kind's
// folder): "dtz/KQK.lzdtz" gives KindDTZ and "KQK". ok is false for any
// other name, including opposing-pair materials.
func ParseTableName(name string) (k Kind, material string, ok bool) {
	base := name[strings.LastIndexByte(name, '/')+1:]
	for k := range numKinds {
		mat, found := strings.CutSuffix(base, kindInfo[k].ext)
		if !found {
			continue
		}
		m, err := parseMaterial(mat)
		if err != nil || m.name() != mat || m.blackIsStronger() {
			return 0, "", false
		}
		return k, mat, true
	}
	return 0, "", false
}

// openNamed opens the kind-k table of the named canonical material.
func (tb *Tablebase) openNamed(ctx context.Context, k Kind, material string) (*tableFile, func(), error) {
	if k >= numKinds {
		return nil, nil, fmt.Errorf("chesstb: unknown table kind %d", k)
	}
	m, err := parseMaterial(material)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrBadPosition, err)
	}
	if m.blackIsStronger() {
		return nil, nil, fmt.Errorf("chesstb: %q is not a canonical material name (the tables call it %s)", material, m.flipped().name())
	}
	if m.name() != material {
		return nil, nil, fmt.Errorf("chesstb: %q is not a canonical material name (the tables call it %s)", material, m.name())
	}
	done, err := tb.enter()
	if err != nil {
		return nil, nil, err
	}
	t, err := tb.table(ctx, k, m)
	if err != nil {
		done()
		return nil, nil, err
	}
	return t, done, nil
}

// TableInfo reads the header of the kind-k table of a canonical material.
func (tb *Tablebase) TableInfo(ctx context.Context, k Kind, material string) (TableInfo, error) {
	t, done, err := tb.openNamed(ctx, k, material)
	if err != nil {
		return TableInfo{}, err
	}
	defer done()
	info := TableInfo{Kind: k, Material: material, File: t.name, Size: t.obj.Size(), Colors: t.hdr.colors}
	for c := range 2 {
		f := &t.hdr.frames[c]
		fi := &info.Frames[c]
		fi.LossOnly, fi.Relaxed = f.lossOnly, f.relaxed
		switch {
		case f.singular:
			fi.Form = "singular"
		case f.dropped:
			fi.Form = "dropped"
		case f.mirrored:
			fi.Form = "mirrored"
		default:
			fi.Form = "stored"
			fi.Blocks = int64(f.blockCnt)
			fi.DataBytes, fi.DataOffset = int64(f.dataSize), f.dataOff
			fi.Ranks, fi.EntryBytes = len(f.ranks), f.entryBytes
			for b := range f.blockCnt {
				if f.skipBlock(b) {
					fi.SkippedBlocks++
				}
			}
		}
	}
	return info, nil
}

// VerifyTable decodes every block of every stored frame of the kind-k table
// of a canonical material, and checks every decoded cell against the
// header (WDL codes, rank numbers, pack records). It returns the blocks
// that fail, each a *BlockError; the error return is for failures that
// stop the walk (a header that does not parse, a transport failure, a
// cancelled context). progress, when not nil, is called after each block
// with the blocks done and the total. Blocks are decoded outside the
// shared cache, so a verify run does not evict what probes use.
func (tb *Tablebase) VerifyTable(ctx context.Context, k Kind, material string, progress func(done, total int64)) ([]*BlockError, error) {
	t, done, err := tb.openNamed(ctx, k, material)
	if err != nil {
		return nil, err
	}
	defer done()
	var total, n int64
	for c := range 2 {
		if f := &t.hdr.frames[c]; f.stored() {
			total += int64(f.blockCnt)
		}
	}
	var bad []*BlockError
	for c := range 2 {
		f := &t.hdr.frames[c]
		if !f.stored() {
			continue
		}
		for b := range f.blockCnt {
			if err := ctx.Err(); err != nil {
				return bad, err
			}
			if !f.skipBlock(b) {
				err := t.verifyBlock(ctx, c, b)
				switch {
				case errors.Is(err, ErrCorrupt):
					bad = append(bad, &BlockError{File: t.name, Frame: c, Block: int64(b), Err: err})
				case err != nil:
					return bad, t.fileErr(int64(b), err)
				}
			}
			n++
			if progress != nil {
				progress(n, total)
			}
		}
	}
	return bad, nil
}

// verifyBlock decodes block b of frame c and checks its cells.
func (t *tableFile) verifyBlock(ctx context.Context, c int, b uint64) error {
	f := &t.hdr.frames[c]
	if t.kind.layered() {
		usize := f.usizes.get(b)
		if usize < 24 || usize > maxBlockBytes {
			return corruptf("decoded size %d", usize)
		}
		comp, err := t.readCompressed(ctx, c, b)
		if err != nil {
			return err
		}
		payload, err := decodeLZMA(comp, usize)
		if err != nil {
			return err
		}
		positions := f.blockPositions
		if b == f.blockCnt-1 && f.tailPositions != 0 {
			positions = f.tailPositions
		}
		if _, err := changepoint.Decode(payload, changepoint.Params{
			Layers:     packLayers(t.kind),
			EntryBytes: f.entryBytes,
			Positions:  int(positions),
			Ranks:      len(f.ranks),
		}); err != nil {
			return corruptf("%v", err)
		}
		return nil
	}
	comp, err := t.readCompressed(ctx, c, b)
	if err != nil {
		return err
	}
	size := f.blockBytes(b)
	if t.kind == KindWDL {
		data, err := decodeLZ4(comp, f.dict, size)
		if err != nil {
			return err
		}
		for i, v := range data {
			if v&0xF > storedIllegal || v>>4 > storedIllegal {
				return corruptf("byte %d holds WDL codes %d and %d, past %d", i, v&0xF, v>>4, storedIllegal)
			}
		}
		return nil
	}
	data, err := decodeLZMA(comp, size)
	if err != nil {
		return err
	}
	eb := f.entryBytes
	if eb != 1 && eb != 2 {
		return corruptf("%d bytes per cell", eb)
	}
	for i := 0; i+eb <= len(data); i += eb {
		rank := int(data[i])
		if eb == 2 {
			rank |= int(data[i+1]) << 8
		}
		if rank >= len(f.ranks) {
			return corruptf("cell %d: rank %d outside the %d-entry rank table", i/eb, rank, len(f.ranks))
		}
	}
	return nil
}

// VerifyChecksum reads the whole kind-k table file of a canonical material
// and compares its XXH64 with the one stored at its end. A mismatch matches
// ErrCorrupt; it does not say which block is damaged (VerifyTable does).
func (tb *Tablebase) VerifyChecksum(ctx context.Context, k Kind, material string) error {
	t, done, err := tb.openNamed(ctx, k, material)
	if err != nil {
		return err
	}
	defer done()
	if err := t.confirmChecksum(ctx); err != nil {
		return t.fileErr(-1, err)
	}
	return nil
}

// RecountWDL counts, for each side to move, the real positions of a
// canonical material's WDL table by class, as the generator's .info totals
// count them (every board placement once, illegal ones apart). counted[c]
// is false when frame c is not on file to count: a symmetric material's
// mirrored Black frame, or a dropped frame. A stored cell that contradicts
// the legality rule is an error matching ErrCorrupt.
func (tb *Tablebase) RecountWDL(ctx context.Context, material string) (counts [2]ColorCounts, counted [2]bool, err error) {
	t, done, err := tb.openNamed(ctx, KindWDL, material)
	if err != nil {
		return counts, counted, err
	}
	defer done()
	for c := range 2 {
		f := &t.hdr.frames[c]
		if !f.stored() && !f.singular {
			continue
		}
		if counts[c], err = t.recountWDL(ctx, c); err != nil {
			return counts, counted, err
		}
		counted[c] = true
	}
	return counts, counted, nil
}
