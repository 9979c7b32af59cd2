package chess

import "math/bits"

// Precomputed attack tables. Leapers (knight, king, pawn) are plain 64-entry
// tables. Sliders use magic bitboards: the occupancy of a square's relevant
// rays is multiplied by a per-square magic number and shifted to index a
// table of attack sets. The magic numbers below were found by this file's own
// deterministic search (initMagics); initialisation verifies each one while
// filling the tables and searches afresh for any that does not fit, so the
// constants only save start-up time and cannot make the tables wrong.

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
	// The slider tables are arrays, not heap slices: they cost start-up no
	// allocation, so the start-up heap stays below the first collection.
	rookTable   [rookTableSize]Bitboard
	bishopTable [bishopTableSize]Bitboard
)

// rookTableSize and bishopTableSize are the sums over the squares of
// 2^(relevant squares): every occupancy of every square's rays.
const (
	rookTableSize   = 102400
	bishopTableSize = 5248
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
	var rays [64][8]Bitboard
	for sq := Square(0); sq < 64; sq++ {
		for k, d := range allDirs {
			rays[sq][k] = slideRay(sq, d, 0)
		}
	}
	initMagics(&rookMagics, &rookSeeds, &rays, 0, 0x9e3779b97f4a7c15, rookTable[:])
	initMagics(&bishopMagics, &bishopSeeds, &rays, 4, 0xd1b54a32d192ed03, bishopTable[:])
	// a and b share a line when b is on one of a's rays; the squares
	// between them are on a's ray towards b and b's ray back.
	for a := Square(0); a < 64; a++ {
		for k := range allDirs {
			back := k ^ 1 // allDirs pairs each direction with its opposite
			for r := rays[a][k]; r != 0; r &= r - 1 {
				b := r.LSB()
				between[a][b] = rays[a][k] & rays[b][back]
				line[a][b] = rays[a][k] | rays[a][back] | SquareBB(a)
			}
		}
	}
}

// allDirs are rookDirs then bishopDirs, each direction that goes up the
// board (to higher squares) at an even index and its opposite after it.
var allDirs = [8][2]int{{1, 0}, {-1, 0}, {0, 1}, {0, -1}, {1, 1}, {-1, -1}, {-1, 1}, {1, -1}}

// rayPart is one occupancy of a ray's relevant squares (all but the last)
// and the ray's attacks under it.
type rayPart struct{ occ, att Bitboard }

