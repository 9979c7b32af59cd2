// Package attacktables computes the chess package's precomputed attack
// tables and writes them as Go source. The chess package ships that source
// (attacks_tables.go, made by go generate), so the tables are read-only data
// in the binary: no start-up work, and only the pages a search touches are
// ever read in. The chess tests check the shipped file equals Build's
// output and check the tables themselves against the rules.
//
// Sliders use magic bitboards: the occupancy of a square's relevant rays is
// multiplied by a per-square magic number and shifted to index a table of
// attack sets. The known magics below were found by this package's own
// deterministic search; Build verifies each while filling the tables and
// searches afresh for any that does not fit, so they only save time.
package attacktables

import (
	"fmt"
	"go/format"
	"io"
	"math/bits"
	"strings"
)

// RookTableSize and BishopTableSize are the sums over the squares of
// 2^(relevant squares): every occupancy of every square's rays.
const (
	RookTableSize   = 102400
	BishopTableSize = 5248
)

// Magic is one square's slider lookup: index = (occ&Mask)*Magic>>Shift + Offset.
type Magic struct {
	Mask, Magic uint64
	Shift       uint8
	Offset      uint32
}

// Tables are all the attack tables, indexed by square 0 (a1) to 63 (h8),
// file-major within a rank (b1 is 1).
type Tables struct {
	Knight, King [64]uint64
	// Pawn is indexed by colour (0 white, 1 black) then square.
	Pawn [2][64]uint64
	// Between[a][b] holds the squares strictly between a and b when they
	// share a line, else nothing; Line[a][b] the whole line through both.
	Between, Line            [64][64]uint64
	RookMagics, BishopMagics [64]Magic
	RookTable                [RookTableSize]uint64
	BishopTable              [BishopTableSize]uint64
}

// allDirs are the rook directions then the bishop directions as (file,
// rank) steps, each direction that goes up the board (to higher squares)
// at an even index and its opposite after it.
var allDirs = [8][2]int{{1, 0}, {-1, 0}, {0, 1}, {0, -1}, {1, 1}, {-1, -1}, {-1, 1}, {1, -1}}

func onBoard(f, r int) bool { return f >= 0 && f < 8 && r >= 0 && r < 8 }

func bit(f, r int) uint64 { return 1 << uint(r*8+f) }

// slideRay returns the squares a slider on sq reaches in direction d on an
// empty board.
func slideRay(sq int, d [2]int) uint64 {
	var b uint64
	for f, r := sq%8+d[0], sq/8+d[1]; onBoard(f, r); f, r = f+d[0], r+d[1] {
		b |= bit(f, r)
	}
	return b
}

// Build computes every table.
func Build() *Tables {
	t := new(Tables)
	for sq := range 64 {
		f, r := sq%8, sq/8
		for _, d := range [8][2]int{{1, 2}, {2, 1}, {2, -1}, {1, -2}, {-1, -2}, {-2, -1}, {-2, 1}, {-1, 2}} {
			if onBoard(f+d[0], r+d[1]) {
				t.Knight[sq] |= bit(f+d[0], r+d[1])
			}
		}
		for df := -1; df <= 1; df++ {
			for dr := -1; dr <= 1; dr++ {
				if (df != 0 || dr != 0) && onBoard(f+df, r+dr) {
					t.King[sq] |= bit(f+df, r+dr)
				}
			}
		}
		for _, df := range [2]int{-1, 1} {
			if onBoard(f+df, r+1) {
				t.Pawn[0][sq] |= bit(f+df, r+1)
			}
			if onBoard(f+df, r-1) {
				t.Pawn[1][sq] |= bit(f+df, r-1)
			}
		}
	}
	var rays [64][8]uint64
	for sq := range 64 {
		for k, d := range allDirs {
			rays[sq][k] = slideRay(sq, d)
		}
	}
	buildMagics(&t.RookMagics, &rookSeeds, &rays, 0, 0x9e3779b97f4a7c15, t.RookTable[:])
	buildMagics(&t.BishopMagics, &bishopSeeds, &rays, 4, 0xd1b54a32d192ed03, t.BishopTable[:])
	// a and b share a line when b is on one of a's rays; the squares
	// between them are on a's ray towards b and b's ray back.
	for a := range 64 {
		for k := range allDirs {
			back := k ^ 1
			for r := rays[a][k]; r != 0; r &= r - 1 {
				b := bits.TrailingZeros64(r)
				t.Between[a][b] = rays[a][k] & rays[b][back]
				t.Line[a][b] = rays[a][k] | rays[a][back] | 1<<uint(a)
			}
		}
	}
	return t
}

// rayPart is one occupancy of a ray's relevant squares (all but the last)
// and the ray's attacks under it.
type rayPart struct{ occ, att uint64 }

