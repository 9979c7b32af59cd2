package chess

// Precomputed attack tables. Leapers (knight, king, pawn) are plain 64-entry
// tables. Sliders use magic bitboards: the occupancy of a square's relevant
// rays is multiplied by a per-square magic number and shifted to index a
// table of attack sets. The tables are data, in attacks_tables.go, written
// by chess/internal/attacktables (go generate): filling them at start-up
// cost every run of every binary ~1.5 ms and 900 KB of written memory,
// while as data they cost nothing until a search reads them, and then only
// the pages it reads. The tests check the file against the generator and
// the tables against walking the rays.

//go:generate go run gen_tables.go

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

// rookTableSize and bishopTableSize are the sums over the squares of
// 2^(relevant squares): every occupancy of every square's rays.
const (
	rookTableSize   = 102400
	bishopTableSize = 5248
)

// magic is one square's slider lookup (see index).
type magic struct {
	mask   Bitboard
	magic  uint64
	shift  uint8
	offset uint32
}

func (m *magic) index(occ Bitboard) uint32 {
	return uint32(uint64(occ&m.mask)*m.magic>>m.shift) + m.offset
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
