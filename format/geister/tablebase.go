package geister

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"sync"
	"sync/atomic"

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
}

// Tablebase answers probes from the table files of one or more sources.
// Tables are opened on first use. A Tablebase is safe for concurrent use.
type Tablebase struct {
	sources []source.Source
	cache   *FrameCache
	slots   [NumMaterials]tableSlot

	mu     sync.Mutex
	closed bool
}

// tableSlot holds one material's table once it has been looked for.
type tableSlot struct {
	mu    sync.Mutex // serialises opening
	state atomic.Pointer[tableState]
}

// tableState is the outcome of looking for a material's table: a reader, or
// an error that will not change (no such file, a corrupt file).
type tableState struct {
	r    tableReader
	name string
	err  error
}

// Open returns a Tablebase reading the sources. For each material the
// sources are searched in order; within one source the seekable-zstd file
// (".bin.zst", then ".bin.zstd") is preferred over the raw ".bin", as the
// reference runtime does. Only the obsblk file names are read (the
// reference's legacy layout without "_obsblk" is not). The sources stay the
// caller's: Close does not close them.
func Open(opts Options, sources ...source.Source) (*Tablebase, error) {
	if len(sources) == 0 {
		return nil, errors.New("geister: Open needs at least one source")
	}
	for i, s := range sources {
		if s == nil {
			return nil, fmt.Errorf("geister: source %d is nil", i)
		}
	}
	tb := &Tablebase{sources: append([]source.Source(nil), sources...), cache: opts.Cache}
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
	for i := range tb.slots {
		s := &tb.slots[i]
		s.mu.Lock()
		if st := s.state.Swap(&tableState{err: fmt.Errorf("geister: tablebase closed: %w", source.ErrClosed)}); st != nil && st.r != nil {
			errs = append(errs, st.r.close())
		}
		s.mu.Unlock()
	}
	return errors.Join(errs...)
}

// table returns the reader of material m's table, opening it on first use.
func (tb *Tablebase) table(ctx context.Context, m Material) (*tableState, error) {
	s := &tb.slots[m.ID()]
	if st := s.state.Load(); st != nil {
		return st, st.err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if st := s.state.Load(); st != nil {
		return st, st.err
	}
	tb.mu.Lock()
	closed := tb.closed
	tb.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("geister: tablebase closed: %w", source.ErrClosed)
	}
	st, err := tb.find(ctx, m)
	if err != nil && !errors.Is(err, ErrNoTable) && !errors.Is(err, ErrCorrupt) {
		// A transport failure may go away: look again next time.
		return nil, err
	}
	if err != nil {
		st = &tableState{err: err}
	}
	s.state.Store(st)
	return st, st.err
}

// find looks for material m's table file in the sources.
func (tb *Tablebase) find(ctx context.Context, m Material) (*tableState, error) {
	base := m.FileName()
	names := [...]string{base + ".zst", base + ".zstd", base}
	for _, src := range tb.sources {
		for i, name := range names {
			obj, err := src.Open(ctx, name)
			if errors.Is(err, source.ErrNotFound) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("geister: open %s: %w", name, err)
			}
			var r tableReader
			if i < 2 {
				r, err = openZstd(ctx, obj, name, m, tb.cache)
			} else {
				r, err = openRaw(obj, name, m)
			}
			if err != nil {
				obj.Close()
				return nil, err
			}
			return &tableState{r: r, name: name}, nil
		}
	}
	return nil, fmt.Errorf("%w: %v (no %s[.zst] in any source)", ErrNoTable, m, base)
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
	m, idx, err := Rank(p)
	if err != nil {
		return 0, err
	}
	st, err := tb.table(ctx, m)
	if err != nil {
		return 0, err
	}
	var b [1]byte
	if err := st.r.read(ctx, b[:], idx); err != nil {
		return 0, err
	}
	return b[0], checkValue(b[0], m, idx)
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