// rayParts appends to buf and returns every occupancy of the relevant
// squares of the ray from sq in direction allDirs[k], with its attacks: the
// ray cut behind its first occupied square, the lowest one on a ray that
// goes up the board (even k) and the highest on one that goes down.
func rayParts(rays *[64][8]uint64, sq, k int, buf []rayPart) []rayPart {
	ray := rays[sq][k]
	mask := ray
	if ray != 0 {
		last := 63 - bits.LeadingZeros64(ray) // the far end going up
		if k&1 != 0 {
			last = bits.TrailingZeros64(ray)
		}
		mask &^= 1 << uint(last)
	}
	buf = buf[:0]
	var sub uint64
	for {
		att := ray
		if sub != 0 {
			s := bits.TrailingZeros64(sub)
			if k&1 != 0 {
				s = 63 - bits.LeadingZeros64(sub)
			}
			att &^= rays[s][k]
		}
		buf = append(buf, rayPart{sub, att})
		if sub = (sub - mask) & mask; sub == 0 {
			return buf
		}
	}
}

// buildMagics fills table, the shared attack table of the slider whose
// directions are allDirs[first:first+4], using the known magic of each
// square when it maps every occupancy without a harmful collision and
// searching for a new one otherwise.
func buildMagics(ms *[64]Magic, known *[64]uint64, rays *[64][8]uint64, first int, seed uint64, table []uint64) {
	rng := xorshift{seed}
	offset := 0
	var occs, atts []uint64
	var used []int32
	var parts [4][]rayPart
	for sq := range 64 {
		m := &ms[sq]
		// The relevant squares are the rays without their last square:
		// every occupancy of them is one of each ray's parts.
		for i := range parts {
			parts[i] = rayParts(rays, sq, first+i, parts[i])
			m.Mask |= parts[i][len(parts[i])-1].occ
		}
		n := bits.OnesCount64(m.Mask)
		m.Shift = uint8(64 - n)
		m.Offset = uint32(offset)
		size := 1 << n
		occs, atts = occs[:0], atts[:0]
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
				if bits.OnesCount64(m.Mask*cand>>56) < 6 {
					continue
				}
			}
			m.Magic = cand
			ok := true
			for i, o := range occs {
				idx := o * cand >> m.Shift
				if used[idx] != attempt {
					used[idx] = attempt
					table[m.Offset+uint32(idx)] = atts[i]
				} else if table[m.Offset+uint32(idx)] != atts[i] {
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
		panic("attacktables: slider table size is wrong")
	}
}

type xorshift struct{ s uint64 }

func (x *xorshift) next() uint64 {
	x.s ^= x.s >> 12
	x.s ^= x.s << 25
	x.s ^= x.s >> 27
	return x.s * 2685821657736338717
}

// WriteGo writes t as the Go source of package pkg: variables knightAttacks,
// kingAttacks, pawnAttacks, between, line (of type Bitboard), rookMagics and
// bishopMagics (of type magic, a struct of mask, magic, shift, offset) and
// rookTable, bishopTable, sized by the constants rookTableSize and
// bishopTableSize, which pkg declares.
func (t *Tables) WriteGo(w io.Writer, pkg string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "// Code generated by gen_tables.go (chess/internal/attacktables); DO NOT EDIT.\n\npackage %s\n\n", pkg)
	list := func(vs []uint64) {
		for i, v := range vs {
			sep := " "
			if i%8 == 0 {
				sep = "\n"
			}
			fmt.Fprintf(&b, "%s%#x,", sep, v)
		}
		b.WriteString("\n")
	}
	decl := func(name, typ string, vs []uint64) {
		fmt.Fprintf(&b, "var %s = %s{", name, typ)
		list(vs)
		b.WriteString("}\n\n")
	}
	square := func(name string, vs *[64][64]uint64) {
		fmt.Fprintf(&b, "var %s = [64][64]Bitboard{\n", name)
		for i := range vs {
			b.WriteString("{")
			list(vs[i][:])
			b.WriteString("},\n")
		}
		b.WriteString("}\n\n")
	}
	magics := func(name string, ms *[64]Magic) {
		fmt.Fprintf(&b, "var %s = [64]magic{\n", name)
		for _, m := range ms {
			fmt.Fprintf(&b, "{%#x, %#x, %d, %d},\n", m.Mask, m.Magic, m.Shift, m.Offset)
		}
		b.WriteString("}\n\n")
	}
	decl("knightAttacks", "[64]Bitboard", t.Knight[:])
	decl("kingAttacks", "[64]Bitboard", t.King[:])
	fmt.Fprintf(&b, "var pawnAttacks = [2][64]Bitboard{\n")
	for c := range t.Pawn {
		b.WriteString("{")
		list(t.Pawn[c][:])
		b.WriteString("},\n")
	}
	b.WriteString("}\n\n")
	square("between", &t.Between)
	square("line", &t.Line)
	magics("rookMagics", &t.RookMagics)
	magics("bishopMagics", &t.BishopMagics)
	decl("rookTable", "[rookTableSize]Bitboard", t.RookTable[:])
	decl("bishopTable", "[bishopTableSize]Bitboard", t.BishopTable[:])
	src, err := format.Source([]byte(b.String()))
	if err != nil {
		return fmt.Errorf("attacktables: formatting the generated source: %w", err)
	}
	_, err = w.Write(src)
	return err
}

// rookSeeds and bishopSeeds are known-good magics per square (see the
// package comment).
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
