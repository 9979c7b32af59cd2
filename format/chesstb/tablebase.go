package chesstb

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tbfs/tbfs/format/blockcache"
	"github.com/tbfs/tbfs/format/internal/tableslot"
	"github.com/tbfs/tbfs/source"
)

// DefaultBlockCacheBytes is the decoded-block budget used when
// Options.BlockCacheBytes is zero, the reference prober's default.
const DefaultBlockCacheBytes = 64 << 20

// Options tune a Tablebase.
type Options struct {
	// BlockCacheBytes bounds the decoded blocks held across every open
	// table. Zero means DefaultBlockCacheBytes.
	BlockCacheBytes int64
	// BlockCache, when set, is a cache shared with other readers (a Syzygy
	// reader, say), so one budget bounds them all; BlockCacheBytes is then
	// ignored.
	BlockCache *blockcache.Cache
	// SkipChecksums gives answers from a table without an integrity
	// manifest before its stored checksum is confirmed, as the reference
	// prober does. By default such a table's whole-file XXH64 is checked
	// in the background from the moment it is opened, and no answer is
	// read from it until the check has passed (checksum.go); with this
	// set only the structure is validated, and a flipped bit that decodes
	// to other valid-looking values becomes a wrong answer.
	SkipChecksums bool
	// Manifests is where tables' integrity manifests (one hash per block,
	// written by "tbprobe verify --manifest") are looked up, by the
	// table's object name plus ManifestSuffix. Nil means beside each
	// table, in the source that holds it. A table with a manifest has its
	// header checked against it on open and every block as it is read.
	Manifests source.Source
	// RequireManifest refuses, as corrupt, a table that has no manifest.
	RequireManifest bool
	// NoManifests ignores manifests altogether (for writing new ones).
	NoManifests bool
	// MissingTTL is how long "no source has this table", a source's
	// lasting refusal of it (a 403), or a table refused as corrupt on
	// open, is remembered before the sources are asked again, so a table
	// that a mirror briefly lacked (a 404 during an upload), or one
	// opened while its copy was still being written, is found again in a
	// long-running server. Zero means DefaultMissingTTL; negative, for
	// the life of the Tablebase. (The sources may cache misses too: see
	// source/listcache, whose TTL front ends set to the same value.)
	MissingTTL time.Duration
	// Now tells the time for MissingTTL; nil means time.Now.
	Now func() time.Time
	// DecodedBlocks, when set, keeps decoded distance and pack blocks
	// beyond the block cache, so a later process need not decode them
	// again (see DecodedStore).
	DecodedBlocks DecodedStore
}

// DefaultMissingTTL is MissingTTL's default, listcache.DefaultTTL's twin.
const DefaultMissingTTL = 5 * time.Minute

// Tablebase answers probes from the chesstb tables found in its sources. It
// is safe for concurrent use.
type Tablebase struct {
	srcs  []source.Source
	cache *blockcache.Cache
	opts  Options
	bg    *background // checksums running on their own
	pool  *blockPool  // buffers of decoded WDL blocks

	mu     sync.RWMutex // guards closed
	tables *tableslot.Set[tableKey, *tableFile]
	closed bool
	// inflight counts probes running, so Close can wait for them.
	inflight sync.WaitGroup
	// decodes counts, per kind, what probes decoded from LZMA.
	decodes [numKinds]decodeCounter
}

type tableKey struct {
	kind Kind
	mat  material
}

// forget drops f from the slot of key when the slot still holds it, drops
// its decoded blocks and closes it: its object was replaced, and the next
// probe that wants the table opens the new version.
func (tb *Tablebase) forget(key tableKey, f *tableFile) {
	if tb.tables.Forget(key, f) {
		tb.cache.DropFile(f.id)
		f.obj.Close()
	}
}

