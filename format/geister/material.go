package geister

import (
	"errors"
	"fmt"
	"math/bits"

	"github.com/tbfs/tbfs/geister"
)

// Material is the piece count of a position: blue and red pieces of the side
// to move (PB, PR) and of the opponent (OB, OR). Table materials have every
// count in 1..4; there are 256 of them, numbered 0..255 (see ID).
type Material struct {
	PB, PR, OB, OR int
}

// MaterialOf returns p's piece counts. Counts may be zero or above four
// when p is not a table position; see geister.Position.Validate and Valid.
func MaterialOf(p geister.Position) Material {
	return Material{
		PB: bits.OnesCount64(p.OwnBlue),
		PR: bits.OnesCount64(p.OwnRed),
		OB: bits.OnesCount64(p.OppBlue),
		OR: bits.OnesCount64(p.OppRed),
	}
}

// ObservationMaterial returns the piece counts of o's colourings.
func ObservationMaterial(o geister.Observation) Material {
	n := bits.OnesCount64(o.Opp)
	return Material{PB: bits.OnesCount64(o.OwnBlue), PR: bits.OnesCount64(o.OwnRed), OB: n - o.OppRed, OR: o.OppRed}
}

// NumMaterials is the number of table materials (every count 1..4).
const NumMaterials = 256

// ErrNoMaterial is matched by errors about a material outside the 256 table
// materials (a count of 0 or above 4) or an unknown material id or name.
var ErrNoMaterial = errors.New("geister: not a table material")

// Valid reports whether every count is in 1..4, i.e. m is one of the table
// materials.
func (m Material) Valid() bool {
	return in14(m.PB) && in14(m.PR) && in14(m.OB) && in14(m.OR)
}

func in14(n int) bool { return n >= 1 && n <= 4 }

// Total is the number of pieces on the board.
func (m Material) Total() int { return m.PB + m.PR + m.OB + m.OR }

// Swap returns the material seen from the opponent: (OB, OR, PB, PR).
func (m Material) Swap() Material { return Material{m.OB, m.OR, m.PB, m.PR} }

// String formats m as in the table file names, "pb1pr2ob1or1".
func (m Material) String() string {
	return fmt.Sprintf("pb%dpr%dob%dor%d", m.PB, m.PR, m.OB, m.OR)
}

// ID returns the material's number 0..255, or -1 when m is not a table
// material. Materials are numbered by total piece count (4..16) and, inside
// one total, in increasing lexicographic order of (PB, PR, OB).
func (m Material) ID() int {
	if !m.Valid() {
		return -1
	}
	return int(materialID[m.PB][m.PR][m.OB][m.OR])
}

// FileName returns the name of the material's raw table file,
// "id003_pb1pr2ob1or1_obsblk.bin"; the seekable-zstd form adds ".zst".
// It is empty when m is not a table material.
func (m Material) FileName() string {
	id := m.ID()
	if id < 0 {
		return ""
	}
	return fmt.Sprintf("id%03d_%s_obsblk.bin", id, m)
}

// MaterialByID returns the material numbered id (0..255).
func MaterialByID(id int) (Material, error) {
	if id < 0 || id >= NumMaterials {
		return Material{}, fmt.Errorf("%w: material id %d outside 0..255", ErrNoMaterial, id)
	}
	return materials[id], nil
}

// Materials returns the 256 table materials in id order. The slice is a
// fresh copy.
func Materials() []Material {
	out := make([]Material, NumMaterials)
	copy(out, materials[:])
	return out
}

// ParseMaterial parses the "pb1pr2ob1or1" form of String. The counts must
// be 1..4.
func ParseMaterial(s string) (Material, error) {
	var m Material
	if len(s) != 12 || s[0:2] != "pb" || s[3:5] != "pr" || s[6:8] != "ob" || s[9:11] != "or" {
		return m, fmt.Errorf("%w: %q is not of the form pb1pr1ob1or1", ErrNoMaterial, s)
	}
	digit := func(c byte) int { return int(c) - '0' }
	m = Material{digit(s[2]), digit(s[5]), digit(s[8]), digit(s[11])}
	if !m.Valid() {
		return Material{}, fmt.Errorf("%w: %q has a count outside 1..4", ErrNoMaterial, s)
	}
	return m, nil
}

// BlockSize is the number of ways to colour the opponent's OB+OR pieces with
// OR reds, C(OB+OR, OR): the length of one observation's run of entries.
func (m Material) BlockSize() uint64 {
	if !m.Valid() {
		return 0
	}
	return layoutOf(m).block
}

// OuterEntries is the number of observations (own blues, own reds, opponent
// squares) up to left-right mirror.
func (m Material) OuterEntries() uint64 {
	if !m.Valid() {
		return 0
	}
	return layoutOf(m).outer
}

// Entries is the number of positions in the material's table, which is the
// size in bytes of its raw file: OuterEntries * BlockSize.
func (m Material) Entries() uint64 {
	if !m.Valid() {
		return 0
	}
	return layoutOf(m).entries
}

// LegacyEntries is the size of the reference builder's in-memory index,
// which treats the four piece kinds as four sets and counts mirror images
// once. It equals Entries except for the 32 mirror-fixed materials.
func (m Material) LegacyEntries() uint64 {
	if !m.Valid() {
		return 0
	}
	full := binom[36][m.PB] * binom[36-m.PB][m.PR] * binom[36-m.PB-m.PR][m.OB] * binom[36-m.PB-m.PR-m.OB][m.OR]
	var fixed uint64
	if m.PB%2 == 0 && m.PR%2 == 0 && m.OB%2 == 0 && m.OR%2 == 0 {
		a, b, c, d := m.PB/2, m.PR/2, m.OB/2, m.OR/2
		fixed = binom[18][a] * binom[18-a][b] * binom[18-a-b][c] * binom[18-a-b-c][d]
	}
	return (full + fixed) / 2
}

// MirrorFixed reports whether the material has observations that are their
// own mirror image (possible when PB, PR and OB+OR are all even). The obsblk
// table stores every colouring of such an observation, also the colourings
// that are mirror images of each other, so its Entries exceed the reference
// builder's in-memory LegacyEntries. There are 32 such materials (OB and OR
// both odd or both even; the first is id013 pb2pr2ob1or1), and the public
// reference builder cannot write their files.
func (m Material) MirrorFixed() bool {
	return m.Valid() && m.PB%2 == 0 && m.PR%2 == 0 && (m.OB+m.OR)%2 == 0
}

var (
	materials  [NumMaterials]Material
	materialID [5][5][5][5]int16
)

func init() {
	id := 0
	for total := 4; total <= 16; total++ {
		for pb := 1; pb <= 4; pb++ {
			for pr := 1; pr <= 4; pr++ {
				for ob := 1; ob <= 4; ob++ {
					or := total - pb - pr - ob
					if !in14(or) {
						continue
					}
					materials[id] = Material{pb, pr, ob, or}
					materialID[pb][pr][ob][or] = int16(id)
					id++
				}
			}
		}
	}
	if id != NumMaterials {
		panic("geister: material enumeration is broken")
	}
}
