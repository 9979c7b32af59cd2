package geister

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	geistertb "github.com/tbfs/tbfs/format/geister"
	"github.com/tbfs/tbfs/geister"
)

// PartStats reports what a partitioned solve moved between memory and its
// spill files.
type PartStats struct {
	// Parts is the number of parts of the pair; Resident the most held in
	// memory at once.
	Parts, Resident int
	// SpillWritten and SpillRead count the bytes written to and read from
	// the spill files.
	SpillWritten, SpillRead int64
}

// partBuf is one part's working state in memory: its value bytes and its
// state words, as in the in-memory solver.
type partBuf struct {
	k, p  int
	val   []byte
	state []uint32
	pins  int
	dirty atomic.Bool // changed since it was last written
	used  uint64      // last use, for eviction
}

// partSolver solves a pair with one red a side part by part, holding at
// most capacity parts in memory and the rest in one spill file per
// material.
type partSolver struct {
	*solver
	lay   [2]partLayout
	bytes [2]int64 // bytes of one part's state in the spill file
	dir   string
	files [2]*os.File

	mu       sync.Mutex // guards the part cache below
	resident [2][NumParts]*partBuf
	onDisk   [2][NumParts]bool
	held     int
	capacity int
	clock    uint64
	stats    PartStats

	// present has a bit for every value decided in a part, pending one for
	// every auxiliary value of a noLoss entry (a capture win waiting for
	// its layer), so that layers skip the parts they cannot change; marked
	// says a part got a mark in the layer's first phase.
	present [2][NumParts][4]atomic.Uint64
	pending [2][NumParts][4]atomic.Uint64
	marked  [2][NumParts]atomic.Bool
}

// PartMemory returns the memory one part of m's pair takes in a
// partitioned solve.
func PartMemory(m geistertb.Material) int64 {
	l := newPartLayout(m)
	return int64(l.size + (l.size+3)/4*4)
}

// minResidentParts is the fewest parts a partitioned solve can work with:
// per worker, one part and the parts its parents are in.
const minResidentParts = 6

// SolveParts computes the tables of m and its twin like Solve, for a pair
// with one red a side (Partitionable), holding at most memory bytes of
// working state in memory and spilling the other parts to files in dir
// (removed before it returns). The values are returned part by part
// through emit, once per material, in part order, and not stored in tabs,
// which must hold the tables of Dependencies(m).
func SolveParts(ctx context.Context, tabs *Tables, m geistertb.Material, memory int64, dir string, opts Options, emit func(m geistertb.Material, p int, values []byte) error) (PartStats, error) {
	if !Partitionable(m) {
		return PartStats{}, fmt.Errorf("geister: %v cannot be built in parts: it needs one red a side", m)
	}
	for _, d := range Dependencies(m) {
		if _, ok := tabs.Get(d); !ok {
			return PartStats{}, fmt.Errorf("%w: %v (captured into from %v)", ErrMissingTable, d, m)
		}
	}
	s := &partSolver{solver: newSolver(tabs, opts.Workers), dir: dir}
	s.start, s.report = time.Now(), opts.Progress
	s.mats[0], s.n = m, 1
	if sw := m.Swap(); sw != m {
		s.mats[1], s.n = sw, 2
	}
	for k := 0; k < s.n; k++ {
		s.lay[k] = newPartLayout(s.mats[k])
		s.bytes[k] = PartMemory(s.mats[k])
		f, err := os.CreateTemp(dir, fmt.Sprintf(".%s.spill*", s.mats[k]))
		if err != nil {
			return s.stats, err
		}
		defer f.Close()
		defer os.Remove(f.Name())
		s.files[k] = f
	}
	s.capacity = int(memory / max(s.bytes[0], s.bytes[s.n-1]))
	if s.capacity < minResidentParts*s.workers {
		return s.stats, fmt.Errorf("%w: a partitioned solve of %v needs at least %d bytes", ErrMemory, m, int64(minResidentParts*s.workers)*max(s.bytes[0], s.bytes[s.n-1]))
	}
	s.stats.Parts = NumParts * s.n
	if err := s.run(ctx); err != nil {
		return s.stats, err
	}
	for k := 0; k < s.n; k++ {
		for p := 0; p < NumParts; p++ {
			b, err := s.acquire(k, p)
			if err != nil {
				return s.stats, err
			}
			finishRange(b.val, b.state)
			err = emit(s.mats[k], p, b.val)
			s.release(b)
			if err != nil {
				return s.stats, err
			}
		}
	}
	return s.stats, nil
}

