package chesstb

import (
	"context"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/format/lz4store"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// TestDecodeStats probes rows of the shipped set's probe.tsv (the arbiter
// of the answers) and checks what DecodeStats counts: some LZMA decoded,
// never more of a block than it holds; the same probes again decode
// nothing more; and a Tablebase reading the blocks from a filled decoded
// store decodes nothing at all.
func TestDecodeStats(t *testing.T) {
	base := testenv.Shared(t, "chesstb")
	sel := shippedRows(t, base)
	if len(sel) > 150 {
		sel = sample(sel, 150)
	}
	ctx := context.Background()
	st, err := lz4store.Open(t.TempDir(), 4<<30)
	if err != nil {
		t.Fatal(err)
	}
	probeAll := func(tb *Tablebase) {
		for _, r := range sel {
			pos := r.position(t)
			if diffs := probeDiffs(ctx, tb, &pos, r.expectAll(t)); len(diffs) > 0 {
				t.Errorf("line %d %s: %s", r.line, r.fen, strings.Join(diffs, "; "))
			}
		}
	}
	stats := func(tb *Tablebase) (all [numKinds]DecodeStat) {
		for k := range numKinds {
			all[k] = tb.DecodeStats(k)
		}
		return all
	}
	for _, store := range []DecodedStore{nil, st} {
		tb := openDirs(t, Options{BlockCacheBytes: 1 << 30, DecodedBlocks: store}, formDirs(base, "shipped")...)
		probeAll(tb)
		first := stats(tb)
		var decoded int64
		for k, s := range first {
			if s.Decoded < 0 || s.Decoded > s.BlockBytes || (s.Blocks == 0) != (s.BlockBytes == 0) {
				t.Errorf("%s: %+v: want 0 <= decoded <= block bytes", Kind(k), s)
			}
			decoded += s.Decoded
		}
		if first[KindWDL] != (DecodeStat{}) {
			t.Errorf("WDL (LZ4) counted as LZMA: %+v", first[KindWDL])
		}
		if decoded == 0 {
			t.Fatal("no LZMA decoded")
		}
		probeAll(tb)
		if again := stats(tb); again != first {
			t.Errorf("the same probes again decoded more: %+v, then %+v", first, again)
		}
	}
	// The store is filled now: its blocks are read back, not decoded.
	tb := openDirs(t, Options{BlockCacheBytes: 1 << 30, DecodedBlocks: st}, formDirs(base, "shipped")...)
	probeAll(tb)
	if got := stats(tb); got != ([numKinds]DecodeStat{}) {
		t.Errorf("blocks from the decoded store counted as decoded: %+v", got)
	}
	if got := tb.DecodeStats(numKinds); got != (DecodeStat{}) {
		t.Errorf("DecodeStats of an unknown kind: %+v", got)
	}
}
