package chess

// Precomputed attack tables. Leapers (knight, king, pawn) are plain 64-entry
// tables. Sliders use magic bitboards: the occupancy of a square's relevant
// rays is multiplied by a per-square magic number and shifted to index a
// table of attack sets. The magics are found at package initialisation by a
// deterministic random search, which takes a few milliseconds and keeps
// hand-copied constants out of the source.

const (
	fileA Bitboard = 0x0101010101010101
	fileH Bitboard = fileA << 7
	rank1 Bitboard = 0xff
	rank2 Bitboard = rank1 << 8
	rank3 Bitboard = rank1 << 16
	rank4 Bitboard = rank1 << 24
	rank5 Bitboard = rank1 << 32
	rank6 Bitboard = rank1 << 40
	rank7 Bitboard = rank1 << 48
	rank8 Bitboard = rank1 << 56
)

var (
	knightAttacks [64]Bitboard
	kingAttacks   [64]Bitboard
	pawnAttacks   [2][64]Bitboard
	// between[a][b] holds the squares strictly between a and b when they
	// share a line, else nothing.
	between [64][64]Bitboard
	// line[a][b] holds the whole line through a and b (edge to edge) when
	// they share a line, else nothing.
	line [64][64]Bitboard

	rookMagics   [64]magic
	bishopMagics [64]magic
	rookTable    []Bitboard
	bishopTable  []Bitboard
)

type magic struct {
	mask   Bitboard
	magic  uint64
	shift  uint8
	offset uint32
}

func (m *magic) index(occ Bitboard) uint32 {
	return uint32(uint64(occ&m.mask)*m.magic>>m.shift) + m.offset
}

var (
	rookDirs   = [4][2]int{{1, 0}, {-1, 0}, {0, 1}, {0, -1}}
	bishopDirs = [4][2]int{{1, 1}, {1, -1}, {-1, 1}, {-1, -1}}
)

func init() {
	for sq := Square(0); sq < 64; sq++ {
		f, r := sq.File(), sq.Rank()
		for _, d := range [8][2]int{{1, 2}, {2, 1}, {2, -1}, {1, -2}, {-1, -2}, {-2, -1}, {-2, 1}, {-1, 2}} {
			if onBoard(f+d[0], r+d[1]) {
				knightAttacks[sq] |= SquareBB(MakeSquare(f+d[0], r+d[1]))
			}
		}
		for df := -1; df <= 1; df++ {
			for dr := -1; dr <= 1; dr++ {
				if (df != 0 || dr != 0) && onBoard(f+df, r+dr) {
					kingAttacks[sq] |= SquareBB(MakeSquare(f+df, r+dr))
				}
			}
		}
		for _, df := range [2]int{-1, 1} {
			if onBoard(f+df, r+1) {
				pawnAttacks[White][sq] |= SquareBB(MakeSquare(f+df, r+1))
			}
			if onBoard(f+df, r-1) {
				pawnAttacks[Black][sq] |= SquareBB(MakeSquare(f+df, r-1))
			}
		}
	}
	rookTable = initMagics(&rookMagics, rookDirs, 0x9e3779b97f4a7c15)
	bishopTable = initMagics(&bishopMagics, bishopDirs, 0xd1b54a32d192ed03)
	for a := Square(0); a < 64; a++ {
		for b := Square(0); b < 64; b++ {
			if a == b {
				continue
			}
			for _, dirs := range [2][4][2]int{rookDirs, bishopDirs} {
				for _, d := range dirs {
					ray := slideRay(a, d, 0)
					if !ray.Has(b) {
						continue
					}
					between[a][b] = ray & slideRay(b, [2]int{-d[0], -d[1]}, 0)
					line[a][b] = ray | slideRay(a, [2]int{-d[0], -d[1]}, 0) | SquareBB(a)
				}
			}
		}
	}
}

func onBoard(f, r int) bool { return f >= 0 && f < 8 && r >= 0 && r < 8 }

