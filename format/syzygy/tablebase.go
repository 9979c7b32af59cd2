package syzygy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/format/blockcache"
	"github.com/tbfs/tbfs/format/internal/sidecar"
	"github.com/tbfs/tbfs/format/internal/tableslot"
	"github.com/tbfs/tbfs/source"
)

// DefaultBlockCacheBytes is the decoded-block budget used when
// Options.BlockCacheBytes is zero.
const DefaultBlockCacheBytes = 64 << 20

// maxChecksumRuns is how many whole-file checksum runs read at once.
const maxChecksumRuns = 4

// DefaultMissingTTL is MissingTTL's default.
const DefaultMissingTTL = 5 * time.Minute

// Options tune a Tablebase.
type Options struct {
	// BlockCacheBytes bounds the decoded blocks held across every open
	// table. Zero means DefaultBlockCacheBytes.
	BlockCacheBytes int64
	// BlockCache, when set, is a cache shared with other readers (chesstb),
	// so one budget bounds them all; BlockCacheBytes is then ignored.
	BlockCache *blockcache.Cache
	// MissingTTL is how long "no source has this table", a source's
	// lasting refusal of it (a 403), or a table refused as corrupt on
	// open (one opened while its copy was still being written, say), is
	// remembered before the sources are asked again. Zero means
	// DefaultMissingTTL; negative, for the life of the Tablebase.
	MissingTTL time.Duration
	// Now tells the time for MissingTTL; nil means time.Now.
	Now func() time.Time
	// SkipChecksums gives answers from a table before its embedded
	// checksum is confirmed, as Fathom does. By default the whole file's
	// checksum is computed in the background from the moment the table is
	// opened and no answer is read from it until the check has passed
	// (gate.go); with this set a flipped bit that decodes to other
	// valid-looking values becomes a wrong answer.
	SkipChecksums bool
	// Manifests is where tables' integrity manifests (written by "tbprobe
	// verify --manifest", see Manifest) are looked up, by the table's
	// object name plus ManifestSuffix. Nil means beside each table, in the
	// source that holds it. A table with a manifest that matches it checks
	// every page it reads and needs no whole-file checksum first; one whose
	// manifest is missing, stale or damaged falls back to the whole-file
	// check.
	Manifests source.Source
	// RequireManifest refuses, as corrupt, a table that has no manifest it
	// can use.
	RequireManifest bool
	// NoManifests ignores manifests altogether (for writing new ones).
	NoManifests bool
}

// Tablebase answers probes from the Syzygy tables found in its sources. It
// is safe for concurrent use.
type Tablebase struct {
	srcs  []source.Source
	cache *blockcache.Cache
	opts  Options

	mu     sync.RWMutex // guards closed
	tables *tableslot.Set[tableKey, *tableFile]
	closed bool
	// Probes in flight, counted without a lock: Close sets closing, and
	// the last probe out (or Close itself, when none is in) closes idle.
	inflight atomic.Int64
	closing  atomic.Bool
	idle     chan struct{}
	idleOnce sync.Once

	// recent remembers the open table of each material probed lately, keyed
	// by the position's own (uncanonical) material, so a probe skips the
	// canonical name and the locked map.
	recent [256]atomic.Pointer[recentTable]

	// openedLocal and openedRemote say whether any table opened so far
	// lives in a source that reads locally or one that fetches (see
	// openAhead).
	openedLocal, openedRemote atomic.Bool

	// checksumRuns bounds the checksum runs at work at once.
	checksumRuns chan struct{}

	// Background checksum runs; Close cancels and waits for them.
	bgCtx    context.Context
	bgCancel context.CancelFunc
	bgWG     sync.WaitGroup
}

type tableKey struct {
	kind Kind
	mat  material // canonical
}

// Open returns a Tablebase over srcs, searched in order: for each table the
// first source holding it wins. A table is looked up in the kind's folder
// (wdl/ or dtz/) and then at the root of each source. Tables are opened
// when first needed. The sources stay owned by the caller and must outlive
// the Tablebase.
func Open(opts Options, srcs ...source.Source) (*Tablebase, error) {
	if len(srcs) == 0 {
		return nil, errors.New("syzygy: Open needs at least one source")
	}
	cache := opts.BlockCache
	if cache == nil {
		budget := opts.BlockCacheBytes
		if budget == 0 {
			budget = DefaultBlockCacheBytes
		}
		if budget < 0 {
			return nil, fmt.Errorf("syzygy: negative BlockCacheBytes %d", budget)
		}
		cache = blockcache.New(budget)
	}
	ttl := opts.MissingTTL
	if ttl == 0 {
		ttl = DefaultMissingTTL
	}
	tb := &Tablebase{
		srcs:   append([]source.Source(nil), srcs...),
		cache:  cache,
		opts:   opts,
		tables: tableslot.New[tableKey, *tableFile](tableslot.Lasting(ttl, opts.Now), ErrClosed),
		idle:   make(chan struct{}),

		checksumRuns: make(chan struct{}, maxChecksumRuns),
	}
	tb.bgCtx, tb.bgCancel = context.WithCancel(context.Background())
	return tb, nil
}