// Open returns a Tablebase over srcs, searched in order: for each table the
// first source holding it wins. In each source a table is looked up in the
// kind's folder (wdl/, dtz/, dtc/, dtm/, dtm50/) and then at the root, so a
// flat dump of files works too. Tables are opened when first needed. The
// sources stay owned by the caller and must outlive the Tablebase.
func Open(opts Options, srcs ...source.Source) (*Tablebase, error) {
	if len(srcs) == 0 {
		return nil, errors.New("chesstb: Open needs at least one source")
	}
	cache := opts.BlockCache
	budget := opts.BlockCacheBytes
	if budget == 0 {
		budget = DefaultBlockCacheBytes
	}
	if budget < 0 {
		return nil, fmt.Errorf("chesstb: negative BlockCacheBytes %d", budget)
	}
	if cache == nil {
		cache = blockcache.New(budget)
	}
	ttl := opts.MissingTTL
	if ttl == 0 {
		ttl = DefaultMissingTTL
	}
	return &Tablebase{
		srcs:   append([]source.Source(nil), srcs...),
		opts:   opts,
		cache:  cache,
		bg:     newBackground(),
		pool:   &blockPool{},
		tables: tableslot.New[tableKey, *tableFile](tableslot.Lasting(ttl, opts.Now), ErrClosed),
	}, nil
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
	tb.inflight.Wait()
	tb.bg.stop()
	var errs []error
	for _, f := range tb.tables.Close() {
		tb.cache.DropFile(f.id)
		if err := f.obj.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// enter registers a probe in flight; the caller must call the returned
// function when done.
func (tb *Tablebase) enter() (func(), error) {
	tb.mu.RLock()
	defer tb.mu.RUnlock()
	if tb.closed {
		return nil, ErrClosed
	}
	tb.inflight.Add(1)
	return tb.inflight.Done, nil
}

// CacheStats reports the decoded-block bytes held now and the most ever
// held; neither exceeds the budget.
func (tb *Tablebase) CacheStats() (used, peak int64) { return tb.cache.Stats() }

// table returns the open kind-k table of the canonical material m, or an
// error matching ErrNoTable when no source has it.
func (tb *Tablebase) table(ctx context.Context, k Kind, m material) (*tableFile, error) {
	key := tableKey{k, m}
	return tb.tables.Get(ctx, key, func(ctx context.Context) (*tableFile, error) {
		f, err := tb.openTable(ctx, k, m)
		if f != nil {
			f.forget = func() { tb.forget(key, f) }
		}
		return f, err
	})
}

// openTable finds and opens a table file, reading its header and offsets.
func (tb *Tablebase) openTable(ctx context.Context, k Kind, m material) (*tableFile, error) {
	base := m.name() + kindInfo[k].ext
	names := [2]string{kindInfo[k].dir + "/" + base, base}
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
				return nil, &FileError{File: name, Block: -1, Err: err}
			}
			f, err := tb.load(ctx, obj, name, k, m)
			if err == nil {
				err = tb.attachManifest(f, mf)
			} else {
				mf.Stop()
			}
			if err != nil {
				obj.Close()
				return nil, err
			}
			if f.sums == nil && !tb.opts.SkipChecksums {
				f.gate = newChecksumGate(tb.bg, obj)
			}
			return f, nil
		}
	}
	return nil, fmt.Errorf("%w: %s (%s)", ErrNoTable, base, k)
}

func (tb *Tablebase) load(ctx context.Context, obj source.Object, name string, k Kind, m material) (*tableFile, error) {
	cfg, err := newIndexConfig(m)
	if err != nil {
		return nil, &FileError{File: name, Block: -1, Err: err}
	}
	h, err := parseHeader(ctx, obj, k, cfg)
	if err != nil {
		return nil, &FileError{File: name, Block: -1, Err: err}
	}
	return &tableFile{id: blockcache.NewFileID(), kind: k, name: name, obj: obj, cfg: cfg, hdr: h, cache: tb.cache,
		decoded: tb.opts.DecodedBlocks, pool: tb.pool, decodes: &tb.decodes[k]}, nil
}