// finishRange sets the undecided entries of val to 0.
func finishRange(val []byte, state []uint32) {
	for i := range val {
		if state[i/4]>>(8*(i%4))&stateDecided == 0 {
			val[i] = 0
		}
	}
}

// acquire returns part p of slot k in memory, pinned until release.
func (s *partSolver) acquire(k, p int) (*partBuf, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock++
	if b := s.resident[k][p]; b != nil {
		b.pins++
		b.used = s.clock
		return b, nil
	}
	b, err := s.slotFor(k)
	if err != nil {
		return nil, err
	}
	b.k, b.p, b.pins, b.used = k, p, 1, s.clock
	b.dirty.Store(false)
	if s.onDisk[k][p] {
		if err := s.io(b, false); err != nil {
			return nil, err
		}
	} else {
		clear(b.val)
		clear(b.state)
	}
	s.resident[k][p] = b
	return b, nil
}

// release unpins b.
func (s *partSolver) release(b *partBuf) {
	s.mu.Lock()
	b.pins--
	s.mu.Unlock()
}

// slotFor returns a buffer sized for slot k: a new one while under
// capacity, else the least recently used unpinned part, written back to
// its spill file first when it changed. s.mu is held.
func (s *partSolver) slotFor(k int) (*partBuf, error) {
	size := s.lay[k].size
	if s.held < s.capacity {
		s.held++
		s.stats.Resident = max(s.stats.Resident, s.held)
		return &partBuf{val: make([]byte, size), state: make([]uint32, (size+3)/4)}, nil
	}
	var victim *partBuf
	for kk := 0; kk < s.n; kk++ {
		for _, b := range s.resident[kk] {
			if b != nil && b.pins == 0 && (victim == nil || b.used < victim.used) {
				victim = b
			}
		}
	}
	if victim == nil {
		return nil, errors.New("geister: every resident part is in use (partitioned solve capacity too small)")
	}
	if victim.dirty.Load() {
		if err := s.io(victim, true); err != nil {
			return nil, err
		}
		s.onDisk[victim.k][victim.p] = true
	}
	s.resident[victim.k][victim.p] = nil
	if uint64(len(victim.val)) != size {
		// The twin's parts have another size: drop this one.
		return &partBuf{val: make([]byte, size), state: make([]uint32, (size+3)/4)}, nil
	}
	return victim, nil
}

// io writes b to its spill file (write) or reads it back.
func (s *partSolver) io(b *partBuf, write bool) error {
	f := s.files[b.k]
	off := int64(b.p) * s.bytes[b.k]
	words := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(b.state))), len(b.state)*4)
	for i, chunk := range [][]byte{b.val, words} {
		at := off
		if i == 1 {
			at += int64(len(b.val))
		}
		var err error
		if write {
			_, err = f.WriteAt(chunk, at)
			s.stats.SpillWritten += int64(len(chunk))
		} else {
			_, err = f.ReadAt(chunk, at)
			s.stats.SpillRead += int64(len(chunk))
		}
		if err != nil {
			return fmt.Errorf("geister: spill file of %v: %w", s.mats[b.k], err)
		}
	}
	b.dirty.Store(false)
	return nil
}

