package retro

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tbfs/tbfs/chess"
)

// ErrMaterial is wrapped by every error about a material name or a position
// that does not belong to a table's material.
var ErrMaterial = errors.New("retro: bad material")

// ErrUnsupported is wrapped when a material is well formed but outside what
// SolveMaterial handles: more men than the index holds.
var ErrUnsupported = errors.New("retro: unsupported material")

// pieceOrder is the order pieces are written in a material name and laid
// out in the index: queens, rooks, bishops, knights, pawns.
var pieceOrder = [...]chess.PieceType{chess.Queen, chess.Rook, chess.Bishop, chess.Knight, chess.Pawn}

// material is a set of pieces: one king per side plus the listed pieces, in
// pieceOrder within each side.
type material struct {
	side [2][]chess.PieceType // pieces besides the king, by colour
}

// parseMaterial reads names such as "KQK", "KQvK", "KBNK" or "KRKP": the
// first side's king and pieces, then the second side's, optionally
// separated by 'v'. The first side is White.
func parseMaterial(s string) (material, error) {
	var m material
	t := strings.ToUpper(s)
	var halves [2]string
	if i := strings.IndexByte(t, 'V'); i >= 0 {
		halves[0], halves[1] = t[:i], t[i+1:]
	} else {
		j := strings.IndexByte(t[min(1, len(t)):], 'K')
		if !strings.HasPrefix(t, "K") || j < 0 {
			return m, fmt.Errorf("%w: %q: want two kings, as in KQK or KQvK", ErrMaterial, s)
		}
		halves[0], halves[1] = t[:j+1], t[j+1:]
	}
	for c, h := range halves {
		if !strings.HasPrefix(h, "K") || strings.Count(h, "K") != 1 {
			return m, fmt.Errorf("%w: %q: each side needs exactly one king, written first", ErrMaterial, s)
		}
		var counts [7]int
		for _, ch := range h[1:] {
			pt, ok := map[rune]chess.PieceType{'Q': chess.Queen, 'R': chess.Rook, 'B': chess.Bishop, 'N': chess.Knight, 'P': chess.Pawn}[ch]
			if !ok {
				return m, fmt.Errorf("%w: %q: unknown piece letter %q", ErrMaterial, s, ch)
			}
			counts[pt]++
		}
		for _, pt := range pieceOrder {
			for range counts[pt] {
				m.side[c] = append(m.side[c], pt)
			}
		}
	}
	return m, nil
}

// materialOf returns the material of a position, White first.
func materialOf(p *chess.Position) material {
	var m material
	for c := chess.White; c <= chess.Black; c++ {
		for _, pt := range pieceOrder {
			for range p.Pieces(c, pt).Count() {
				m.side[c] = append(m.side[c], pt)
			}
		}
	}
	return m
}

// men returns the number of pieces, kings included.
func (m material) men() int { return 2 + len(m.side[0]) + len(m.side[1]) }

func (m material) hasPawns() bool {
	for _, s := range m.side {
		for _, pt := range s {
			if pt == chess.Pawn {
				return true
			}
		}
	}
	return false
}

func sideName(s []chess.PieceType) string {
	var b strings.Builder
	b.WriteByte('K')
	for _, pt := range s {
		b.WriteString(strings.ToUpper(pt.String()))
	}
	return b.String()
}

// String returns the name in the chesstb style, "KQK".
func (m material) String() string { return sideName(m.side[0]) + sideName(m.side[1]) }

// mirrored returns the material with the colours swapped.
func (m material) mirrored() material {
	return material{side: [2][]chess.PieceType{m.side[1], m.side[0]}}
}

func (m material) equal(o material) bool {
	return sideName(m.side[0]) == sideName(o.side[0]) && sideName(m.side[1]) == sideName(o.side[1])
}

// canonical returns the orientation with the stronger side first, so that
// a material and its colour flip share one table. Strength is the usual
// piece-value sum, then the number of pieces, then the name.
func (m material) canonical() material {
	a, b := strength(m.side[0]), strength(m.side[1])
	switch {
	case a > b:
		return m
	case a < b:
		return m.mirrored()
	case len(m.side[0]) != len(m.side[1]):
		if len(m.side[0]) > len(m.side[1]) {
			return m
		}
		return m.mirrored()
	case sideName(m.side[0]) >= sideName(m.side[1]):
		return m
	}
	return m.mirrored()
}

func strength(s []chess.PieceType) int {
	n := 0
	for _, pt := range s {
		n += [...]int{chess.Pawn: 1, chess.Knight: 3, chess.Bishop: 3, chess.Rook: 5, chess.Queen: 9}[pt]
	}
	return n
}
