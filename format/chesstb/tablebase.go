package chesstb

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

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
	// VerifyChecksums makes every table's stored XXH64 checksum be checked
	// when the table is opened, which reads the whole file once. Without it
	// only the structure is validated: damaged compressed payload is caught
	// when it fails to decode, not when it decodes to other values.
	VerifyChecksums bool
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
	// DecodedBlocks, when set, keeps decoded distance and pack blocks
	// beyond the block cache, so a later process need not decode them
	// again (see DecodedStore).
	DecodedBlocks DecodedStore
}

// Tablebase answers probes from the chesstb tables found in its sources. It
// is safe for concurrent use.
type Tablebase struct {
	srcs  []source.Source
	cache *blockCache
	opts  Options

	mu     sync.RWMutex
	tables map[tableKey]*tableSlot
	closed bool
	// inflight counts probes running, so Close can wait for them.
	inflight sync.WaitGroup
}

type tableKey struct {
	kind Kind
	mat  material
}

// tableSlot opens one table at most once; a transient failure is not kept,
// so a later probe tries again.
type tableSlot struct {
	mu   sync.Mutex
	done atomic.Pointer[slotResult] // set once the outcome is final
}

type slotResult struct {
	file *tableFile
	err  error
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
	budget := opts.BlockCacheBytes
	if budget == 0 {
		budget = DefaultBlockCacheBytes
	}
	if budget < 0 {
		return nil, fmt.Errorf("chesstb: negative BlockCacheBytes %d", budget)
	}
	return &Tablebase{
		srcs:   append([]source.Source(nil), srcs...),
		opts:   opts,
		cache:  newBlockCache(budget),
		tables: make(map[tableKey]*tableSlot),
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
	var errs []error
	tb.mu.Lock()
	defer tb.mu.Unlock()
	for _, s := range tb.tables {
		if r := s.done.Load(); r != nil && r.file != nil {
			tb.cache.dropFile(r.file.id)
			if err := r.file.obj.Close(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	tb.tables = nil
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
func (tb *Tablebase) CacheStats() (used, peak int64) { return tb.cache.stats() }

// table returns the open kind-k table of the canonical material m, or an
// error matching ErrNoTable when no source has it.
func (tb *Tablebase) table(ctx context.Context, k Kind, m material) (*tableFile, error) {
	key := tableKey{k, m}
	tb.mu.RLock()
	s := tb.tables[key]
	tb.mu.RUnlock()
	if s == nil {
		tb.mu.Lock()
		if tb.tables == nil {
			tb.mu.Unlock()
			return nil, ErrClosed
		}
		s = tb.tables[key]
		if s == nil {
			s = &tableSlot{}
			tb.tables[key] = s
		}
		tb.mu.Unlock()
	}
	if r := s.done.Load(); r != nil {
		return r.file, r.err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.done.Load(); r != nil {
		return r.file, r.err
	}
	f, err := tb.openTable(ctx, k, m)
	if err != nil && (source.IsRetryable(err) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return nil, err
	}
	s.done.Store(&slotResult{file: f, err: err})
	return f, err
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
				mf.stop()
				continue
			}
			if err != nil {
				mf.stop()
				return nil, &FileError{File: name, Block: -1, Err: err}
			}
			f, err := tb.load(ctx, obj, name, k, m)
			if err == nil {
				err = tb.attachManifest(f, mf)
			} else {
				mf.stop()
			}
			if err != nil {
				obj.Close()
				return nil, err
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
	if tb.opts.VerifyChecksums {
		if err := verifyChecksum(ctx, obj); err != nil {
			return nil, &FileError{File: name, Block: -1, Err: err}
		}
	}
	return &tableFile{id: nextFileID.Add(1), kind: k, name: name, obj: obj, cfg: cfg, hdr: h, cache: tb.cache,
		decoded: tb.opts.DecodedBlocks}, nil
}