// rayParts appends to buf and returns every occupancy of the relevant
// squares of the ray from sq in direction allDirs[k], with its attacks: the
// ray cut behind its first occupied square, the lowest one on a ray that
// goes up the board (even k) and the highest on one that goes down.
// Start-up fills the slider tables from these; the tests check the tables
// against slideAttacks.
func rayParts(rays *[64][8]Bitboard, sq Square, k int, buf []rayPart) []rayPart {
	ray := rays[sq&63][k&7]
	mask := ray
	if ray != 0 {
		last := Square(63 - bits.LeadingZeros64(uint64(ray))) // the far end going up
		if k&1 != 0 {
			last = ray.LSB()
		}
		mask &^= SquareBB(last)
	}
	buf = buf[:0]
	var sub Bitboard
	for {
		att := ray
		if sub != 0 {
			s := sub.LSB()
			if k&1 != 0 {
				s = Square(63 - bits.LeadingZeros64(uint64(sub)))
			}
			att &^= rays[s&63][k&7]
		}
		buf = append(buf, rayPart{sub, att})
		if sub = (sub - mask) & mask; sub == 0 {
			return buf
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

// initMagics fills table, the shared attack table of the slider whose
// directions are allDirs[first:first+4], using the known magic of each
// square when it maps every occupancy without a harmful collision and
// searching for a new one otherwise.
func initMagics(ms *[64]magic, known *[64]uint64, rays *[64][8]Bitboard, first int, seed uint64, table []Bitboard) {
	rng := xorshift(seed)
	dirs := [4][2]int(allDirs[first : first+4])
	offset := 0
	var occs, atts []Bitboard
	var used []int32
	var parts [4][]rayPart
	for sq := Square(0); sq < 64; sq++ {
		m := &ms[sq]
		m.mask = relevantMask(sq, dirs)
		n := m.mask.Count()
		m.shift = uint8(64 - n)
		m.offset = uint32(offset)
		size := 1 << n
		occs, atts = occs[:0], atts[:0]
		// Every occupancy of the mask is one of each ray's own relevant
		// squares, and its attacks are each ray's attacks under its part.
		for i := range parts {
			parts[i] = rayParts(rays, sq, first+i, parts[i])
		}
		for _, p0 := range parts[0] {
			for _, p1 := range parts[1] {
				o01, a01 := p0.occ|p1.occ, p0.att|p1.att
				for _, p2 := range parts[2] {
					o012, a012 := o01|p2.occ, a01|p2.att
					for _, p3 := range parts[3] {
						occs = append(occs, o012|p3.occ)
						atts = append(atts, a012|p3.att)
					}
				}
			}
		}
		offset += size
		if cap(used) < size {
			used = make([]int32, size)
		}
		used = used[:size]
		clear(used)
		for attempt := int32(1); ; attempt++ {
			cand := known[sq]
			if attempt > 1 {
				cand = rng.next() & rng.next() & rng.next()
				if bits.OnesCount64(uint64(m.mask)*cand>>56) < 6 {
					continue
				}
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
	if offset != len(table) {
		panic("chess: slider table size is wrong")
	}
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

// rookSeeds and bishopSeeds are known-good magics per square (see above).
var rookSeeds = [64]uint64{
	0x3080004004603088, 0x1cc00040a00a1000, 0x0280200008100080, 0x8180048008011000,
	0x0100080010050002, 0x020008a110120004, 0x9100010004288200, 0x2100010000218052,
	0x0000800080b44004, 0x2a09002302400184, 0x0009001102a00040, 0x0001002090040900,
	0x0008800400880080, 0x080a001014884200, 0x0424001a30040948, 0x040100008061000a,
	0x1040018000204880, 0xd005404000201000, 0x8800820022009040, 0x000122000a001040,
	0x0806020010201804, 0xc102808042001400, 0x02401c0002080110, 0x0020020021004484,
	0x4009c00080008020, 0x0011008500400960, 0x004500c300102000, 0x4010100080280080,
	0x221d029100040800, 0x0842008080028400, 0x0040020400084110, 0x000010860004084d,
	0xc0c0008060800044, 0x1840c00080802000, 0x0060001000802083, 0x9810002119001300,
	0x4200280081800400, 0x2040046008011040, 0x10820018020021c4, 0x4804004182000124,
	0x2020824000208000, 0x10200080c0028020, 0x0810080400a02000, 0x1010000821010010,
	0x0048002900050010, 0x008a001804220010, 0x0020c81e41340050, 0x9000040040920001,
	0x60800420014011c0, 0x0200c30208208200, 0x2604116005410100, 0x2010010110082100,
	0x8200040058008180, 0x01000400803a0080, 0x100801104208a400, 0x0001000140820300,
	0x2108104900800061, 0x000420c002110289, 0x04ca9a0280401022, 0x0200890430010021,
	0x0342000448112062, 0x0021002400181601, 0x3000104091020804, 0x0801002043040082,
}

var bishopSeeds = [64]uint64{
	0x2048017020910100, 0x0211040802802821, 0x5024880200400012, 0x882820c040089084,
	0x2001104094810000, 0x2202123004020000, 0x2400823010044420, 0x0a95028200824000,
	0x0228202430020862, 0x06228a0208510104, 0x0001100322510080, 0x3000041042000040,
	0x0001051040000005, 0x02440a3010080040, 0x9200040082503100, 0x0014008401184208,
	0x00a00d5004101084, 0x004b8b0410140900, 0x0408000102006200, 0x1092010120820000,
	0x2204022a20a00401, 0x02420041a0842000, 0xc090800148041100, 0x0909040024880468,
	0x0008c061044c0808, 0x2002084020080081, 0x8011c40438440402, 0x2010040300c01020,
	0x0831001041004001, 0x0010002041040500, 0x1104008003480c00, 0x0003010802008c88,
	0x0008200a50040800, 0x8202080490121080, 0x0011004802010804, 0x0800420181080180,
	0x0028020400011010, 0x480108220000a204, 0x40940100c2040443, 0x4016020208202488,
	0x0804500290080800, 0x0001091010000210, 0x00410421010b1000, 0x0012414208000080,
	0x100040010a010100, 0x00851a0800400200, 0x0020080100400909, 0x01410a02020000c4,
	0x0002220220042004, 0x108500c804840110, 0x0000144a44100800, 0x20001a0020881000,
	0x0000001046020408, 0x9004102001010020, 0x8020081119040040, 0x020a020401020084,
	0x0001002610020812, 0x0800404c00880800, 0x4000800100886400, 0x0150180000420600,
	0x2880020022042402, 0x5040024810108081, 0x1680200410038500, 0x01100115080a0040,
}
