package geister

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	geistertb "github.com/tbfs/tbfs/format/geister"
	"github.com/tbfs/tbfs/geister"
)

// Tables holds finished tables in memory, one byte per entry in obsblk
// order, by material. The zero value is empty and ready to use.
type Tables struct {
	t [geistertb.NumMaterials][]byte
}

// Get returns the values of m, or false when they are not held.
func (ts *Tables) Get(m geistertb.Material) ([]byte, bool) {
	if !m.Valid() {
		return nil, false
	}
	v := ts.t[m.ID()]
	return v, v != nil
}

// Set stores the values of m. It fails when their length is not the
// material's entry count, since every lookup trusts that length.
func (ts *Tables) Set(m geistertb.Material, values []byte) error {
	if !m.Valid() {
		return fmt.Errorf("%w: %v", geistertb.ErrNoMaterial, m)
	}
	if uint64(len(values)) != m.Entries() {
		return fmt.Errorf("geister: %v has %d entries, got %d values", m, m.Entries(), len(values))
	}
	ts.t[m.ID()] = values
	return nil
}

// Drop forgets the values of m so that their memory can be reused.
func (ts *Tables) Drop(m geistertb.Material) {
	if m.Valid() {
		ts.t[m.ID()] = nil
	}
}

// ErrMissingTable is matched by errors about a material a solve needs (one
// reached by a capture) whose table is not held.
var ErrMissingTable = errors.New("geister: table needed by the build is missing")

// Dependencies returns the materials that captures lead to from m and from
// its colour-swapped twin, which must be solved before the pair: the side to
// move takes an opponent blue or red, and the child is seen from the other
// side. Materials left without a blue or a red are decided by the rules and
// are not listed.
func Dependencies(m geistertb.Material) []geistertb.Material {
	var out []geistertb.Material
	add := func(d geistertb.Material) {
		if !d.Valid() {
			return
		}
		for _, o := range out {
			if o == d {
				return
			}
		}
		out = append(out, d)
	}
	for _, x := range []geistertb.Material{m, m.Swap()} {
		add(geistertb.Material{PB: x.OB - 1, PR: x.OR, OB: x.PB, OR: x.PR})
		add(geistertb.Material{PB: x.OB, PR: x.OR - 1, OB: x.PB, OR: x.PR})
	}
	return out
}

// Progress reports how far a solve has come.
type Progress struct {
	// Materials are the one or two materials being solved.
	Materials []geistertb.Material
	// Phase is "init" (every entry scanned once), "layer" (distances
	// assigned in increasing order) or "done".
	Phase string
	// Layer is the distance being assigned in the "layer" phase.
	Layer int
	// Done counts the entries scanned (init) or decided (layer, done);
	// Total is the number of entries of the materials.
	Done, Total uint64
	// Elapsed is the time since the solve began.
	Elapsed time.Duration
}

// Options tune a solve. The zero value uses every CPU and reports nothing.
type Options struct {
	// Workers is the number of goroutines; 0 means GOMAXPROCS.
	Workers int
	// Progress, when set, is called from one goroutine at a time after
	// each phase and layer.
	Progress func(Progress)
}

// chunk is the number of entries a worker takes at a time. It is a
// multiple of 64 so that no two workers share a word of a bitmap.
const chunk = 1 << 14

// solver holds the working state of one pair of materials in two bytes
// per entry, which is what the reference builder's two value arrays cost.
type solver struct {
	mats [2]geistertb.Material
	n    int // 1 when the material is its own twin, else 2
	// val holds, for a decided entry, its value. For an undecided entry
	// it holds the auxiliary value: for an entry with a capture into a
	// lost position, one more than the shortest such loss (the distance at
	// which it is a win unless a quicker win turns up first); for an entry
	// that can still be lost, the longest win among its capture children.
	// Undecided entries are set to 0 when the solve ends, so val becomes
	// the table.
	val [2][]byte
	// state packs one byte per entry (see the state* constants), four to
	// a word so that it can be updated atomically.
	state   [2][]uint32
	tabs    *Tables
	workers int
	rankers []geistertb.Ranker // one per worker
	start   time.Time
	report  func(Progress)
	decided atomic.Uint64
	// touched sums the bytes expand loads ahead of its atomic updates,
	// only so that the compiler keeps those loads.
	touched [2]atomic.Uint64

	mu         sync.Mutex // serialises report calls
	lastReport time.Time
}