// slideRay returns the squares a slider on sq reaches in direction d, stopping
// at (and including) the first occupied square.
func slideRay(sq Square, d [2]int, occ Bitboard) Bitboard {
	var b Bitboard
	f, r := sq.File()+d[0], sq.Rank()+d[1]
	for onBoard(f, r) {
		s := MakeSquare(f, r)
		b |= SquareBB(s)
		if occ.Has(s) {
			break
		}
		f, r = f+d[0], r+d[1]
	}
	return b
}

func slideAttacks(sq Square, dirs [4][2]int, occ Bitboard) Bitboard {
	var b Bitboard
	for _, d := range dirs {
		b |= slideRay(sq, d, occ)
	}
	return b
}

// relevantMask returns the squares whose occupancy matters for a slider on
// sq: its rays without the last square of each ray.
func relevantMask(sq Square, dirs [4][2]int) Bitboard {
	var b Bitboard
	for _, d := range dirs {
		f, r := sq.File()+d[0], sq.Rank()+d[1]
		for onBoard(f+d[0], r+d[1]) {
			b |= SquareBB(MakeSquare(f, r))
			f, r = f+d[0], r+d[1]
		}
	}
	return b
}

// initMagics finds a magic for every square and fills the shared attack
// table, returning it.
func initMagics(ms *[64]magic, dirs [4][2]int, seed uint64) []Bitboard {
	rng := xorshift(seed)
	var table []Bitboard
	var occs, atts []Bitboard
	var used []int32
	for sq := Square(0); sq < 64; sq++ {
		m := &ms[sq]
		m.mask = relevantMask(sq, dirs)
		n := m.mask.Count()
		m.shift = uint8(64 - n)
		m.offset = uint32(len(table))
		size := 1 << n
		occs, atts = occs[:0], atts[:0]
		// Enumerate every subset of the mask (the carry-rippler trick).
		var sub Bitboard
		for {
			occs = append(occs, sub)
			atts = append(atts, slideAttacks(sq, dirs, sub))
			sub = (sub - m.mask) & m.mask
			if sub == 0 {
				break
			}
		}
		table = append(table, make([]Bitboard, size)...)
		if cap(used) < size {
			used = make([]int32, size)
		}
		used = used[:size]
		for attempt := int32(1); ; attempt++ {
			cand := rng.next() & rng.next() & rng.next()
			if (uint64(m.mask)*cand>>56) < 6 && n > 0 {
				continue
			}
			m.magic = cand
			ok := true
			for i, o := range occs {
				idx := uint64(o) * cand >> m.shift
				if used[idx] != attempt {
					used[idx] = attempt
					table[m.offset+uint32(idx)] = atts[i]
				} else if table[m.offset+uint32(idx)] != atts[i] {
					ok = false
					break
				}
			}
			if ok {
				break
			}
		}
	}
	return table
}

type xorshiftState struct{ s uint64 }

func xorshift(seed uint64) *xorshiftState { return &xorshiftState{seed} }

func (x *xorshiftState) next() uint64 {
	x.s ^= x.s >> 12
	x.s ^= x.s << 25
	x.s ^= x.s >> 27
	return x.s * 2685821657736338717
}

// RookAttacks returns the squares a rook on sq attacks given the occupancy.
func RookAttacks(sq Square, occ Bitboard) Bitboard {
	m := &rookMagics[sq]
	return rookTable[m.index(occ)]
}

// BishopAttacks returns the squares a bishop on sq attacks given the
// occupancy.
func BishopAttacks(sq Square, occ Bitboard) Bitboard {
	m := &bishopMagics[sq]
	return bishopTable[m.index(occ)]
}

// QueenAttacks returns the squares a queen on sq attacks given the
// occupancy.
func QueenAttacks(sq Square, occ Bitboard) Bitboard {
	return RookAttacks(sq, occ) | BishopAttacks(sq, occ)
}

// KnightAttacks returns the squares a knight on sq attacks.
func KnightAttacks(sq Square) Bitboard { return knightAttacks[sq] }

// KingAttacks returns the squares a king on sq attacks.
func KingAttacks(sq Square) Bitboard { return kingAttacks[sq] }

// PawnAttacks returns the squares a pawn of colour c on sq attacks.
func PawnAttacks(c Color, sq Square) Bitboard { return pawnAttacks[c][sq] }
