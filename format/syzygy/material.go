package syzygy

import (
	"strings"

	"github.com/tbfs/tbfs/chess"
)

// Kind is the kind of a Syzygy table.
type Kind uint8

const (
	// KindWDL is a win/draw/loss table (.rtbw).
	KindWDL Kind = iota
	// KindDTZ is a distance-to-zeroing table (.rtbz).
	KindDTZ
)

// Ext returns the file extension of the kind, with its dot.
func (k Kind) Ext() string {
	if k == KindDTZ {
		return ".rtbz"
	}
	return ".rtbw"
}

// String returns "wdl" or "dtz".
func (k Kind) String() string {
	if k == KindDTZ {
		return "dtz"
	}
	return "wdl"
}

// maxPieces is the most men a Syzygy table holds.
const maxPieces = 7

// pieceOrder is the order of piece letters in a table name.
var pieceOrder = [...]chess.PieceType{chess.King, chess.Queen, chess.Rook, chess.Bishop, chess.Knight, chess.Pawn}

// material counts the men of each side by piece type (index chess.PieceType).
type material [2][7]uint8

// materialOf returns the position's material, White first.
func materialOf(pos *chess.Position) material {
	var m material
	for c := chess.White; c <= chess.Black; c++ {
		for pt := chess.Pawn; pt <= chess.King; pt++ {
			m[c][pt] = uint8(pos.Pieces(c, pt).Count())
		}
	}
	return m
}

func (m *material) side(c int) string {
	var b strings.Builder
	for _, pt := range pieceOrder {
		for range m[c][pt] {
			b.WriteByte(" PNBRQK"[pt])
		}
	}
	return b.String()
}

// name spells m White first ("KQvKR").
func (m *material) name() string { return m.side(0) + "v" + m.side(1) }

func (m *material) count(c int) int {
	n := 0
	for _, k := range m[c] {
		n += int(k)
	}
	return n
}

func (m *material) total() int { return m.count(0) + m.count(1) }

func (m *material) pawns(c int) int { return int(m[c][chess.Pawn]) }

// swapped returns m with the sides exchanged.
func (m material) swapped() material { return material{m[1], m[0]} }

// strongerFirst reports whether m already names the side that Syzygy files
// put first: the side with more men, or with as many, the one whose pieces
// rank higher in K Q R B N P order.
func (m *material) strongerFirst() bool {
	a, b := m.count(0), m.count(1)
	if a != b {
		return a > b
	}
	for _, pt := range pieceOrder {
		if m[0][pt] != m[1][pt] {
			return m[0][pt] > m[1][pt]
		}
	}
	return true
}

// canonical returns the material as its table file names it and whether
// the position's White is the table's second side.
func (m material) canonical() (material, bool) {
	if m.strongerFirst() {
		return m, false
	}
	return m.swapped(), true
}

// parseMaterial reads a name such as "KQvKR" (each side's letters in any
// order, each side with one king).
func parseMaterial(s string) (material, bool) {
	var m material
	w, b, ok := strings.Cut(s, "v")
	if !ok {
		return m, false
	}
	for c, side := range [2]string{w, b} {
		for i := 0; i < len(side); i++ {
			j := strings.IndexByte(" PNBRQK", side[i])
			if j <= 0 {
				return m, false
			}
			m[c][j]++
		}
		if m[c][chess.King] != 1 {
			return m, false
		}
	}
	if m.total() > maxPieces {
		return m, false
	}
	return m, true
}

// ParseTableName reads the object name of a Syzygy file where the reader
// looks for it — at a location's root or in its kind's folder ("KQvKR.rtbw",
// "wdl/KQvKR.rtbw", "dtz/KPvK.rtbz") — and returns its kind and its material
// in canonical spelling. Names whose sides are not in the order the
// generator writes are refused, and so are other folders, which the reader
// never opens.
func ParseTableName(name string) (kind Kind, material string, ok bool) {
	dir, base, inFolder := strings.Cut(name, "/")
	if !inFolder {
		base, dir = dir, ""
	}
	base, found := strings.CutSuffix(base, ".rtbw")
	kind = KindWDL
	if !found {
		base, found = strings.CutSuffix(base, ".rtbz")
		kind = KindDTZ
	}
	if !found || inFolder && dir != kind.String() {
		return 0, "", false
	}
	m, ok := parseMaterial(base)
	if !ok || !m.strongerFirst() || m.name() != base {
		return 0, "", false
	}
	return kind, base, true
}