// An entry's state byte: the decided flag, the mark of the layer being
// decided, and in the low six bits the number of moves without a capture
// whose child is not yet known to be a win (at most 32), or noLoss when a
// capture already shows the entry cannot be lost, so its count is never
// needed.
const (
	stateDecided = 0x80
	stateMarked  = 0x40
	stateCount   = 0x3f
	noLoss       = 0x3f
)

// Bytes of working memory per entry: the value byte and the state byte.
const solveBytesPerEntry = 2

// Solve computes the tables of m and of its colour-swapped twin and stores
// both in tabs, which must already hold every table of Dependencies(m). The
// values are final when Solve returns nil; on cancellation tabs is left
// unchanged and ctx's error is returned.
func Solve(ctx context.Context, tabs *Tables, m geistertb.Material, opts Options) error {
	if !m.Valid() {
		return fmt.Errorf("%w: %v", geistertb.ErrNoMaterial, m)
	}
	for _, d := range Dependencies(m) {
		if _, ok := tabs.Get(d); !ok {
			return fmt.Errorf("%w: %v (captured into from %v)", ErrMissingTable, d, m)
		}
	}
	s := newSolver(tabs, opts.Workers)
	s.start, s.report = time.Now(), opts.Progress
	s.mats[0], s.n = m, 1
	if sw := m.Swap(); sw != m {
		s.mats[1], s.n = sw, 2
	}
	for k := 0; k < s.n; k++ {
		e := s.mats[k].Entries()
		s.val[k] = make([]byte, e)
		// The state is not part of the result: it lives outside the
		// garbage-collected heap and is returned to the system as soon as
		// the solve ends, so the next pair does not wait for a collection.
		words, free, err := allocWords((e + 3) / 4)
		if err != nil {
			return err
		}
		defer free()
		s.state[k] = words
	}
	if err := s.run(ctx); err != nil {
		return err
	}
	for k := 0; k < s.n; k++ {
		s.finish(k)
	}
	for k := 0; k < s.n; k++ {
		if err := tabs.Set(s.mats[k], s.val[k]); err != nil {
			return err
		}
	}
	return nil
}

// newSolver returns a solver reading captured-into tables from tabs and
// running on workers goroutines (0 means GOMAXPROCS).
func newSolver(tabs *Tables, workers int) *solver {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	return &solver{tabs: tabs, workers: workers, rankers: make([]geistertb.Ranker, workers)}
}

// cursor walks a material's table in index order, unranking each
// observation once for all its colourings (its BlockSize entries).
type cursor struct {
	rk    *geistertb.Ranker
	m     geistertb.Material
	bs    uint64
	outer uint64
	blk   []geister.Position
}

func newCursor(rk *geistertb.Ranker, m geistertb.Material) *cursor {
	return &cursor{rk: rk, m: m, bs: m.BlockSize(), outer: ^uint64(0)}
}

// at returns the canonical position of entry i, as model.Unrank does.
func (c *cursor) at(i uint64) (geister.Position, error) {
	o := i / c.bs
	if o != c.outer {
		var err error
		if c.blk, err = c.rk.UnrankBlock(c.m, o, c.blk[:0]); err != nil {
			c.outer = ^uint64(0)
			return geister.Position{}, err
		}
		c.outer = o
	}
	return c.blk[i-o*c.bs], nil
}

// total is the number of entries being solved.
func (s *solver) total() uint64 {
	var t uint64
	for k := 0; k < s.n; k++ {
		t += uint64(len(s.val[k]))
	}
	return t
}

func (s *solver) progress(phase string, layer int, done uint64) {
	if s.report == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastReport = time.Now()
	s.report(Progress{Materials: s.mats[:s.n], Phase: phase, Layer: layer, Done: done, Total: s.total(), Elapsed: time.Since(s.start)})
}

// progressSometimes reports progress from inside a phase, at most twice a
// second.
func (s *solver) progressSometimes(phase string, layer int, done uint64) {
	if s.report == nil {
		return
	}
	s.mu.Lock()
	due := time.Since(s.lastReport) >= 500*time.Millisecond
	s.mu.Unlock()
	if due {
		s.progress(phase, layer, done)
	}
}

// slot returns the index into val of material m, or -1 when m is not one of
// the pair.
func (s *solver) slot(m geistertb.Material) int {
	if m == s.mats[0] {
		return 0
	}
	if s.n == 2 && m == s.mats[1] {
		return 1
	}
	return -1
}

// other returns the slot of the twin of slot k, where moves without a
// capture lead.
func (s *solver) other(k int) int {
	if s.n == 1 {
		return 0
	}
	return 1 - k
}

