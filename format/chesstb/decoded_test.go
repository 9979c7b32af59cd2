package chesstb

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/format/lz4store"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// countingStore counts a DecodedStore's hits and misses, and the reads of
// opened blocks that failed (a damaged chunk), and remembers the keys asked
// for.
type countingStore struct {
	st                   *lz4store.Store
	hits, misses, stores atomic.Int64
	failedReads          atomic.Int64
	keys                 sync.Map // of string
}

func (c *countingStore) Load(key string, size int) ([]byte, bool) {
	c.keys.Store(key, true)
	data, ok := c.st.Load(key, size)
	if ok {
		c.hits.Add(1)
	} else {
		c.misses.Add(1)
	}
	return data, ok
}

func (c *countingStore) Open(key string, size int) (io.ReaderAt, int, int64, bool) {
	c.keys.Store(key, true)
	r, chunk, held, ok := c.st.Open(key, size)
	if !ok {
		c.misses.Add(1)
		return nil, 0, 0, false
	}
	c.hits.Add(1)
	return countingReader{r, c}, chunk, held, ok
}

type countingReader struct {
	r io.ReaderAt
	c *countingStore
}

func (r countingReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := r.r.ReadAt(p, off)
	if err != nil {
		r.c.failedReads.Add(1)
	}
	return n, err
}

func (c *countingStore) Store(key string, data []byte) error {
	c.stores.Add(1)
	return c.st.Store(key, data)
}

// shippedRows returns the rows of the reference's probe.tsv under base
// that the shipped tables answer.
func shippedRows(t *testing.T, base string) []oracleRow {
	t.Helper()
	var sel []oracleRow
	for _, r := range readOracle(t, filepath.Join(base, "oracle", "probe.tsv"), false) {
		if r.hasForm("shipped") {
			sel = append(sel, r)
		}
	}
	return sel
}