// eachPart runs fn on the parts in order on the solver's workers, and
// returns the first error.
func (s *solver) eachPart(ctx context.Context, order []int, fn func(w, p int) error) error {
	var next atomic.Int64
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
				i := int(next.Add(1) - 1)
				if i >= len(order) {
					return
				}
				if err := fn(w, order[i]); err != nil {
					errs[w] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// partOrder lists the parts by the opponent red's square, then the own
// red's: consecutive parts then share most of their parents' parts.
var partOrder = func() []int {
	o := make([]int, NumParts)
	for p := range o {
		o[p] = p
	}
	sort.SliceStable(o, func(i, j int) bool {
		_, si := partReds(o[i])
		_, sj := partReds(o[j])
		return si < sj
	})
	return o
}()

func setBit(b *[4]atomic.Uint64, v uint8) { b[v/64].Or(1 << (v % 64)) }

func hasBit(b *[4]atomic.Uint64, v int) bool { return b[v/64].Load()&(1<<(v%64)) != 0 }

func (s *partSolver) run(ctx context.Context) error {
	var assigned, pendingMax maxTracker
	var scanned atomic.Uint64
	for k := 0; k < s.n; k++ {
		lay := &s.lay[k]
		err := s.eachPart(ctx, partOrder, func(w, p int) error {
			b, err := s.acquire(k, p)
			if err != nil {
				return err
			}
			defer s.release(b)
			rk := &s.rankers[w]
			hiVal, hiCap := 0, 0
			var decided uint64
			lay.walk(p, func(j uint64, pos geister.Position) bool {
				var v uint8
				var st uint32
				if v, st, err = s.initEntry(rk, pos); err != nil {
					return false
				}
				b.val[j] = v
				b.state[j/4] |= st << (8 * (j % 4))
				switch {
				case st == stateDecided:
					setBit(&s.present[k][p], v)
					hiVal = max(hiVal, int(v))
					decided++
				case st == noLoss && v%2 == 1:
					setBit(&s.pending[k][p], v)
					hiCap = max(hiCap, int(v))
				}
				return true
			})
			b.dirty.Store(true)
			assigned.see(hiVal)
			pendingMax.see(hiCap)
			s.decided.Add(decided)
			s.progressSometimes("init", 0, scanned.Add(lay.size))
			return err
		})
		if err != nil {
			return err
		}
		s.progress("init", 0, scanned.Load())
	}
	for d := 2; d <= geistertb.Horizon; d++ {
		if d-1 > assigned.get() && d > pendingMax.get() {
			break
		}
		before := s.decided.Load()
		for k := 0; k < s.n; k++ {
			err := s.eachPart(ctx, partOrder, func(w, p int) error {
				if !hasBit(&s.present[k][p], d-1) {
					return nil
				}
				return s.expandPart(k, p, d)
			})
			if err != nil {
				return err
			}
		}
		for k := 0; k < s.n; k++ {
			err := s.eachPart(ctx, partOrder, func(_, p int) error {
				if !s.marked[k][p].Swap(false) && !(d%2 == 1 && hasBit(&s.pending[k][p], d)) {
					return nil
				}
				b, err := s.acquire(k, p)
				if err != nil {
					return err
				}
				defer s.release(b)
				top, decided := decideRange(b.val, b.state, 0, uint64(len(b.val)), d)
				if decided > 0 {
					b.dirty.Store(true)
					s.decided.Add(decided)
					assigned.see(top)
					// A layer decides values d and, for losses, above.
					for v := d; v <= top; v++ {
						setBit(&s.present[k][p], uint8(v))
					}
				}
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

// expandPart visits the parents of part p's entries of value d-1 in the
// twin's parts, as expand does for a whole table.
func (s *partSolver) expandPart(k, p, d int) error {
	b, err := s.acquire(k, p)
	if err != nil {
		return err
	}
	defer s.release(b)
	pk := s.other(k)
	var parents [8]*partBuf
	var pbuf [8]int
	pps := parentParts(p, pbuf[:0])
	for i, q := range pps {
		if parents[i], err = s.acquire(pk, q); err != nil {
			for _, pb := range parents[:i] {
				s.release(pb)
			}
			return err
		}
	}
	defer func() {
		for _, pb := range parents[:len(pps)] {
			s.release(pb)
		}
	}()
	lay := &s.lay[pk]
	v := uint8(d - 1)
	won := v%2 == 1
	var buf [64]step
	val := b.val
	// rep has v in every byte, to skip eight entries at a time when none
	// of them holds v.
	rep := uint64(v) * 0x0101010101010101
	for j := uint64(0); j < uint64(len(val)); j++ {
		if j%8 == 0 && j+8 <= uint64(len(val)) {
			if y := binary.LittleEndian.Uint64(val[j:]) ^ rep; (y-0x0101010101010101)&^y&0x8080808080808080 == 0 {
				j += 7
				continue
			}
		}
		if val[j] != v || atomic.LoadUint32(&b.state[j/4])>>(8*(j%4))&stateDecided == 0 {
			continue
		}
		x := s.lay[k].at(p, j)
		f := turn(x)
		for _, st := range f.parentSteps(buf[:0]) {
			q := f.parentPosition(st.to, st.from)
			_, qp, qj := lay.canonical(q)
			var pb *partBuf
			for i, c := range pps {
				if c == qp {
					pb = parents[i]
				}
			}
			if pb == nil {
				return fmt.Errorf("geister: parent of %v in part %d, not among the parts %v of part %d (bug)", x, qp, pps, p)
			}
			changed, marked := visitParent(&pb.state[qj/4], 8*(qj%4), won)
			if marked {
				s.marked[pk][qp].Store(true)
			}
			if changed && !pb.dirty.Load() {
				pb.dirty.Store(true)
			}
		}
	}
	return nil
}
