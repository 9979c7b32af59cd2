package syzygy

// The position index of a sub-table. Pawnless tables use the board's
// eightfold symmetry: the first men (the two kings when no other man is
// unique, else the first three) go into a joint index over the a1-d1-d4
// triangle, and the rest of the men, in groups of like pieces, are placed
// as combinations on the squares left. Tables with pawns use the left-right
// symmetry only: the leading pawns' file (a-d) picks the sub-table, the
// leading pawns and the other side's pawns are placed on the 48 pawn
// squares, and the pieces after them. The order of the groups in the index
// is stored in the header.

// enc is how the men of a sub-table are placed.
type enc uint8

const (
	encPiece enc = iota // pawnless
	encFile             // pawns, sub-table by leading pawn file
)

var (
	triangle  [64]uint8 // a1-d1-d4 triangle index of a square
	lower     [64]uint8 // index among squares on or below the a1-h8 diagonal
	diagIdx   [64]uint8 // index of a square on a long diagonal
	offDiag   [64]int8  // +1 above the a1-h8 diagonal, -1 below, 0 on it
	flipDiag  [64]uint8 // square mirrored in the a1-h8 diagonal
	flap      [64]uint8 // leading-pawn index: file (folded) and rank
	pawnTwist [64]uint8 // order of pawn squares within the pawn index
	kkIdx     [10][64]int16
	binomial  [7][64]uint64
	pawnIdx   [6][24]uint64
	pawnFileF [6][4]uint64 // positions of k leading pawns per file
)

func fold(file int) int { return min(file, 7-file) }

func init() {
	for sq := range 64 {
		f, r := sq&7, sq>>3
		flipDiag[sq] = uint8(f*8 + r)
		switch {
		case r > f:
			offDiag[sq] = 1
		case r < f:
			offDiag[sq] = -1
		}
	}
	// Triangle: the six squares below the diagonal first, in square
	// order, then the four on it; every other square takes the index of
	// its image in the triangle.
	var tri [64]int
	for i := range tri {
		tri[i] = -1
	}
	n := 0
	for _, sq := range []int{1, 2, 3, 10, 11, 19, 0, 9, 18, 27} {
		tri[sq] = n
		n++
	}
	for sq := range 64 {
		s := sq
		if s&7 >= 4 {
			s ^= 7
		}
		if s>>3 >= 4 {
			s ^= 0x38
		}
		if offDiag[s] > 0 {
			s = int(flipDiag[s])
		}
		triangle[sq] = uint8(tri[s])
	}
	// Lower: below the diagonal in square order, then the diagonal.
	n = 0
	for sq := range 64 {
		if offDiag[sq] < 0 {
			lower[sq] = uint8(n)
			n++
		}
	}
	for sq := range 64 {
		switch {
		case offDiag[sq] == 0:
			lower[sq] = uint8(28 + sq>>3)
		case offDiag[sq] > 0:
			lower[sq] = lower[flipDiag[sq]]
		}
	}
	// Diagonals: a1-h8 as 0-7, then h1-a8 as 8-15.
	n = 8
	for sq := range 64 {
		f, r := sq&7, sq>>3
		if f == r {
			diagIdx[sq] = uint8(r)
		} else if f+r == 7 {
			diagIdx[sq] = uint8(n)
			n++
		}
	}
	for sq := 8; sq < 56; sq++ {
		f, r := sq&7, sq>>3
		flap[sq] = uint8(fold(f)*6 + r - 1)
		side := 0
		if f < 4 {
			side = 1
		}
		pawnTwist[sq] = uint8((3-fold(f))*12 + side + 2*(6-r))
	}
	// King pairs: white king in the triangle (below the diagonal, then on
	// it), black king anywhere not next to it; where the white king is on
	// the diagonal, the black king first below the diagonal, and only
	// after all those, on it.
	for i := range kkIdx {
		for j := range kkIdx[i] {
			kkIdx[i][j] = -1
		}
	}
	triSq := []int{1, 2, 3, 10, 11, 19, 0, 9, 18, 27}
	n = 0
	apart := func(a, b int) bool {
		df, dr := a&7-b&7, a>>3-b>>3
		return max(df, -df) > 1 || max(dr, -dr) > 1
	}
	for t, wk := range triSq {
		for bk := range 64 {
			if !apart(wk, bk) || (t >= 6 && offDiag[bk] >= 0) {
				continue
			}
			kkIdx[t][bk] = int16(n)
			n++
		}
	}
	for t := 6; t < 10; t++ {
		wk := triSq[t]
		for bk := range 64 {
			if apart(wk, bk) && offDiag[bk] == 0 {
				kkIdx[t][bk] = int16(n)
				n++
			}
		}
	}
	for k := range 7 {
		for n := range 64 {
			f, l := uint64(1), uint64(1)
			for i := range k {
				f *= uint64(n - i)
				l *= uint64(i + 1)
			}
			binomial[k][n] = f / l
		}
	}
	for k := range 6 {
		var s uint64
		for j := range 24 {
			pawnIdx[k][j] = s
			s += binomial[k][pawnTwist[(1+j%6)*8+j/6]]
			if (j+1)%6 == 0 {
				pawnFileF[k][j/6] = s
				s = 0
			}
		}
	}
}

