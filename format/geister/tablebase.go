package geister

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"strings"
	"sync"
	"time"

	"github.com/tbfs/tbfs/format/internal/tableslot"
	"github.com/tbfs/tbfs/source"
)

// Options configures a Tablebase.
type Options struct {
	// Cache holds decoded frames of compressed tables. Several Tablebases
	// may share one. When nil, Open makes one of CacheBytes bytes.
	Cache *FrameCache
	// CacheBytes is the budget of the cache Open makes when Cache is nil;
	// 0 means DefaultCacheBytes.
	CacheBytes int64
	// NoVerify skips checking each table against the SHA256SUMS manifest
	// of its source (see SumsFile) when it is first opened. The check
	// reads the whole table once; without it a damaged table may answer
	// with a wrong value.
	NoVerify bool
	// NoManifests ignores the frame manifests beside the tables (see
	// ManifestSuffix), so a table is checked whole against its sums: for
	// rewriting manifests, which a stale one would otherwise refuse.
	NoManifests bool
	// Manifests is where the tables' frame manifests (written by "tbprobe
	// geister verify --manifest") are looked up, by the material's raw
	// file name plus ManifestSuffix, as chesstb.Options.Manifests: for
	// tables in a location that holds none, such as a read-only bucket.
	// Nil means beside each table, in the source that holds it. A table
	// with no manifest there is checked whole against its sums, as
	// without one; a manifest there that does not describe the table (or
	// gives it a sha256 its sums do not) is ErrCorrupt, as beside it. The
	// source stays the caller's: Close does not close it.
	Manifests source.Source
	// MissingTTL is how long "no source has this table", a source's
	// lasting refusal of it (a 403), or a table refused as corrupt (short,
	// or not matching its sums), is remembered before the sources are
	// asked again, so a table uploaded to a bucket after a long-running
	// server first missed it, or mended after it was refused, is found
	// without a restart. Zero means DefaultMissingTTL; negative, for the
	// life of the Tablebase.
	MissingTTL time.Duration
	// Now tells the time for MissingTTL; nil means time.Now.
	Now func() time.Time
}

// DefaultMissingTTL is MissingTTL's default, chesstb's and syzygy's too.
const DefaultMissingTTL = 5 * time.Minute

// Tablebase answers probes from the table files of one or more sources.
// Tables are opened on first use. A Tablebase is safe for concurrent use.
type Tablebase struct {
	sources  []source.Source
	sums     []sumsSlot // one per source
	noVerify bool
	// noManifests ignores frame manifests (Options.NoManifests).
	noManifests bool
	// manifests is Options.Manifests: nil for beside each table.
	manifests source.Source
	cache     *FrameCache
	policy    tableslot.Policy
	slots     [NumMaterials]tableslot.Slot[*tableState]

	mu     sync.Mutex
	closed bool
}

// tableState is a material's open table.
type tableState struct {
	r    tableReader
	name string
	// legacy marks a file in the legacy layout (named without
	// "_obsblk"), indexed by LegacyRank instead of Rank.
	legacy bool
	// source is the index of the source holding the file; verified is
	// set when the whole file was checked against its sums on open.
	source   int
	verified bool
	// forget, set by the Tablebase, drops the table from its slot once a
	// read finds its object replaced (see read).
	forget func()
}

// read fills p with the entries from off. A read that finds the table's
// object replaced since it was opened forgets the table, so the next
// probe opens the new version; every read of a table goes through here.
func (st *tableState) read(ctx context.Context, p []byte, off uint64) error {
	err := st.r.read(ctx, p, off)
	if err != nil && st.forget != nil && errors.Is(err, source.ErrChanged) {
		st.forget()
	}
	return err
}

// index returns p's entry in this table's layout.
func (st *tableState) index(p Position) (uint64, error) {
	var idx uint64
	var err error
	if st.legacy {
		_, idx, err = LegacyRank(p)
	} else {
		_, idx, err = Rank(p)
	}
	return idx, err
}

// Open returns a Tablebase reading the sources. For each material the
// sources are searched in order; within one source the preference is the
// reference runtime's: obsblk files ("id000_pb1pr1ob1or1_obsblk.bin") over
// legacy-layout files named without "_obsblk", and within each the
// seekable-zstd file (".bin.zst", then ".bin.zstd") over the raw ".bin".
// Files are found by their exact names, so a file whose id does not match
// its counts is never read. The sources stay the caller's: Close does not
// close them.
func Open(opts Options, sources ...source.Source) (*Tablebase, error) {
	if len(sources) == 0 {
		return nil, errors.New("geister: Open needs at least one source")
	}
	for i, s := range sources {
		if s == nil {
			return nil, fmt.Errorf("geister: source %d is nil", i)
		}
	}
	tb := &Tablebase{
		sources:     append([]source.Source(nil), sources...),
		sums:        make([]sumsSlot, len(sources)),
		noVerify:    opts.NoVerify,
		noManifests: opts.NoManifests,
		manifests:   opts.Manifests,
		cache:       opts.Cache,
	}
	ttl := opts.MissingTTL
	if ttl == 0 {
		ttl = DefaultMissingTTL
	}
	tb.policy = tableslot.Lasting(ttl, opts.Now)
	if tb.cache == nil {
		budget := opts.CacheBytes
		if budget <= 0 {
			budget = DefaultCacheBytes
		}
		tb.cache = NewFrameCache(budget)
	}
	return tb, nil
}