// parallel runs fn over [0, n) in chunks on the solver's workers and
// returns the first error; it stops handing out chunks once ctx is done.
func (s *solver) parallel(ctx context.Context, n uint64, fn func(w int, lo, hi uint64) error) error {
	var next atomic.Uint64
	var wg sync.WaitGroup
	errs := make([]error, s.workers)
	for w := 0; w < s.workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				if err := ctx.Err(); err != nil {
					errs[w] = err
					return
				}
				lo := next.Add(chunk) - chunk
				if lo >= n {
					return
				}
				if err := fn(w, lo, min(lo+chunk, n)); err != nil {
					errs[w] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// captureValue returns the value of c, the position after a capture, from
// c's side to move: by the rules when a side has run out of a colour, else
// from the finished table of c's material.
func (s *solver) captureValue(rk *geistertb.Ranker, c geister.Position) (uint8, error) {
	m := geistertb.MaterialOf(c)
	if !m.Valid() {
		v, ok := c.Terminal()
		if !ok {
			return 0, fmt.Errorf("geister: position %v of material %v is neither in a table nor decided", c, m)
		}
		return v, nil
	}
	t, ok := s.tabs.Get(m)
	if !ok {
		return 0, fmt.Errorf("%w: %v", ErrMissingTable, m)
	}
	_, idx, _, err := rk.Rank(c)
	if err != nil {
		return 0, err
	}
	return t[idx], nil
}

// maxTracker keeps the largest value seen by several workers.
type maxTracker struct {
	mu sync.Mutex
	v  int
}

func (t *maxTracker) see(v int) {
	t.mu.Lock()
	t.v = max(t.v, v)
	t.mu.Unlock()
}

func (t *maxTracker) get() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.v
}

func (s *solver) run(ctx context.Context) error {
	var assigned, pending maxTracker
	// Init: decide what the rules and the captures alone decide, and set
	// up the counters.
	var scanned atomic.Uint64
	for k := 0; k < s.n; k++ {
		m := s.mats[k]
		val, state := s.val[k], s.state[k]
		err := s.parallel(ctx, uint64(len(val)), func(w int, lo, hi uint64) error {
			rk := &s.rankers[w]
			cur := newCursor(rk, m)
			hiVal, hiCap := 0, 0
			decided := uint64(0)
			for i := lo; i < hi; i++ {
				p, err := cur.at(i)
				if err != nil {
					return err
				}
				v, st, err := s.initEntry(rk, p)
				if err != nil {
					return err
				}
				// Chunks are multiples of 4 entries, so no other worker
				// touches this entry's state word now.
				val[i] = v
				state[i/4] |= st << (8 * (i % 4))
				if st == stateDecided {
					hiVal = max(hiVal, int(v))
					decided++
				} else if st == noLoss && v%2 == 1 {
					hiCap = max(hiCap, int(v))
				}
			}
			assigned.see(hiVal)
			pending.see(hiCap)
			s.decided.Add(decided)
			s.progressSometimes("init", 0, scanned.Add(hi-lo))
			return nil
		})
		if err != nil {
			return err
		}
		s.progress("init", 0, scanned.Load())
	}

	// Layers: every entry of value d is decided in layer d (or earlier,
	// when its value is already certain), from the entries of value d-1
	// and from the auxiliary values.
	for d := 2; d <= geistertb.Horizon; d++ {
		if d-1 > assigned.get() && d > pending.get() {
			break
		}
		before := s.decided.Load()
		// Phase 1: the parents of the entries of value d-1. After a loss
		// they are won in d plies; after a win their counters drop, and a
		// parent whose every child is now a known win is lost. Either way
		// the parent is marked, and its value written only in phase 2,
		// after every read.
		for k := 0; k < s.n; k++ {
			err := s.parallel(ctx, uint64(len(s.val[k])), func(w int, lo, hi uint64) error {
				return s.expand(&s.rankers[w], k, lo, hi, d)
			})
			if err != nil {
				return err
			}
		}
		// Phase 2: write the values found.
		for k := 0; k < s.n; k++ {
			err := s.parallel(ctx, uint64(len(s.val[k])), func(_ int, lo, hi uint64) error {
				assigned.see(s.decideLayer(k, lo, hi, d))
				return nil
			})
			if err != nil {
				return err
			}
		}
		if d%2 == 1 && s.decided.Load() > before {
			assigned.see(d)
		}
		s.progress("layer", d, s.decided.Load())
	}
	s.progress("done", 0, s.decided.Load())
	return nil
}

// initEntry returns the first value byte and state of position p: what
// the rules and the captures alone decide, and the counter of its moves
// without a capture. An undecided entry's value byte is its auxiliary
// value; with noLoss, an odd one is the distance at which a capture into a
// loss wins.
func (s *solver) initEntry(rk *geistertb.Ranker, p geister.Position) (uint8, uint32, error) {
	if tv, ok := p.Terminal(); ok {
		return tv, stateDecided, nil
	}
	var mv [32]geister.Move
	var caps [32]uint8
	moves := p.Moves(mv[:0])
	same, nc, minLoss, maxWin, draw := 0, 0, 0, 0, false
	for _, mo := range moves {
		if mo.Capture == geister.Empty {
			same++
			continue
		}
		if p.CapturesLastBlue(mo) {
			return 1, stateDecided, nil
		}
		t, err := s.captureValue(rk, p.Play(mo))
		if err != nil {
			return 0, 0, err
		}
		caps[nc] = t
		nc++
		switch {
		case t == 0:
			draw = true
		case t%2 == 0:
			if minLoss == 0 || int(t) < minLoss {
				minLoss = int(t)
			}
		default:
			maxWin = max(maxWin, int(t))
		}
	}
	switch {
	case same == 0:
		// Nothing moves into this entry's twin without a capture, so no
		// counter of it is ever needed.
		if v := geistertb.Backup(caps[:nc], false); v != 0 {
			return v, stateDecided, nil
		}
		return 0, noLoss, nil
	case minLoss > 0:
		if minLoss+1 <= geistertb.Horizon {
			return uint8(minLoss + 1), noLoss, nil
		}
		return 0, noLoss, nil
	case draw:
		return 0, noLoss, nil
	}
	return uint8(maxWin), uint32(same), nil
}

// expand handles the entries of slot k in [lo, hi) whose value is d-1: it
// visits every parent move into them, in the orientation the parent's entry
// stores, so that each move of an entry's own move list (computed from
// Unrank) is visited exactly once, as its counter expects.
func (s *solver) expand(rk *geistertb.Ranker, k int, lo, hi uint64, d int) error {
	v := uint8(d - 1)
	val, state := s.val[k], s.state[k]
	pk := s.other(k)
	pstate := s.state[pk]
	won := v%2 == 1
	// Only mirror-fixed materials have observations that are their own
	// mirror image.
	fixed := [2]bool{s.mats[0].MirrorFixed(), s.mats[1].MirrorFixed()}
	var buf [64]step
	visit := func(idx uint64) { visitParent(&pstate[idx/4], 8*(idx%4), won) }
	// Parent indices are gathered and visited in batches. Every visit
	// ends in an atomic update, which on amd64 waits for all earlier
	// memory accesses, so visited one by one each parent would cost a
	// full cache miss on tables far larger than the caches; a first pass
	// of plain loads over the batch lets those misses overlap.
	var batch [256]uint64
	nb := 0
	var touched uint32
	flush := func() {
		for _, idx := range batch[:nb] {
			touched += atomic.LoadUint32(&pstate[idx/4])
		}
		for _, idx := range batch[:nb] {
			visit(idx)
		}
		nb = 0
	}
	add := func(idx uint64) {
		if nb == len(batch) {
			flush()
		}
		batch[nb] = idx
		nb++
	}
	defer func() {
		// Keep the touching loads from being optimised away.
		s.touched[k].Add(uint64(touched))
	}()
	cur := newCursor(rk, s.mats[k])
	// rep has v in every byte, to skip eight entries at a time when none
	// of them holds v.
	rep := uint64(v) * 0x0101010101010101
	for i := lo; i < hi; i++ {
		if i+8 <= hi {
			if x := binary.LittleEndian.Uint64(val[i:]) ^ rep; (x-0x0101010101010101)&^x&0x8080808080808080 == 0 {
				i += 7
				continue
			}
		}
		if val[i] != v || atomic.LoadUint32(&state[i/4])>>(8*(i%4))&stateDecided == 0 {
			continue
		}
		x, err := cur.at(i)
		if err != nil {
			return err
		}
		// The entry stands for x and its mirror image unless the observed
		// board is its own mirror image. In the first case the parents of
		// the mirror image are the mirror images of x's parents, so x's
		// parents cover both, each parent entry once per move: an
		// asymmetric parent's entry stands for it and its image, and a
		// parent on a symmetric board has an entry of its own and so does
		// its image.
		both := !fixed[k] || !symmetricObservation(x)
		// Parents by a capture are in a larger material.
		f := turn(x)
		for _, st := range f.parentSteps(buf[:0]) {
			q, idx, mirrored := f.parent(rk, st.to, st.from)
			if !both {
				if !mirrored {
					add(idx)
				}
				continue
			}
			add(idx)
			if fixed[pk] && symmetricObservation(q) {
				_, j, _, err := rk.Rank(q.Mirror())
				if err != nil {
					return err
				}
				add(j)
			}
		}
	}
	flush()
	return nil
}

// visitParent updates the state byte at shift in word of a parent of an
// entry of the layer's previous value, a win for that entry's side to move
// when won: the parent's counter drops, and it is marked, lost, when no
// child is left that is not a win. After a loss the parent is marked, won.
// It reports whether it changed the state and whether it marked the
// parent.
func visitParent(word *uint32, shift uint64, won bool) (changed, marked bool) {
	// Only counters and marks change in this phase, so the decided flag
	// and noLoss seen here stay true while the entry is handled.
	st := atomic.LoadUint32(word) >> shift & 0xff
	if st&stateDecided != 0 {
		return false, false
	}
	if !won {
		atomic.OrUint32(word, stateMarked<<shift)
		return true, true
	}
	if st&stateCount == noLoss {
		return false, false
	}
	if atomic.AddUint32(word, ^(uint32(1)<<shift-1))>>shift&stateCount == 0 {
		// Every child is a win. Only this caller saw the counter reach 0,
		// so the entry is marked once.
		atomic.OrUint32(word, stateMarked<<shift)
		return true, true
	}
	return true, false
}

// symmetricObservation reports whether p's board with the opponent colours
// hidden is its own mirror image.
func symmetricObservation(p geister.Position) bool {
	m := p.Mirror()
	return m.OwnBlue == p.OwnBlue && m.OwnRed == p.OwnRed && m.OppBlue|m.OppRed == p.OppBlue|p.OppRed
}

// decideLayer writes the values of layer d found for the entries of slot k
// in [lo, hi) and returns the largest. In an odd layer those are wins in d
// plies: the undecided entries marked in phase 1 and those whose capture
// into a loss wins in d plies (auxiliary value d and noLoss), taken only
// now that every quicker win is written. In an even layer they are the
// marked losses, lost one ply after their longest win: the child of value
// d-1 or a capture's (the auxiliary value), if that is within the horizon.
func (s *solver) decideLayer(k int, lo, hi uint64, d int) int {
	top, decided := decideRange(s.val[k], s.state[k], lo, hi, d)
	s.decided.Add(decided)
	return top
}

// decideRange is decideLayer over the entries [lo, hi) of val and state,
// lo a multiple of 4; it returns the largest value written and the number
// of entries decided.
func decideRange(val []byte, state []uint32, lo, hi uint64, d int) (int, uint64) {
	var decided uint64
	odd := d%2 == 1
	top := 0
	rep := uint32(uint8(d)) * 0x01010101
	// lo and hi are multiples of 4 except at the end of the table.
	for w := lo / 4; w < (hi+3)/4; w++ {
		word := state[w]
		// Most words hold no mark; in an even layer nothing else is
		// decided, and in an odd layer only an auxiliary value of d.
		if word&(stateMarked*0x01010101) == 0 {
			if !odd {
				continue
			}
			if i := w * 4; i+4 <= hi {
				if x := binary.LittleEndian.Uint32(val[i:]) ^ rep; (x-0x01010101)&^x&0x80808080 == 0 {
					continue
				}
			}
		}
		for j := uint64(0); j < 4; j++ {
			i := w*4 + j
			if i >= hi {
				break
			}
			st := word >> (8 * j) & 0xff
			if st&stateDecided != 0 {
				continue
			}
			marked := st&stateMarked != 0
			var nv int
			switch {
			case odd && (marked || (val[i] == uint8(d) && st&stateCount == noLoss)):
				nv = d
			case !odd && marked:
				nv = max(d, int(val[i])+1)
			}
			st &^= stateMarked
			if nv != 0 && nv <= geistertb.Horizon {
				val[i] = uint8(nv)
				st |= stateDecided
				top = max(top, nv)
				decided++
			}
			word = word&^(0xff<<(8*j)) | st<<(8*j)
		}
		state[w] = word
	}
	return top, decided
}

// finish turns slot k's values into the table: an entry still undecided
// is no result within the horizon.
func (s *solver) finish(k int) {
	val, state := s.val[k], s.state[k]
	for i := range val {
		if state[i/4]>>(8*(i%4))&stateDecided == 0 {
			val[i] = 0
		}
	}
}
