package retro

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/tbfs/tbfs/chess"
)

// DTMProber answers the distance to mate of positions of materials other
// than the one being solved: the positions reached by a capture or a
// promotion. A *Table satisfies it, and so can a reader of published tables.
// The value is for the side to move in pos: Win(n), Loss(n) or Draw; an
// error means the prober does not know, and stops the solve.
type DTMProber interface {
	ProbeDTM(ctx context.Context, pos chess.Position) (Value, error)
}

// ProberFunc adapts a function to DTMProber, so that any table reader (for
// instance format/chesstb's WDL and DTM probes) can serve as Options.Sub.
type ProberFunc func(ctx context.Context, pos chess.Position) (Value, error)

// ProbeDTM calls f.
func (f ProberFunc) ProbeDTM(ctx context.Context, pos chess.Position) (Value, error) {
	return f(ctx, pos)
}

// Progress describes how far a SolveMaterial call has got.
type Progress struct {
	Material string        // the material being solved, e.g. "KQK"
	Phase    string        // "enumerate" (first pass over the index) or "propagate"
	Plies    int           // in "propagate", the distance being expanded
	Done     int64         // positions processed: indices enumerated plus positions expanded
	Total    int64         // an upper bound on Done at the end
	Rate     float64       // positions processed per second so far
	Elapsed  time.Duration // time since this material's solve began
	ETA      time.Duration // (Total-Done)/Rate: an upper bound, since not every position gets expanded
}

// Options tune SolveMaterial. The zero value is ready to use.
type Options struct {
	// Sub answers positions after captures and promotions. When nil, the
	// sub-materials are solved recursively first (bare kings are a draw by
	// the rules and need no table).
	Sub DTMProber
	// Workers is the number of goroutines; 0 means GOMAXPROCS.
	Workers int
	// Progress, when set, is called from the solving goroutine at most a
	// few times a second and once at the end of each phase.
	Progress func(Progress)
}

// encoded values in the working array; a final Table keeps only notPos,
// undecided (draw) and plies+1.
const (
	undecided = 0      // no value (yet); a draw once the solve ends
	floorFlag = 0x8000 // undecided, with a loss no sooner than the low bits (plies) through a conversion
	notPos    = 0xFFFF // the index is not a legal canonical position
	maxCode   = 0x7FFE // largest plies+1 the array holds
)

// SolveMaterial computes the exact distance to mate, ignoring the 50-move
// rule, of every legal position of material (a name such as "KQK", "KBNK",
// "KPK" or "KQvKR"; the first side is White, castling rights are none).
// Mates are found by the rules, captures and promotions take the values of
// the sub-materials (from opts.Sub, or solved recursively), the values are
// propagated backwards by distance until nothing changes, and every position
// left undecided is a draw. Memory is two bytes per index plus one while
// solving; for four men without pawns the index has 5.2M entries, with
// pawns 16.8M.
//
// With pawns on both sides, a double push can give the opponent an
// en-passant capture. Such positions are not index entries (nor are they in
// the chesstb tables); they are solved alongside the indexed ones as nodes
// of their own, kept in a sorted side table (eleven bytes each while
// solving), so that a position whose move allows an en-passant reply gets
// the value of the position the move really reaches. The resulting Table
// answers en-passant positions too.
func SolveMaterial(ctx context.Context, material string, opts Options) (*Table, error) {
	m, err := parseMaterial(material)
	if err != nil {
		return nil, err
	}
	s := &solver{opts: opts, tables: map[string]*Table{}}
	if s.opts.Workers <= 0 {
		s.opts.Workers = runtime.GOMAXPROCS(0)
	}
	return s.solve(ctx, m)
}

type solver struct {
	opts   Options
	tables map[string]*Table // solved sub-materials, by canonical name
	solved Tables            // the same, as a prober
}

// subMaterials lists the materials one capture or promotion away from m.
func subMaterials(m material) []material {
	seen := map[string]bool{}
	var out []material
	add := func(w, b []chess.PieceType) {
		sm := material{side: [2][]chess.PieceType{sortPieces(w), sortPieces(b)}}.canonical()
		if !seen[sm.String()] {
			seen[sm.String()] = true
			out = append(out, sm)
		}
	}
	without := func(s []chess.PieceType, i int) []chess.PieceType {
		return append(append([]chess.PieceType{}, s[:i]...), s[i+1:]...)
	}
	for c := range 2 {
		own, opp := m.side[c], m.side[1-c]
		pair := func(own, opp []chess.PieceType) {
			if c == 0 {
				add(own, opp)
			} else {
				add(opp, own)
			}
		}
		for j := range opp {
			pair(own, without(opp, j))
		}
		for i, pt := range own {
			if pt != chess.Pawn {
				continue
			}
			for _, promo := range []chess.PieceType{chess.Queen, chess.Rook, chess.Bishop, chess.Knight} {
				p := append(without(own, i), promo)
				pair(p, opp)
				for j, q := range opp {
					if q != chess.Pawn {
						pair(p, without(opp, j))
					}
				}
			}
		}
	}
	return out
}