// Cache returns the frame cache the Tablebase uses.
func (tb *Tablebase) Cache() *FrameCache { return tb.cache }

// Close closes every table file opened so far. Probes after Close fail.
func (tb *Tablebase) Close() error {
	tb.mu.Lock()
	if tb.closed {
		tb.mu.Unlock()
		return nil
	}
	tb.closed = true
	tb.mu.Unlock()
	var errs []error
	closed := errClosed()
	for i := range tb.slots {
		if st, ok := tb.slots[i].Close(closed); ok {
			errs = append(errs, st.r.close())
		}
	}
	return errors.Join(errs...)
}

// table returns the reader of material m's table, opening it on first use.
func (tb *Tablebase) table(ctx context.Context, m Material) (*tableState, error) {
	slot := &tb.slots[m.ID()]
	return slot.Get(ctx, &tb.policy, func(ctx context.Context) (*tableState, error) {
		tb.mu.Lock()
		closed := tb.closed
		tb.mu.Unlock()
		if closed {
			return nil, errClosed()
		}
		st, err := tb.find(ctx, m)
		if st != nil {
			st.forget = func() { tb.forget(slot, st) }
		}
		return st, err
	})
}

// forget drops st from its slot when the slot still holds it, closing its
// reader (which drops its decoded frames: they are the old version's) and
// forgetting its source's sums, which were likely replaced with it.
func (tb *Tablebase) forget(slot *tableslot.Slot[*tableState], st *tableState) {
	if slot.Forget(st) {
		st.r.close()
		tb.sums[st.source].reset()
	}
}

// errClosed is the failure of a probe after Close.
func errClosed() error { return fmt.Errorf("geister: tablebase closed: %w", source.ErrClosed) }

// find looks for material m's table file in the sources.
func (tb *Tablebase) find(ctx context.Context, m Material) (*tableState, error) {
	obsblk := m.FileName()
	legacy := strings.TrimSuffix(obsblk, "_obsblk.bin") + ".bin"
	candidates := [...]struct {
		name   string
		zstd   bool
		legacy bool
	}{
		{obsblk + ".zst", true, false},
		{obsblk + ".zstd", true, false},
		{obsblk, false, false},
		{legacy + ".zst", true, true},
		{legacy + ".zstd", true, true},
		{legacy, false, true},
	}
	for si, src := range tb.sources {
		for _, c := range candidates {
			obj, err := src.Open(ctx, c.name)
			if errors.Is(err, source.ErrNotFound) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("geister: open %s: %w", c.name, err)
			}
			entries := m.Entries()
			if c.legacy {
				entries = m.LegacyEntries()
			}
			var r tableReader
			if c.zstd {
				r, err = openZstd(ctx, obj, c.name, entries, tb.cache)
			} else {
				r, err = openRaw(obj, c.name, entries)
			}
			if err != nil {
				obj.Close()
				return nil, err
			}
			verified := false
			if !tb.noVerify {
				if verified, err = tb.check(ctx, si, m, obj, c.name, r, c.legacy); err != nil {
					r.close()
					if errors.Is(err, ErrCorrupt) {
						// The table may have been replaced before its
						// sums were: when the refusal expires, read
						// them again too.
						tb.sums[si].reset()
					}
					return nil, err
				}
			}
			return &tableState{r: r, name: c.name, legacy: c.legacy, source: si, verified: verified}, nil
		}
	}
	return nil, fmt.Errorf("%w: %v (no %s[.zst] in any source)", ErrNoTable, m, obsblk)
}

// Has reports whether a table for m can be read, opening it if needed. It
// returns false with a nil error when no source has one.
func (tb *Tablebase) Has(ctx context.Context, m Material) (bool, error) {
	if !m.Valid() {
		return false, fmt.Errorf("%w: %v", ErrNoMaterial, m)
	}
	_, err := tb.table(ctx, m)
	if errors.Is(err, ErrNoTable) {
		return false, nil
	}
	return err == nil, err
}

// TableName returns the name of the file that serves material m, opening
// it if needed.
func (tb *Tablebase) TableName(ctx context.Context, m Material) (string, error) {
	if !m.Valid() {
		return "", fmt.Errorf("%w: %v", ErrNoMaterial, m)
	}
	st, err := tb.table(ctx, m)
	if err != nil {
		return "", err
	}
	return st.name, nil
}

