package chesstb

import (
	"fmt"
	"strings"

	"github.com/tbfs/tbfs/chess"
)

// material counts the men of each colour and piece type (chess.Pawn ..
// chess.King index the inner array). It is a small value used as a map key.
type material struct {
	n [2][7]uint8
	// pair marks an opposing-pair ('p') material: n counts the pieces
	// besides the pair's two pawns (pair.go).
	pair bool
}

// pieceLetters lists the piece types in the order chesstb spells a side:
// king first, then queen, rook, bishop, knight, pawn.
var pieceLetters = [...]struct {
	pt     chess.PieceType
	letter byte
}{
	{chess.King, 'K'}, {chess.Queen, 'Q'}, {chess.Rook, 'R'},
	{chess.Bishop, 'B'}, {chess.Knight, 'N'}, {chess.Pawn, 'P'},
}

// sideStrength is the weight the generator gives each piece when it decides
// which side is stored as White.
var sideStrength = [7]int{chess.Pawn: 100, chess.Knight: 320, chess.Bishop: 330,
	chess.Rook: 500, chess.Queen: 900}

// parseMaterial reads a canonical-looking name such as "KQKR". Both sides
// must start with a king; opposing-pair names (lower-case 'p') are refused
// here because they index differently.
func parseMaterial(name string) (material, error) {
	var m material
	if len(name) < 2 || name[0] != 'K' || strings.Count(name, "K") != 2 {
		return m, fmt.Errorf("material %q: want two kings, white first", name)
	}
	side := -1
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c == 'K' {
			side++
		}
		found := false
		for _, pl := range pieceLetters {
			if pl.letter == c {
				if m.n[side][pl.pt] == 255 {
					return m, fmt.Errorf("material %q: too many pieces", name)
				}
				m.n[side][pl.pt]++
				found = true
				break
			}
		}
		if !found {
			return m, fmt.Errorf("material %q: unexpected letter %q", name, c)
		}
	}
	return m, nil
}

// materialOf returns the literal material of a piece set (White as White).
func materialOf(ps *pieceSet) material {
	var m material
	for c := range 2 {
		for pt := chess.Pawn; pt <= chess.King; pt++ {
			m.n[c][pt] = uint8(popcount(ps.bb[c][pt]))
		}
	}
	return m
}

// name spells the material the way table files are named, White first.
func (m material) name() string {
	var b strings.Builder
	for c := range 2 {
		for _, pl := range pieceLetters {
			for range m.n[c][pl.pt] {
				b.WriteByte(pl.letter)
			}
		}
		if m.pair {
			b.WriteByte('p') // each side shows the pair's pawn
		}
	}
	return b.String()
}

// men is the number of pieces on the board, kings included.
func (m material) men() int {
	// Spelled out: the rebuilds ask this of every child, and the loop
	// cost more than the sum.
	w, b := &m.n[chess.White], &m.n[chess.Black]
	t := int(w[chess.Pawn]) + int(w[chess.Knight]) + int(w[chess.Bishop]) + int(w[chess.Rook]) + int(w[chess.Queen]) + int(w[chess.King]) +
		int(b[chess.Pawn]) + int(b[chess.Knight]) + int(b[chess.Bishop]) + int(b[chess.Rook]) + int(b[chess.Queen]) + int(b[chess.King])
	if m.pair {
		t += 2
	}
	return t
}

// flipped swaps the colours.
func (m material) flipped() material {
	return material{n: [2][7]uint8{m.n[1], m.n[0]}, pair: m.pair}
}

// hasPawns reports whether either side has a pawn.
func (m material) hasPawns() bool { return m.pair || m.n[0][chess.Pawn]+m.n[1][chess.Pawn] > 0 }

// bareKings reports whether only the two kings are left.
func (m material) bareKings() bool { return m.men() <= 2 }

// symmetric reports whether the material is its own colour mirror (KRKR).
func (m material) symmetric() bool { return m.n[0] == m.n[1] }

// blackIsStronger decides, as the generator does, whether the stored table
// has this material's colours swapped: by summed piece strength, and on a tie
// by comparing the per-type counts in the order queen, rook, bishop, knight,
// pawn.
func (m material) blackIsStronger() bool {
	var s [2]int
	for c := range 2 {
		for pt := chess.Pawn; pt <= chess.Queen; pt++ {
			s[c] += sideStrength[pt] * int(m.n[c][pt])
		}
	}
	if s[0] != s[1] {
		return s[1] > s[0]
	}
	for _, pl := range pieceLetters {
		w, b := m.n[0][pl.pt], m.n[1][pl.pt]
		if w != b {
			return b > w
		}
	}
	return false
}

// canonical returns the stored orientation of m and whether the colours had
// to be swapped to reach it.
func (m material) canonical() (material, bool) {
	if m.blackIsStronger() {
		return m.flipped(), true
	}
	return m, false
}

// materialKeyWeights are the per-piece weights of the 32-bit material key
// stored in every file header (White's pieces weigh less than Black's).
var materialKeyWeights = [2][7]uint32{
	{chess.Pawn: 1, chess.Knight: 9, chess.Bishop: 81, chess.Rook: 729, chess.Queen: 6561},
	{chess.Pawn: 59049, chess.Knight: 531441, chess.Bishop: 4782969, chess.Rook: 43046721, chess.Queen: 387420489},
}

// key is the generator's material key of m as it stands.
func (m material) key() uint32 {
	var k uint32
	for c := range 2 {
		for pt := chess.Pawn; pt <= chess.Queen; pt++ {
			k += materialKeyWeights[c][pt] * uint32(m.n[c][pt])
		}
	}
	return k
}

// headerKey is the key a table file for m records: the smaller of the key
// and its colour mirror's.
func (m material) headerKey() uint32 {
	return min(m.key(), m.flipped().key())
}