func sortPieces(s []chess.PieceType) []chess.PieceType {
	var out []chess.PieceType
	for _, pt := range pieceOrder {
		for _, q := range s {
			if q == pt {
				out = append(out, q)
			}
		}
	}
	return out
}

func bareKings(p *chess.Position) bool { return p.Occupied().Count() == 2 }

// subProbe returns the value of a position reached by a conversion.
func (s *solver) subProbe(ctx context.Context, p chess.Position) (Value, error) {
	if bareKings(&p) {
		return Draw, nil
	}
	if s.opts.Sub != nil {
		return s.opts.Sub.ProbeDTM(ctx, p)
	}
	v, err := s.solved.ProbeDTM(ctx, p)
	if err != nil {
		return Value{}, fmt.Errorf("retro: %w (internal error)", err)
	}
	return v, nil
}

func (s *solver) solve(ctx context.Context, m material) (*Table, error) {
	if t := s.tables[m.String()]; t != nil {
		return t, nil
	}
	ix, err := newIndexer(m)
	if err != nil {
		return nil, err
	}
	if s.opts.Sub == nil {
		for _, sm := range subMaterials(m) {
			if sm.men() == 2 {
				continue
			}
			if _, err := s.solve(ctx, sm); err != nil {
				return nil, err
			}
		}
	}
	st := &solveState{s: s, ix: ix, start: time.Now(),
		dtm: make([]uint16, ix.size), cnt: make([]uint8, ix.size), ep: ix.bothPawns()}
	if err := st.enumerate(ctx); err != nil {
		return nil, err
	}
	if err := st.propagate(ctx); err != nil {
		return nil, err
	}
	for _, a := range [][]uint16{st.dtm, st.epDTM} {
		for i, v := range a {
			if v != notPos && v&floorFlag != 0 {
				a[i] = undecided
			}
		}
	}
	t := &Table{ix: ix, dtm: st.dtm, epKeys: st.epKeys, epDTM: st.epDTM}
	s.tables[m.String()] = t
	s.solved = append(s.solved, t)
	return t, nil
}

// solveState is one material's solve. Its nodes are numbered: an index i
// of the material is node i, and the en-passant position epKeys[j] is node
// ix.size+j. dtm and cnt hold the indexed nodes' working values and
// undecided-child counts, epDTM and epCnt the en-passant nodes'.
type solveState struct {
	s      *solver
	ix     *indexer
	dtm    []uint16
	cnt    []uint8
	ep     bool    // the material has pawns on both sides
	epKeys []int64 // sorted epKey of every valid en-passant position
	epDTM  []uint16
	epCnt  []uint8
	start  time.Time
	last   time.Time
	done   int64
	total  int64
	legal  int64
	maxD   int // largest plies stored so far
}

func (st *solveState) report(phase string, plies int, force bool) {
	f := st.s.opts.Progress
	if f == nil {
		return
	}
	now := time.Now()
	if !force && now.Sub(st.last) < 250*time.Millisecond {
		return
	}
	st.last = now
	el := now.Sub(st.start)
	p := Progress{Material: st.ix.mat.String(), Phase: phase, Plies: plies, Done: st.done, Total: st.total, Elapsed: el}
	if el > 0 {
		p.Rate = float64(st.done) / el.Seconds()
	}
	if p.Rate > 0 && st.total > st.done {
		p.ETA = time.Duration(float64(st.total-st.done) / p.Rate * float64(time.Second))
	}
	f(p)
}

// chunk is the number of indices a round of workers covers between
// cancellation checks and progress reports.
const chunk = 1 << 16