// TestDecodedStoreOracle answers the shipped rows of the reference's
// probe.tsv (the arbiter) four times, each through a fresh Tablebase over
// one decoded-block store on disk: while the store fills, from the filled
// store, after every file in it was damaged, and after every file was cut
// short. Each pass must give the reference's answers; the second must find
// its blocks in the store; in the third, a damaged head misses at once and
// a damaged chunk when it is read, and no file may serve other bytes than
// it was stored with; the fourth must find none (a damaged file is a miss,
// never a value).
func TestDecodedStoreOracle(t *testing.T) {
	base := testenv.Shared(t, "chesstb")
	sel := shippedRows(t, base)
	switch {
	case packRace && len(sel) > 12:
		// Every block is decoded whole under the race detector, twice.
		sel = sample(sel, 12)
	case testing.Short() && len(sel) > 300:
		sel = sample(sel, 300)
	}
	dir := t.TempDir()
	ctx := context.Background()
	pass := func(name string) *countingStore {
		t.Helper()
		st, err := lz4store.Open(dir, 4<<30)
		if err != nil {
			t.Fatal(err)
		}
		cs := &countingStore{st: st}
		tb := openDirs(t, Options{BlockCacheBytes: 1 << 30, DecodedBlocks: cs}, formDirs(base, "shipped")...)
		bad := 0
		for _, r := range sel {
			pos := r.position(t)
			if diffs := probeDiffs(ctx, tb, &pos, r.expectAll(t)); len(diffs) > 0 {
				if bad++; bad <= 20 {
					t.Errorf("%s: line %d %s: %s", name, r.line, r.fen, strings.Join(diffs, "; "))
				}
			}
		}
		if bad > 0 {
			t.Errorf("%s: %d of %d rows mismatch", name, bad, len(sel))
		}
		t.Logf("%s: %d hits, %d misses, %d stored", name, cs.hits.Load(), cs.misses.Load(), cs.stores.Load())
		return cs
	}
	fill := pass("filling")
	if fill.stores.Load() == 0 {
		t.Fatal("nothing was stored")
	}
	filled := pass("filled")
	if filled.hits.Load() != fill.stores.Load() || filled.misses.Load() != 0 {
		t.Errorf("filled: %d hits and %d misses, want %d hits", filled.hits.Load(), filled.misses.Load(), fill.stores.Load())
	}
	// What each key holds, to tell a block served from a damaged file.
	st, err := lz4store.Open(dir, 4<<30)
	if err != nil {
		t.Fatal(err)
	}
	sums := make(map[string]uint64)
	filled.keys.Range(func(k, _ any) bool {
		data, ok := st.Load(k.(string), -1)
		if !ok {
			t.Fatalf("%q does not load after the filled pass", k)
		}
		sums[k.(string)] = xxhash.Sum64(data)
		return true
	})
	// Damage every file: one byte flipped, at a different place in each, so
	// the header, the key, the length, the checksum and the LZ4 bytes are
	// all hit somewhere.
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range ents {
		path := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		at := []int{0, 20, 30, len(b) / 2, len(b) - 1, len(b) - 9}[i%6]
		if i%6 == 2 {
			at = len(b) - 1 - (i * 7919 % (len(b) / 2))
		}
		b[at] ^= 0x10
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A file damaged in its head misses when it is opened, one damaged in
	// a chunk when that chunk is read (if it is): the answers are the
	// reference's either way, a chunk read must have found damage, and
	// no file may now hold other bytes than its key's.
	if cs := pass("damaged"); cs.failedReads.Load() == 0 {
		t.Error("damaged: no chunk read found damage")
	}
	st, err = lz4store.Open(dir, 4<<30)
	if err != nil {
		t.Fatal(err)
	}
	for k, sum := range sums {
		if data, ok := st.Load(k, -1); ok && xxhash.Sum64(data) != sum {
			t.Errorf("damaged: %q loads other bytes", k)
		}
	}
	// Cut every file (the pass above stored the damaged ones afresh)
	// short, by a different length each: every one must miss.
	ents, err = os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range ents {
		path := filepath.Join(dir, e.Name())
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(path, info.Size()-1-int64(i*7919)%info.Size()); err != nil {
			t.Fatal(err)
		}
	}
	if cs := pass("truncated"); cs.hits.Load() != 0 {
		t.Errorf("truncated: %d of %d files still hit", cs.hits.Load(), len(ents))
	}
}

// failingStore is a store whose readers fail every third read, as chunks
// a faulty writer made would fail to decode after passing the checksum.
type failingStore struct {
	st            *lz4store.Store
	reads, failed atomic.Int64
}

func (f *failingStore) Load(key string, size int) ([]byte, bool) { return f.st.Load(key, size) }
func (f *failingStore) Store(key string, data []byte) error      { return f.st.Store(key, data) }

func (f *failingStore) Open(key string, size int) (io.ReaderAt, int, int64, bool) {
	r, chunk, held, ok := f.st.Open(key, size)
	if !ok {
		return nil, 0, 0, false
	}
	return failingReader{r, f}, chunk, held, true
}

type failingReader struct {
	r io.ReaderAt
	f *failingStore
}

func (r failingReader) ReadAt(p []byte, off int64) (int, error) {
	if r.f.reads.Add(1)%3 == 0 {
		r.f.failed.Add(1)
		return 0, errors.New("chunk does not decode")
	}
	return r.r.ReadAt(p, off)
}

// TestDecodedStoreReadFails answers the shipped rows of the reference's
// probe.tsv (the arbiter) from a filled store whose chunk reads fail now
// and then: each block whose read fails is decoded from its LZMA instead,
// with the same answers, concurrently (several probers on one block).
func TestDecodedStoreReadFails(t *testing.T) {
	base := testenv.Shared(t, "chesstb")
	sel := shippedRows(t, base)
	if len(sel) > 200 {
		sel = sample(sel, 200)
	}
	dir := t.TempDir()
	ctx := context.Background()
	st, err := lz4store.Open(dir, 4<<30)
	if err != nil {
		t.Fatal(err)
	}
	fill := openDirs(t, Options{BlockCacheBytes: 1 << 30, DecodedBlocks: st}, formDirs(base, "shipped")...)
	for _, r := range sel {
		pos := r.position(t)
		probeDiffs(ctx, fill, &pos, r.expectAll(t))
	}
	fs := &failingStore{st: st}
	tb := openDirs(t, Options{BlockCacheBytes: 1 << 30, DecodedBlocks: fs}, formDirs(base, "shipped")...)
	// Positions and expectations are read here: t.Fatal is for this
	// goroutine only.
	type row struct {
		r   oracleRow
		pos chess.Position
		exp packExpect
	}
	rs := make([]row, len(sel))
	for i, r := range sel {
		rs[i] = row{r, r.position(t), r.expectAll(t)}
	}
	var wg sync.WaitGroup
	for g := range 3 {
		wg.Go(func() {
			for i, x := range rs {
				if (i+g)%2 != 0 && g != 0 {
					continue
				}
				r, pos := x.r, x.pos
				if diffs := probeDiffs(ctx, tb, &pos, x.exp); len(diffs) > 0 {
					t.Errorf("line %d %s: %s", r.line, r.fen, strings.Join(diffs, "; "))
				}
			}
		})
	}
	wg.Wait()
	if fs.failed.Load() == 0 {
		t.Fatal("no read failed: the fallback was not exercised")
	}
	t.Logf("%d reads, %d failed", fs.reads.Load(), fs.failed.Load())
}
