package chesstb

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"sync"

	"github.com/tbfs/tbfs/format/chesstb/internal/changepoint"
	"github.com/tbfs/tbfs/source"
)

// DecodedStore is a second tier of decoded blocks under the in-memory
// block cache, one that outlives the process (format/lz4store keeps one
// on local disk). Distance and pack blocks, whose LZMA decoding is most of
// a cold probe's work, are looked up there before they are decoded, and
// stored there whole once decoded. Load and Open must give exactly the
// bytes stored under key, or a miss; never other bytes.
type DecodedStore interface {
	// Load returns the block stored under key if it holds one of size
	// bytes (any size, for a negative size), intact.
	Load(key string, size int) ([]byte, bool)
	// Open is Load for a block read only where its lookups read: it
	// returns a reader of the block's bytes, safe for concurrent use,
	// that decodes only the chunks of chunk bytes that hold what is
	// read (a read of whole chunks going straight into the caller's
	// buffer), and the bytes of memory the reader holds. A ReadAt error
	// means the block must be decoded afresh.
	Open(key string, size int) (r io.ReaderAt, chunk int, held int64, ok bool)
	// Store keeps data under key; it is best effort.
	Store(key string, data []byte) error
}

// decodedKeys names a table's blocks in a DecodedStore. The name holds
// what tells one table file's content from another's: the object name, its
// size and version (where the transport names one) and the file's own
// XXH64 checksum from its last eight bytes, which the generator computes
// over everything before it. A table replaced by another, even of the same
// size on a transport that names no versions, gets other keys.
type decodedKeys struct {
	once   sync.Once
	prefix string // "" when the checksum could not be read
}

// decodedKeyFormat is part of every key, so a change in what a stored block
// holds (its layout, the format version) leaves old entries unmatched.
const decodedKeyFormat = "chesstb-decoded-v1"

// decodedKey returns the store key of block b of frame c, or false when the
// table has no store or its identity cannot be read.
func (t *tableFile) decodedKey(ctx context.Context, c int, b uint64) (string, bool) {
	if t.decoded == nil {
		return "", false
	}
	t.keys.once.Do(func() {
		size := t.obj.Size()
		if size < 8 {
			return
		}
		var tail [8]byte
		if n, _ := t.obj.ReadAt(ctx, tail[:], size-8, source.HintHeader); n < len(tail) {
			return
		}
		t.keys.prefix = fmt.Sprintf("%s\x00%s\x00%d\x00%q\x00%016x", decodedKeyFormat, t.name, size,
			source.VersionOf(t.obj), binary.LittleEndian.Uint64(tail[:]))
	})
	if t.keys.prefix == "" {
		return "", false
	}
	return fmt.Sprintf("%s\x00%d\x00%d", t.keys.prefix, c, b), true
}

// openLZMABlock returns block b of frame c, size bytes once decoded, ready
// for upTo and span: from the decoded store when it holds the block (read
// from there only where span and upTo are asked to read), otherwise a block
// to decode from its compressed bytes. With a store, a block is decoded
// whole at once and stored, so a later process finds it there.
func (t *tableFile) openLZMABlock(ctx context.Context, c int, b uint64, size int) (*lzmaBlock, error) {
	key, tiered := t.decodedKey(ctx, c, b)
	if tiered {
		if r, chunk, held, ok := t.decoded.Open(key, size); ok && chunk > 0 {
			// Should the store's bytes fail to decode, the block is
			// decoded again; no probe's cancellation may fail it for
			// later ones.
			bg := context.WithoutCancel(ctx)
			return tierLZMABlock(r, chunk, held, size, func() ([]byte, error) {
				z, err := t.lzmaDecoder(bg, c, b, size)
				if err != nil {
					return nil, err
				}
				return t.newLZMABlock(z, size).upTo(size)
			}), nil
		}
	}
	z, err := t.lzmaDecoder(ctx, c, b, size)
	if err != nil {
		return nil, err
	}
	lb := t.newLZMABlock(z, z.Size())
	if tiered {
		data, err := lb.upTo(size)
		if err != nil {
			return nil, err
		}
		// A block that cannot be stored is only not kept.
		_ = t.decoded.Store(key, data[:size])
	}
	return lb, nil
}

// walkKeySuffix names, beside a pack block's key, the block's walk index.
const walkKeySuffix = "\x00walk"

// tierWalkIndex gives pa, the fresh lookup index of pack block b of frame
// c, the walk index the decoded store keeps beside the block, so lookups in
// a block read back from the store walk no records; where the store has
// none (or one that does not fit the block: a miss, like a damaged block),
// it walks the whole block, decoding it all, and stores the index for the
// next process. Without a store it does nothing.
func (t *tableFile) tierWalkIndex(ctx context.Context, c int, b uint64, lb *lzmaBlock, pa *changepoint.Partial) {
	if lb.dec != nil {
		return
	}
	key, ok := t.decodedKey(ctx, c, b)
	if !ok {
		return
	}
	key += walkKeySuffix
	// The index needs only the block's header.
	if head, err := lb.span(0, changepoint.HeaderBytes); err == nil {
		head = head[:min(len(head), changepoint.HeaderBytes)]
		if index, ok := t.decoded.Load(key, -1); ok && pa.SetIndex(head, index) == nil {
			return
		}
	}
	if payload, err := lb.upTo(lb.size); err == nil && pa.WalkAll(payload[:lb.size]) == nil {
		// An index that cannot be stored is only not kept.
		_ = t.decoded.Store(key, pa.Index())
	}
}