// checkValue rejects a stored byte outside the format's range.
func checkValue(v uint8, m Material, idx uint64) error {
	if v > Horizon {
		return fmt.Errorf("%w: %v entry %d holds %d, beyond the %d-ply horizon", ErrCorrupt, m, idx, v, Horizon)
	}
	return nil
}

// validate checks p cheaply and gives a detailed error when it is wrong.
func validate(p Position) error {
	all := p.OwnBlue | p.OwnRed | p.OppBlue | p.OppRed
	n := bits.OnesCount64(p.OwnBlue) + bits.OnesCount64(p.OwnRed) + bits.OnesCount64(p.OppBlue) + bits.OnesCount64(p.OppRed)
	if all&^BoardMask != 0 || bits.OnesCount64(all) != n || n > 16 {
		return p.Validate()
	}
	m := p.Material()
	if m.PB > 4 || m.PR > 4 || m.OB > 4 || m.OR > 4 {
		return p.Validate()
	}
	return nil
}

// DTW returns the stored byte for p (FORMAT.md §2): 0 no result within the
// horizon, odd v the side to move wins in v plies, even v it loses in v
// plies. Terminal positions are answered by the rules before any table is
// read (1 win, 2 loss), so they need no table. Errors match
// ErrInvalidPosition, ErrNoTable, ErrCorrupt or a source error.
func (tb *Tablebase) DTW(ctx context.Context, p Position) (uint8, error) {
	if err := validate(p); err != nil {
		return 0, err
	}
	if v, ok := p.Terminal(); ok {
		return v, nil
	}
	m := p.Material()
	if !m.Valid() {
		return 0, fmt.Errorf("%w: %v (every count must be 1..4)", ErrNoMaterial, m)
	}
	st, err := tb.table(ctx, m)
	if err != nil {
		return 0, err
	}
	idx, err := st.index(p)
	if err != nil {
		return 0, err
	}
	var b [1]byte
	if err := st.read(ctx, b[:], idx); err != nil {
		return 0, err
	}
	if err := checkValue(b[0], m, idx); err != nil {
		return 0, err
	}
	if err := checkWinsInOne(b[0], p, m, idx); err != nil {
		return 0, err
	}
	return b[0], nil
}

// Outcome is the game-theoretic result for the side to move.
type Outcome int8

// The three outcomes. Draw also covers results beyond the horizon.
const (
	Loss Outcome = -1
	Draw Outcome = 0
	Win  Outcome = 1
)

// String returns "win", "loss" or "draw".
func (o Outcome) String() string {
	switch o {
	case Win:
		return "win"
	case Loss:
		return "loss"
	}
	return "draw"
}

// Result is a probed value with its meaning.
type Result struct {
	// Value is the stored byte (see DTW).
	Value uint8
	// Outcome is the result for the side to move.
	Outcome Outcome
	// Plies is the distance to the end with best play, the final ply
	// included; 0 for a draw.
	Plies int
}

// ResultOf interprets a stored byte.
func ResultOf(v uint8) Result {
	switch {
	case v == 0:
		return Result{}
	case v%2 == 1:
		return Result{Value: v, Outcome: Win, Plies: int(v)}
	}
	return Result{Value: v, Outcome: Loss, Plies: int(v)}
}

// Probe returns p's value with its outcome and distance.
func (tb *Tablebase) Probe(ctx context.Context, p Position) (Result, error) {
	v, err := tb.DTW(ctx, p)
	if err != nil {
		return Result{}, err
	}
	return ResultOf(v), nil
}

// Available returns the materials whose tables can be read, in id order,
// opening each of Candidates.
func (tb *Tablebase) Available(ctx context.Context) ([]Material, error) {
	candidates, err := tb.Candidates(ctx)
	if err != nil {
		return nil, err
	}
	var out []Material
	for _, m := range candidates {
		ok, err := tb.Has(ctx, m)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, m)
		}
	}
	return out, nil
}

// Candidates returns, in id order and without opening them, the materials
// some source lists a table file of (any name Open looks for). Sources that
// can list (source.Lister) are listed once; when one cannot, every
// material is a candidate.
func (tb *Tablebase) Candidates(ctx context.Context) ([]Material, error) {
	listed := map[string]bool{}
	for _, src := range tb.sources {
		entries, err := source.List(ctx, src, "")
		if errors.Is(err, source.ErrUnsupported) {
			return Materials(), nil
		}
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			listed[e.Name] = true
		}
	}
	var out []Material
	for _, m := range materials {
		base := m.FileName()
		legacy := strings.TrimSuffix(base, "_obsblk.bin") + ".bin"
		for _, name := range []string{base + ".zst", base + ".zstd", base, legacy + ".zst", legacy + ".zstd", legacy} {
			if listed[name] {
				out = append(out, m)
				break
			}
		}
	}
	return out, nil
}