// combos counts the ways to put k like men on n squares.
func combos(k, n int) uint64 {
	f, l := uint64(n), uint64(1)
	for i := 1; i < k; i++ {
		f *= uint64(n - i)
		l *= uint64(i + 1)
	}
	return f / l
}

// encInfo is the placement of one sub-table's men.
type encInfo struct {
	pieces [maxPieces]uint8 // piece codes (type, +8 for the second side) in index order
	norm   [maxPieces]uint8 // size of the group starting at each man
	factor [maxPieces]uint64
	size   uint64 // positions
	pairs  *pairsData
}

// layout describes what every sub-table of one file has in common.
type layout struct {
	num       int  // men
	kk        bool // pawnless, only the kings unique: king pair index
	hasPawns  bool
	lead      [2]int // leading pawns, other side's pawns (table orientation)
	symmetric bool
}

// newEncInfo reads one sub-table's piece order from the header bytes b
// (shift 0 for the first side to move, 4 for the second) and computes the
// index factors. file is the leading pawn's file for tables with pawns.
func newEncInfo(lay *layout, mat *material, b []byte, shift uint, file int) (*encInfo, error) {
	e := &encInfo{}
	morePawns := 0
	if lay.hasPawns && lay.lead[1] > 0 {
		morePawns = 1
	}
	if len(b) < 1+morePawns+lay.num {
		return nil, corruptf("truncated piece order")
	}
	for i := range lay.num {
		e.pieces[i] = b[i+1+morePawns] >> shift & 0xf
	}
	if err := checkPieces(lay, mat, e); err != nil {
		return nil, err
	}
	order := int(b[0] >> shift & 0xf)
	order2 := 0xf
	if morePawns == 1 {
		order2 = int(b[1] >> shift & 0xf)
	}
	k := 3
	switch {
	case lay.hasPawns:
		k = lay.lead[0]
	case lay.kk:
		k = 2
	}
	e.norm[0] = uint8(k)
	if morePawns == 1 {
		e.norm[k] = uint8(lay.lead[1])
		k += lay.lead[1]
	}
	for i := k; i < lay.num; i += int(e.norm[i]) {
		for j := i; j < lay.num && e.pieces[j] == e.pieces[i]; j++ {
			e.norm[i]++
		}
	}
	n := 64 - k
	f := uint64(1)
	seen, seen2 := false, morePawns == 0
	for i := 0; k < lay.num || i == order || i == order2; i++ {
		var g uint64
		switch {
		case i == order:
			e.factor[0] = f
			switch {
			case lay.hasPawns:
				g = pawnFileF[e.norm[0]-1][file]
			case lay.kk:
				g = 462
			default:
				g = 31332
			}
			seen = true
		case i == order2:
			e.factor[e.norm[0]] = f
			g = combos(int(e.norm[e.norm[0]]), 48-int(e.norm[0]))
			seen2 = true
		default:
			e.factor[k] = f
			g = combos(int(e.norm[k]), n)
			n -= int(e.norm[k])
			k += int(e.norm[k])
		}
		if g == 0 || f > (1<<62)/g {
			return nil, corruptf("index size overflows")
		}
		f *= g
	}
	if !seen || !seen2 {
		return nil, corruptf("piece order %d/%d names no group", order, order2)
	}
	e.size = f
	return e, nil
}