// Close waits for probes in flight, then releases every open table file.
// Probes started after Close fail with ErrClosed.
func (tb *Tablebase) Close() error {
	tb.mu.Lock()
	if tb.closed {
		tb.mu.Unlock()
		return nil
	}
	tb.closed = true
	tb.mu.Unlock()
	tb.closing.Store(true)
	if tb.inflight.Load() == 0 {
		tb.idleOnce.Do(func() { close(tb.idle) })
	}
	<-tb.idle
	tb.bgCancel()
	tb.bgWG.Wait()
	var errs []error
	for _, f := range tb.tables.Close() {
		tb.cache.DropFile(f.id)
		if err := f.obj.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// enter registers a probe in flight; the caller must call tb.exit when
// done.
func (tb *Tablebase) enter() error {
	tb.inflight.Add(1)
	if tb.closing.Load() {
		tb.exit()
		return ErrClosed
	}
	return nil
}

// exit ends a probe that enter registered.
func (tb *Tablebase) exit() {
	if tb.inflight.Add(-1) == 0 && tb.closing.Load() {
		tb.idleOnce.Do(func() { close(tb.idle) })
	}
}

// CacheStats reports the decoded-block bytes held now and the most ever
// held (in the shared cache, when Options.BlockCache set one: then across
// every reader using it).
func (tb *Tablebase) CacheStats() (used, peak int64) { return tb.cache.Stats() }

// recentTable is one entry of Tablebase.recent.
type recentTable struct {
	key     uint64
	file    *tableFile
	swapped bool
}

// materialKey packs a position's men counts (and the table kind) into one
// word: four bits per piece type and side.
func materialKey(pos *chess.Position, k Kind) uint64 {
	key := uint64(k)
	for c := chess.White; c <= chess.Black; c++ {
		for pt := chess.Pawn; pt <= chess.Queen; pt++ {
			key = key<<4 | uint64(pos.Pieces(c, pt).Count())
		}
	}
	return key
}

// recentSlot picks key's entry in Tablebase.recent.
func recentSlot(key uint64) uint64 { return (key * 0x9e3779b97f4a7c15) >> 56 }

// tableFor returns the kind-k table for pos's material and whether pos's
// White is the table's second side.
func (tb *Tablebase) tableFor(ctx context.Context, pos *chess.Position, k Kind) (*tableFile, bool, error) {
	key := materialKey(pos, k)
	slot := &tb.recent[recentSlot(key)]
	// A probe handed a table just before another forgot it stores it
	// here after the forgetting cleared the entries: skip a forgotten
	// one, or its closed object would fail every later probe.
	if r := slot.Load(); r != nil && r.key == key && !r.file.forgotten.Load() {
		return r.file, r.swapped, nil
	}
	m := materialOf(pos)
	cm, swapped := m.canonical()
	f, err := tb.table(ctx, k, cm)
	if err != nil {
		return nil, false, err
	}
	slot.Store(&recentTable{key: key, file: f, swapped: swapped})
	return f, swapped, nil
}

// table returns the open kind-k table of canonical material m.
func (tb *Tablebase) table(ctx context.Context, k Kind, m material) (*tableFile, error) {
	key := tableKey{k, m}
	return tb.tables.Get(ctx, key, func(ctx context.Context) (*tableFile, error) {
		f, err := tb.openTable(ctx, k, m)
		if err != nil {
			return nil, err
		}
		if _, remote := f.obj.(source.Prefetcher); remote {
			tb.openedRemote.Store(true)
		} else {
			tb.openedLocal.Store(true)
		}
		f.cache = tb.cache
		f.forget = func() { tb.forget(key, f) }
		if f.sums == nil && !tb.opts.SkipChecksums {
			f.gate = tb.newChecksumGate(f.obj)
		}
		return f, nil
	})
}

// forget drops f from its slot, once a read found its object replaced, so
// the next probe opens the new version.
func (tb *Tablebase) forget(key tableKey, f *tableFile) {
	if tb.tables.Forget(key, f) {
		f.forgotten.Store(true)
		for i := range tb.recent {
			if r := tb.recent[i].Load(); r != nil && r.file == f {
				tb.recent[i].CompareAndSwap(r, nil)
			}
		}
		tb.cache.DropFile(f.id)
		f.obj.Close()
	}
}

// openTable finds and opens a table file, with its manifest when it has
// one that can be trusted.
func (tb *Tablebase) openTable(ctx context.Context, k Kind, m material) (*tableFile, error) {
	base := m.name() + k.Ext()
	names := [2]string{k.String() + "/" + base, base}
	for _, src := range tb.srcs {
		for _, name := range names {
			mf := tb.fetchManifest(ctx, src, name)
			obj, err := src.Open(ctx, name)
			if errors.Is(err, source.ErrNotFound) {
				mf.Settle()
				continue
			}
			if err != nil {
				mf.Stop()
				return nil, &FileError{File: name, Err: err}
			}
			f, err := tb.openChecked(ctx, obj, mf, name, k, m)
			if err != nil {
				obj.Close()
				var fe *FileError
				if errors.As(err, &fe) {
					return nil, err
				}
				return nil, &FileError{File: name, Err: err}
			}
			return f, nil
		}
	}
	return nil, fmt.Errorf("%w: %s", ErrNoTable, base)
}

// openChecked opens the table in obj. With a manifest that matches obj's
// size and version, every read goes through it, and the file's embedded
// checksum is read alongside the header to bind the manifest to the file;
// a manifest that does not bind is dropped (and the header read again
// unchecked when the manifest's pages refused it), so the table falls
// back to the whole-file gate.
func (tb *Tablebase) openChecked(ctx context.Context, obj source.Object, mf *sidecar.Fetch, name string, k Kind, m material) (*tableFile, error) {
	sums, why, err := usableManifest(obj, mf)
	if err != nil {
		return nil, fmt.Errorf("manifest %s: %w", mf.Name, err)
	}
	if sums == nil {
		if tb.opts.RequireManifest {
			return nil, corruptf("no usable manifest: %v", why)
		}
		f, err := openFile(ctx, obj, name, k, m)
		if f != nil {
			f.sumsIgnored = why
		}
		return f, err
	}
	type bound struct{ why, err error }
	tail := make(chan bound, 1)
	go func() {
		why, err := bindManifest(ctx, obj, sums)
		tail <- bound{why, err}
	}()
	rd := &checkedObject{Object: obj, m: sums}
	f, ferr := openFile(ctx, rd, name, k, m)
	b := <-tail
	switch {
	case b.err != nil:
		return nil, b.err
	case b.why == nil:
		if ferr != nil {
			return nil, ferr
		}
		f.obj, f.sums, f.sumsName = obj, sums, mf.Name
		return f, nil
	case tb.opts.RequireManifest:
		return nil, corruptf("manifest %s does not describe this file: %v", mf.Name, b.why)
	}
	why = fmt.Errorf("%s: %w", mf.Name, b.why)
	if ferr != nil {
		f, ferr = openFile(ctx, obj, name, k, m)
		if ferr != nil {
			return nil, ferr
		}
	}
	f.obj, f.rd, f.sumsIgnored = obj, obj, why
	return f, nil
}

// checkChanged forgets the file when err says its object was replaced.
func (t *tableFile) checkChanged(err error) {
	if err != nil && t.forget != nil && errors.Is(err, source.ErrChanged) {
		t.forget()
	}
}

// lookup returns the stored value of position idx of sub-table e (part
// number pn within the file, for the cache key).
func (t *tableFile) lookup(ctx context.Context, e *encInfo, pn int, idx uint64) (uint16, error) {
	if err := t.gate.wait(ctx); err != nil {
		t.checkChanged(err)
		return 0, &FileError{File: t.name, Err: err}
	}
	d := e.pairs
	if d.constant {
		return d.constVal, nil
	}
	if idx >= e.size {
		return 0, &FileError{File: t.name, Err: corruptf("position %d past the table (%d)", idx, e.size)}
	}
	block, lit, err := d.locate(ctx, idx)
	if err != nil {
		var fe *FileError
		if errors.As(err, &fe) {
			return 0, err
		}
		return 0, &FileError{File: t.name, Err: err}
	}
	memo := &t.last[pn]
	if b := memo.Load(); b != nil && b.block == block && !b.evicted.Load() {
		return d.value(b, lit), nil
	}
	key := blockcache.Key{File: t.id, Frame: uint8(pn), Block: uint64(block)}
	v, ok := t.cache.Peek(key)
	if !ok {
		v, err = t.cache.GetValue(ctx, key, func() (any, int64, error) {
			b, err := t.readBlock(ctx, d, block)
			if err != nil {
				return nil, 0, err
			}
			b.memo = memo
			return b, b.bytes(), nil
		})
		if err != nil {
			return 0, err
		}
	}
	b := v.(*decodedBlock)
	if !b.evicted.Load() {
		memo.Store(b)
	}
	return d.value(b, lit), nil
}

// readBlock fetches and decodes one block.
func (t *tableFile) readBlock(ctx context.Context, d *pairsData, block uint32) (*decodedBlock, error) {
	n := int64(1) << d.blockSize
	off := d.dataOff + int64(block)<<d.blockSize
	buf := make([]byte, n)
	got, err := t.rd.ReadAt(ctx, buf, off, source.HintData)
	if err != nil && !(errors.Is(err, io.EOF) && int64(got) == n) {
		t.checkChanged(err)
		return nil, &FileError{File: t.name, Err: err}
	}
	b, err := d.decodeBlock(ctx, buf, block)
	if err != nil {
		var fe *FileError
		if errors.As(err, &fe) {
			return nil, err
		}
		return nil, &FileError{File: t.name, Err: err}
	}
	return b, nil
}