// parallel runs f over [lo, hi) split between the workers, and returns the
// first error.
func (st *solveState) parallel(lo, hi int64, f func(w int, lo, hi int64) error) error {
	n := int64(st.s.opts.Workers)
	var wg sync.WaitGroup
	errs := make([]error, n)
	step := (hi - lo + n - 1) / n
	for w := range n {
		a, b := lo+w*step, min(hi, lo+(w+1)*step)
		if a >= b {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[w] = f(int(w), a, b)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// enumerate visits every index once: it marks the indices that are not
// legal positions, records checkmates as Loss(0), takes the values of
// captures and promotions from the sub-materials, and counts each
// position's distinct children inside the material. With pawns on both
// sides it also lists the en-passant positions (each legal board with each
// en-passant square a capture can use) and then gives them the same
// treatment.
func (st *solveState) enumerate(ctx context.Context) error {
	ix := st.ix
	st.total = 2 * ix.size
	type scratch struct {
		moves    []chess.Move
		children []int64
		keys     []int64
		legal    int64
	}
	ws := make([]scratch, st.s.opts.Workers)
	for lo := int64(0); lo < ix.size; lo += chunk {
		if err := ctx.Err(); err != nil {
			return err
		}
		hi := min(ix.size, lo+chunk)
		err := st.parallel(lo, hi, func(w int, a, b int64) error {
			sc := &ws[w]
			var board [64]chess.Piece
			for i := a; i < b; i++ {
				side, ok := ix.decode(i, &board)
				if !ok {
					st.dtm[i] = notPos
					continue
				}
				p, err := chess.FromBoard(board, side, 0, chess.NoSquare, 0, 1)
				if err != nil {
					st.dtm[i] = notPos
					continue
				}
				sc.legal++
				if err := st.initPosition(ctx, i, &p, &sc.moves, &sc.children); err != nil {
					return err
				}
				if st.ep {
					for files := epFiles(&p); files != 0; files &= files - 1 {
						f := bits.TrailingZeros8(files)
						ep := epSquare(side, f)
						if q, err := chess.FromBoard(board, side, 0, ep, 0, 1); err == nil && q.EnPassant() == ep {
							sc.keys = append(sc.keys, i<<3|int64(f))
						}
					}
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		// Workers cover ascending ranges, so their keys in worker order
		// keep epKeys sorted. A worker given no range this round keeps
		// an empty list.
		for w := range ws {
			st.epKeys = append(st.epKeys, ws[w].keys...)
			ws[w].keys = ws[w].keys[:0]
		}
		st.done += hi - lo
		st.report("enumerate", 0, false)
	}
	for j := 1; j < len(st.epKeys); j++ {
		if st.epKeys[j] <= st.epKeys[j-1] {
			return fmt.Errorf("retro: solving %v: en-passant keys out of order at %d (internal error)", ix.mat, j)
		}
	}
	st.legal = 0
	for _, sc := range ws {
		st.legal += sc.legal
	}
	if err := st.enumerateEP(ctx, func(w int) (*[]chess.Move, *[]int64) { return &ws[w].moves, &ws[w].children }); err != nil {
		return err
	}
	st.legal += int64(len(st.epKeys))
	st.total = ix.size + int64(len(st.epKeys)) + st.legal
	st.report("enumerate", 0, true)
	return nil
}

// enumerateEP initialises the en-passant nodes listed by enumerate.
func (st *solveState) enumerateEP(ctx context.Context, scratch func(w int) (*[]chess.Move, *[]int64)) error {
	n := int64(len(st.epKeys))
	st.epDTM, st.epCnt = make([]uint16, n), make([]uint8, n)
	for lo := int64(0); lo < n; lo += chunk {
		if err := ctx.Err(); err != nil {
			return err
		}
		hi := min(n, lo+chunk)
		err := st.parallel(lo, hi, func(w int, a, b int64) error {
			moves, children := scratch(w)
			for j := a; j < b; j++ {
				p, err := st.ix.decodeEP(st.epKeys[j])
				if err != nil {
					return fmt.Errorf("retro: solving %v: en-passant key %d: %w (internal error)", st.ix.mat, st.epKeys[j], err)
				}
				if err := st.initPosition(ctx, st.ix.size+j, &p, moves, children); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		st.done += hi - lo
		st.report("enumerate", 0, false)
	}
	return nil
}

// slot returns the working value and child count of a node.
func (st *solveState) slot(node int64) (*uint16, *uint8) {
	if node < st.ix.size {
		return &st.dtm[node], &st.cnt[node]
	}
	return &st.epDTM[node-st.ix.size], &st.epCnt[node-st.ix.size]
}

// initPosition sets node's starting value from p's moves: mates, captures
// and promotions are decided here, and the distinct children inside the
// material are counted. Children are told apart by their nodeKey, which is
// all counting needs.
func (st *solveState) initPosition(ctx context.Context, node int64, p *chess.Position, moves *[]chess.Move, children *[]int64) error {
	dtm, cnt := st.slot(node)
	*moves = p.LegalMoves((*moves)[:0])
	if len(*moves) == 0 {
		if p.InCheck() {
			*dtm = 1 // Loss(0)
		} else {
			*cnt = 1 // stalemate: a draw that never resolves
		}
		return nil
	}
	*children = (*children)[:0]
	winBest, lossFloor, escape := -1, 0, false
	for _, m := range *moves {
		c := p.Play(m)
		if p.IsCapture(m) || m.Promotion() != chess.NoPieceType {
			v, err := st.s.subProbe(ctx, c)
			if err != nil {
				return fmt.Errorf("retro: solving %v: after %s in %s: %w", st.ix.mat, m.UCI(), p.FEN(), err)
			}
			switch v.Kind {
			case LossKind:
				if d := int(v.Plies) + 1; winBest < 0 || d < winBest {
					winBest = d
				}
			case WinKind:
				lossFloor = max(lossFloor, int(v.Plies)+1)
			case DrawKind:
				escape = true
			default:
				return fmt.Errorf("retro: solving %v: after %s in %s: sub-table answered %v", st.ix.mat, m.UCI(), p.FEN(), v)
			}
			continue
		}
		ci, ok := st.ix.nodeKey(&c)
		if !ok {
			return fmt.Errorf("retro: solving %v: child %s after %s is outside the material (internal error)", st.ix.mat, c.FEN(), m.UCI())
		}
		dup := false
		for _, x := range *children {
			if x == ci {
				dup = true
				break
			}
		}
		if !dup {
			*children = append(*children, ci)
		}
	}
	if winBest >= 0 {
		if winBest+1 > maxCode {
			return fmt.Errorf("retro: solving %v: distance %d overflows the table", st.ix.mat, winBest)
		}
		*dtm = uint16(winBest + 1)
		return nil
	}
	n := len(*children)
	if escape {
		n++
	}
	if n > 255 {
		return fmt.Errorf("retro: solving %v: %s has %d children, more than the counter holds", st.ix.mat, p.FEN(), n)
	}
	if lossFloor+1 > maxCode {
		return fmt.Errorf("retro: solving %v: distance %d overflows the table", st.ix.mat, lossFloor)
	}
	*cnt = uint8(n)
	switch {
	case n == 0:
		*dtm = uint16(lossFloor + 1) // every move converts into a lost sub-position
	case lossFloor > 0:
		*dtm = floorFlag | uint16(lossFloor)
	}
	return nil
}

// propagate expands the positions of each distance in turn, nearest to mate
// first. A Loss(d) position makes its undecided parents Win(d+1); a Win(d)
// position takes one child off each undecided parent's count, and a parent
// whose count reaches zero is Loss(max(d+1, its conversion floor)). Values
// stored ahead of their turn (wins and losses through conversions) are
// final once their distance comes up, because every shorter distance has
// been expanded by then. En-passant nodes take part like the others: their
// parents are the double push's origins (chess gives no other unmove of a
// position with an en-passant square), and they are the parents that carry
// an en-passant square among the unmoves of the indexed positions.
func (st *solveState) propagate(ctx context.Context) error {
	ix := st.ix
	st.maxD = 0
	for _, a := range [][]uint16{st.dtm, st.epDTM} {
		for _, v := range a {
			if v != notPos && v&floorFlag == 0 && v > 0 {
				st.maxD = max(st.maxD, int(v)-1)
			}
		}
	}
	type scratch struct {
		unmoves  []chess.Unmove
		parents  []int64
		out      []int64
		expanded int64
	}
	ws := make([]scratch, st.s.opts.Workers)
	// expand appends the distinct parent nodes of p to sc.out.
	expand := func(sc *scratch, p *chess.Position) error {
		var err error
		sc.expanded++
		sc.parents, err = appendParents(sc.parents[:0], p, &sc.unmoves, ix)
		if err != nil {
			return fmt.Errorf("retro: solving %v: %w", ix.mat, err)
		}
		for _, k := range sc.parents {
			if k >= ix.size {
				j, ok := slices.BinarySearch(st.epKeys, k-ix.size)
				if !ok {
					return fmt.Errorf("retro: solving %v: en-passant parent key %d of %s is not in the side table (internal error)", ix.mat, k-ix.size, p.FEN())
				}
				k = ix.size + int64(j)
			}
			sc.out = append(sc.out, k)
		}
		return nil
	}
	// flush applies the parents the workers found, in worker order.
	flush := func(d int, win bool) {
		for w := range ws {
			for _, pi := range ws[w].out {
				st.apply(pi, d, win)
			}
			ws[w].out = ws[w].out[:0]
			st.done += ws[w].expanded
			ws[w].expanded = 0
		}
	}
	nEP := int64(len(st.epKeys))
	for d := 0; d <= st.maxD; d++ {
		target := uint16(d + 1)
		win := d%2 == 1
		for lo := int64(0); lo < ix.size; lo += chunk {
			if err := ctx.Err(); err != nil {
				return err
			}
			hi := min(ix.size, lo+chunk)
			err := st.parallel(lo, hi, func(w int, a, b int64) error {
				sc := &ws[w]
				var board [64]chess.Piece
				for i := a; i < b; i++ {
					if st.dtm[i] != target {
						continue
					}
					side, ok := ix.decode(i, &board)
					if !ok {
						return fmt.Errorf("retro: solving %v: index %d holds a value but decodes to no position (internal error)", ix.mat, i)
					}
					p, err := chess.FromBoard(board, side, 0, chess.NoSquare, 0, 1)
					if err != nil {
						return fmt.Errorf("retro: solving %v: index %d: %w (internal error)", ix.mat, i, err)
					}
					if err := expand(sc, &p); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
			flush(d, win)
			st.report("propagate", d, false)
		}
		for lo := int64(0); lo < nEP; lo += chunk {
			if err := ctx.Err(); err != nil {
				return err
			}
			hi := min(nEP, lo+chunk)
			err := st.parallel(lo, hi, func(w int, a, b int64) error {
				sc := &ws[w]
				for j := a; j < b; j++ {
					if st.epDTM[j] != target {
						continue
					}
					p, err := ix.decodeEP(st.epKeys[j])
					if err != nil {
						return fmt.Errorf("retro: solving %v: en-passant key %d: %w (internal error)", ix.mat, st.epKeys[j], err)
					}
					if err := expand(sc, &p); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
			flush(d, win)
		}
	}
	st.report("propagate", st.maxD, true)
	return nil
}

// appendParents appends to dst the distinct nodeKeys of p's parents within
// the material: every same-material unmove except those restoring castling
// rights, parents with an en-passant square included. chess gives a
// position with an en-passant square only its double push as unmove, and a
// position without one the double push only when it would leave no usable
// square, so each parent's move reaches exactly p. unmoves is scratch
// space.
func appendParents(dst []int64, p *chess.Position, unmoves *[]chess.Unmove, ix *indexer) ([]int64, error) {
	*unmoves = p.SameMaterialUnmoves((*unmoves)[:0])
	start := len(dst)
	for _, u := range *unmoves {
		if u.RestoredCastling() != 0 {
			continue // such parents are outside the index
		}
		q := p.Unmake(u)
		pi, ok := ix.nodeKey(&q)
		if !ok {
			return dst, fmt.Errorf("parent %s of %s is outside the material (internal error)", q.FEN(), p.FEN())
		}
		if !slices.Contains(dst[start:], pi) {
			dst = append(dst, pi)
		}
	}
	return dst, nil
}

// apply records that parent node pi has a child of value d plies (a win for
// the child's mover when win is set).
func (st *solveState) apply(pi int64, d int, win bool) {
	dtm, cnt := st.slot(pi)
	v := *dtm
	if v == notPos {
		return
	}
	decided := v != undecided && v&floorFlag == 0
	if !win {
		// The child is Loss(d): the parent wins in d+1 unless it already
		// wins sooner.
		if !decided || int(v)-1 > d+1 {
			*dtm = uint16(d + 2)
			st.maxD = max(st.maxD, d+1)
		}
		return
	}
	if decided {
		return
	}
	*cnt--
	if *cnt == 0 {
		l := d + 1
		if v&floorFlag != 0 {
			l = max(l, int(v&^floorFlag))
		}
		*dtm = uint16(l + 1)
		st.maxD = max(st.maxD, l)
	}
}

// Table holds the exact distance to mate of every position of one material,
// en-passant positions included.
type Table struct {
	ix     *indexer
	dtm    []uint16
	epKeys []int64 // sorted epKey of each en-passant position
	epDTM  []uint16
}

// Material returns the table's material name, White's side first ("KQK").
func (t *Table) Material() string { return t.ix.mat.String() }

// Probe returns the value of pos for its side to move: Win(n), Loss(n) or
// Draw. pos may have the table's material with either colour to play the
// stronger side, and an en-passant square (chess keeps one only when a
// capture can use it). Positions with castling rights are not in any table.
func (t *Table) Probe(pos chess.Position) (Value, error) {
	if pos.Castling() != 0 {
		return Value{}, fmt.Errorf("%w: %s has castling rights; %s tables have none", ErrMaterial, pos.FEN(), t.Material())
	}
	i, ok := t.lookup(&pos)
	if !ok {
		return Value{}, fmt.Errorf("%w: %s is %s, not %s", ErrMaterial, pos.FEN(), materialOf(&pos), t.Material())
	}
	var code uint16 = notPos
	if pos.EnPassant() == chess.NoSquare {
		code = t.dtm[i]
	} else if j, ok := t.lookupEP(&pos); ok {
		code = t.epDTM[j]
	}
	if code == notPos {
		return Value{}, fmt.Errorf("retro: %s is not a position of the %s table (internal error)", pos.FEN(), t.Material())
	}
	return valueOf(code), nil
}

// lookup returns pos's index, trying the colour-flipped position when pos
// has the material the other way round; false when neither fits.
func (t *Table) lookup(pos *chess.Position) (int64, bool) {
	if i, ok := t.ix.index(pos); ok {
		return i, true
	}
	m := pos.Mirror()
	return t.ix.index(&m)
}

// lookupEP returns the slot of pos, an en-passant position, in the side
// table, trying the colour-flipped position as lookup does.
func (t *Table) lookupEP(pos *chess.Position) (int, bool) {
	k, ok := t.ix.epKey(pos)
	if !ok {
		m := pos.Mirror()
		if k, ok = t.ix.epKey(&m); !ok {
			return 0, false
		}
	}
	return slices.BinarySearch(t.epKeys, k)
}

// valueOf decodes a stored code other than notPos.
func valueOf(v uint16) Value {
	switch {
	case v == undecided:
		return Draw
	case (v-1)%2 == 1:
		return Win(uint32(v - 1))
	}
	return Loss(uint32(v - 1))
}

// ProbeDTM is Probe with a context, so that a Table can serve as the Sub
// prober of another solve.
func (t *Table) ProbeDTM(_ context.Context, pos chess.Position) (Value, error) { return t.Probe(pos) }

// Each calls f with every position of the table (one per symmetry class,
// White's king in the canonical region, clocks zero) and its value, in index
// order, then every en-passant position the same way, until f returns
// false.
func (t *Table) Each(f func(pos chess.Position, v Value) bool) {
	var board [64]chess.Piece
	for i, code := range t.dtm {
		if code == notPos {
			continue
		}
		side, ok := t.ix.decode(int64(i), &board)
		if !ok {
			continue
		}
		p, err := chess.FromBoard(board, side, 0, chess.NoSquare, 0, 1)
		if err != nil {
			continue
		}
		if !f(p, valueOf(code)) {
			return
		}
	}
	for j, k := range t.epKeys {
		p, err := t.ix.decodeEP(k)
		if err != nil {
			continue
		}
		if !f(p, valueOf(t.epDTM[j])) {
			return
		}
	}
}

// Stats summarises a table.
type Stats struct {
	Positions, Wins, Losses, Draws int64
	LongestWin                     uint32 // the largest Win distance, in plies
}

// Stats counts the table's positions by value, en-passant positions
// included.
func (t *Table) Stats() Stats {
	var s Stats
	for _, a := range [][]uint16{t.dtm, t.epDTM} {
		for _, code := range a {
			if code == notPos {
				continue
			}
			s.Positions++
			switch {
			case code == undecided:
				s.Draws++
			case (code-1)%2 == 1:
				s.Wins++
				s.LongestWin = max(s.LongestWin, uint32(code-1))
			default:
				s.Losses++
			}
		}
	}
	return s
}

// Tables serves several solved tables as one prober, choosing by material.
type Tables []*Table

// ProbeDTM answers pos from the table of its material (bare kings are a
// draw by the rules).
func (ts Tables) ProbeDTM(ctx context.Context, pos chess.Position) (Value, error) {
	if bareKings(&pos) {
		return Draw, nil
	}
	for _, t := range ts {
		if _, ok := t.lookup(&pos); ok {
			return t.ProbeDTM(ctx, pos)
		}
	}
	return Value{}, fmt.Errorf("%w: no table for %s", ErrMaterial, materialOf(&pos))
}