// checkPieces makes sure a sub-table's pieces are the file's material, each
// kind in one run, the leading pawns first.
func checkPieces(lay *layout, mat *material, e *encInfo) error {
	var count [16]int
	for i := range lay.num {
		pc := e.pieces[i]
		if pc&7 == 0 || pc&7 > 6 {
			return corruptf("piece code %d", pc)
		}
		if i > 0 && pc != e.pieces[i-1] && count[pc] > 0 {
			return corruptf("piece code %d split in the order", pc)
		}
		count[pc]++
	}
	for c := range 2 {
		for pt := 1; pt <= 6; pt++ {
			if count[c*8+pt] != int(mat[c][pt]) {
				return corruptf("piece order does not match the material")
			}
		}
	}
	if lay.hasPawns {
		lead := e.pieces[0]
		if lead&7 != 1 || count[lead] != lay.lead[0] {
			return corruptf("leading pawns are not first")
		}
		if lay.lead[1] > 0 && (e.pieces[lay.lead[0]] != lead^8) {
			return corruptf("other pawns do not follow the leading pawns")
		}
	} else if lay.kk && (e.pieces[0]&7 != 6 || e.pieces[1]&7 != 6) {
		return corruptf("king pair is not first")
	}
	return nil
}

// encode returns the index of the men on squares p (in the order of
// e.pieces), which it reorders. It reports false when the squares do not
// form a position the index holds.
func (e *encInfo) encode(lay *layout, p []int, how enc) (uint64, bool) {
	n := lay.num
	if p[0]&4 != 0 {
		for i := range n {
			p[i] ^= 7
		}
	}
	var idx uint64
	var k int
	if how == encPiece {
		if p[0]&0x20 != 0 {
			for i := range n {
				p[i] ^= 0x38
			}
		}
		first := 3
		if lay.kk {
			first = 2
		}
		for i := range n {
			if d := offDiag[p[i]]; d != 0 {
				if d > 0 && i < first {
					for j := range n {
						p[j] = int(flipDiag[p[j]])
					}
				}
				break
			}
		}
		if lay.kk {
			v := kkIdx[triangle[p[0]]][p[1]]
			if v < 0 {
				return 0, false
			}
			idx = uint64(v)
			k = 2
		} else {
			s1 := b2i(p[1] > p[0])
			s2 := b2i(p[2] > p[0]) + b2i(p[2] > p[1])
			switch {
			case offDiag[p[0]] != 0:
				idx = uint64(triangle[p[0]])*63*62 + uint64(p[1]-s1)*62 + uint64(p[2]-s2)
			case offDiag[p[1]] != 0:
				idx = 6*63*62 + uint64(diagIdx[p[0]])*28*62 + uint64(lower[p[1]])*62 + uint64(p[2]-s2)
			case offDiag[p[2]] != 0:
				idx = 6*63*62 + 4*28*62 + uint64(diagIdx[p[0]])*7*28 + uint64(int(diagIdx[p[1]])-s1)*28 + uint64(lower[p[2]])
			default:
				idx = 6*63*62 + 4*28*62 + 4*7*28 + uint64(diagIdx[p[0]])*7*6 + uint64(int(diagIdx[p[1]])-s1)*6 + uint64(int(diagIdx[p[2]])-s2)
			}
			k = 3
		}
		idx *= e.factor[0]
	} else {
		k = lay.lead[0]
		for i := 1; i < k; i++ {
			for j := i + 1; j < k; j++ {
				if pawnTwist[p[i]] < pawnTwist[p[j]] {
					p[i], p[j] = p[j], p[i]
				}
			}
		}
		idx = pawnIdx[k-1][flap[p[0]]]
		for i := 1; i < k; i++ {
			idx += binomial[k-i][pawnTwist[p[i]]]
		}
		idx *= e.factor[0]
		if m := lay.lead[1]; m > 0 {
			t := k + m
			sortSquares(p[k:t])
			var s uint64
			for i := k; i < t; i++ {
				skips := 0
				for j := range k {
					skips += b2i(p[i] > p[j])
				}
				s += binomial[i-k+1][p[i]-skips-8]
			}
			idx += s * e.factor[k]
			k = t
		}
	}
	for k < n {
		t := k + int(e.norm[k])
		sortSquares(p[k:t])
		var s uint64
		for i := k; i < t; i++ {
			skips := 0
			for j := range k {
				skips += b2i(p[i] > p[j])
			}
			s += binomial[i-k+1][p[i]-skips]
		}
		idx += s * e.factor[k]
		k = t
	}
	return idx, true
}

// leadingPawn moves the leading pawn (the one the index keys on) to p[0]
// and returns its folded file.
func leadingPawn(lay *layout, p []int) int {
	for i := 1; i < lay.lead[0]; i++ {
		if flap[p[0]] > flap[p[i]] {
			p[0], p[i] = p[i], p[0]
		}
	}
	return fold(p[0] & 7)
}

func sortSquares(s []int) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j-1] > s[j]; j-- {
			s[j-1], s[j] = s[j], s[j-1]
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
