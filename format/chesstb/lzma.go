package chesstb

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// This file is a raw LZMA decoder specialised for the distance blocks: the
// whole block is the dictionary (output never reaches further back than the
// block start), the unpacked size is known, and decoding can stop at any
// point and resume later from the saved coder state. That lets a probe decode
// only as far into a 1 MiB block as the cell it wants, and a later probe of a
// cell further in pick up where the last one stopped. The result is checked
// against github.com/ulikunitz/xz/lzma (lzma_test.go) on every table block
// and by fuzzing.

// errLZMA marks a malformed LZMA stream.
var errLZMA = errors.New("malformed LZMA stream")

const (
	lzmaNumStates     = 12
	lzmaPosStatesMax  = 16
	lzmaLenLowSyms    = 8
	lzmaLenMidSyms    = 8
	lzmaLenHighSyms   = 256
	lzmaEndPosModel   = 14
	lzmaNumFullDist   = 128
	lzmaNumAlignBits  = 4
	lzmaNumLenToPos   = 4
	lzmaProbInit      = 1024
	lzmaMatchMinLen   = 2
	lzmaTopValue      = 1 << 24
	lzmaBitModelTotal = 1 << 11
	lzmaMoveBits      = 5
)

// lzmaLenDecoder decodes match lengths (0-based, add lzmaMatchMinLen).
type lzmaLenDecoder struct {
	choice, choice2 uint16
	low             [lzmaPosStatesMax][lzmaLenLowSyms]uint16
	mid             [lzmaPosStatesMax][lzmaLenMidSyms]uint16
	high            [lzmaLenHighSyms]uint16
}

func (l *lzmaLenDecoder) init() {
	l.choice, l.choice2 = lzmaProbInit, lzmaProbInit
	for i := range l.low {
		for j := range l.low[i] {
			l.low[i][j] = lzmaProbInit
			l.mid[i][j] = lzmaProbInit
		}
	}
	for i := range l.high {
		l.high[i] = lzmaProbInit
	}
}

// lzmaDecoder is the resumable decoder state of one block.
type lzmaDecoder struct {
	in  []byte
	inp int
	rng uint32
	cod uint32

	lc, lp, pb uint
	state      uint32
	rep        [4]uint32

	isMatch    [lzmaNumStates << 4]uint16
	isRep      [lzmaNumStates]uint16
	isRepG0    [lzmaNumStates]uint16
	isRepG1    [lzmaNumStates]uint16
	isRepG2    [lzmaNumStates]uint16
	isRep0Long [lzmaNumStates << 4]uint16
	posSlot    [lzmaNumLenToPos][1 << 6]uint16
	posDec     [1 + lzmaNumFullDist - lzmaEndPosModel]uint16
	align      [1 << lzmaNumAlignBits]uint16
	lenDec     lzmaLenDecoder
	repLenDec  lzmaLenDecoder
	literal    []uint16
}

// newLZMADecoder prepares to decode a block: stream is the raw LZMA data,
// props the five property bytes the format stores after it.
func newLZMADecoder(stream, props []byte) (*lzmaDecoder, error) {
	if len(props) != lzmaPropsSize {
		return nil, fmt.Errorf("%w: %d property bytes", errLZMA, len(props))
	}
	d := props[0]
	if d >= 9*5*5 {
		return nil, fmt.Errorf("%w: properties byte %#x", errLZMA, d)
	}
	z := &lzmaDecoder{in: stream}
	z.lc, z.lp, z.pb = uint(d%9), uint(d/9%5), uint(d/45)
	if z.lc+z.lp > 8 {
		return nil, fmt.Errorf("%w: lc+lp = %d", errLZMA, z.lc+z.lp)
	}
	z.literal = make([]uint16, 0x300<<(z.lc+z.lp))
	for i := range z.literal {
		z.literal[i] = lzmaProbInit
	}
	for _, p := range [][]uint16{z.isMatch[:], z.isRep[:], z.isRepG0[:], z.isRepG1[:], z.isRepG2[:],
		z.isRep0Long[:], z.posDec[:], z.align[:]} {
		for i := range p {
			p[i] = lzmaProbInit
		}
	}
	for i := range z.posSlot {
		for j := range z.posSlot[i] {
			z.posSlot[i][j] = lzmaProbInit
		}
	}
	z.lenDec.init()
	z.repLenDec.init()
	if len(stream) < 5 || stream[0] != 0 {
		return nil, fmt.Errorf("%w: bad range coder start", errLZMA)
	}
	z.cod = binary.BigEndian.Uint32(stream[1:5])
	z.rng = 0xFFFFFFFF
	z.inp = 5
	if z.cod == z.rng {
		return nil, fmt.Errorf("%w: bad range coder start", errLZMA)
	}
	return z, nil
}

// memSize is the bytes the decoder state holds, for the cache budget.
func (z *lzmaDecoder) memSize() int64 { return 1024 + int64(2*len(z.literal)) + 28*1024 }

// decodeBit decodes one bit with adaptive probability *p. The coder is
// normalised before each bit rather than after, which keeps this function
// small enough to inline. Input past the end reads as zero bytes; decode
// checks for overrun when it stops.
func (z *lzmaDecoder) decodeBit(p *uint16) uint32 {
	if z.rng < lzmaTopValue {
		z.normalize()
	}
	v := uint32(*p)
	bound := (z.rng >> 11) * v
	if z.cod < bound {
		z.rng = bound
		*p = uint16(v + (lzmaBitModelTotal-v)>>lzmaMoveBits)
		return 0
	}
	z.rng -= bound
	z.cod -= bound
	*p = uint16(v - v>>lzmaMoveBits)
	return 1
}

func (z *lzmaDecoder) normalize() {
	z.rng <<= 8
	var b byte
	if z.inp < len(z.in) {
		b = z.in[z.inp]
	}
	z.inp++ // counted past the end so overrun is detected
	z.cod = z.cod<<8 | uint32(b)
}

func (z *lzmaDecoder) directBits(n uint) uint32 {
	var res uint32
	for ; n > 0; n-- {
		if z.rng < lzmaTopValue {
			z.normalize()
		}
		z.rng >>= 1
		t := (z.cod - z.rng) >> 31 // 1 when cod < rng
		z.cod -= z.rng & (t - 1)
		res = res<<1 | (1 - t)
	}
	return res
}

// tree decodes a bits-wide symbol MSB first. Like the literal loops it
// keeps the coder in locals, the hot path of the whole decoder.
func (z *lzmaDecoder) tree(probs []uint16, bits uint) uint32 {
	rng, cod, inp, in := z.rng, z.cod, z.inp, z.in
	m := uint32(1)
	for range bits {
		if rng < lzmaTopValue {
			rng <<= 8
			var b byte
			if inp < len(in) {
				b = in[inp]
			}
			inp++
			cod = cod<<8 | uint32(b)
		}
		pp := &probs[m&uint32(len(probs)-1)]
		v := uint32(*pp)
		bound := (rng >> 11) * v
		if cod < bound {
			rng = bound
			*pp = uint16(v + (lzmaBitModelTotal-v)>>lzmaMoveBits)
			m <<= 1
		} else {
			rng -= bound
			cod -= bound
			*pp = uint16(v - v>>lzmaMoveBits)
			m = m<<1 | 1
		}
	}
	z.rng, z.cod, z.inp = rng, cod, inp
	return m - 1<<bits
}

func (z *lzmaDecoder) reverseTree(probs []uint16, bits uint) uint32 {
	m, sym := uint32(1), uint32(0)
	for i := range bits {
		b := z.decodeBit(&probs[m])
		m = m<<1 | b
		sym |= b << i
	}
	return sym
}

func (z *lzmaDecoder) decodeLen(l *lzmaLenDecoder, posState uint32) uint32 {
	if z.decodeBit(&l.choice) == 0 {
		return z.tree(l.low[posState][:], 3)
	}
	if z.decodeBit(&l.choice2) == 0 {
		return lzmaLenLowSyms + z.tree(l.mid[posState][:], 3)
	}
	return lzmaLenLowSyms + lzmaLenMidSyms + z.tree(l.high[:], 8)
}

// decode fills out[*pos:] until *pos reaches target (it may go a match
// further) or the end of out. out[:*pos] must hold what was decoded before.
func (z *lzmaDecoder) decode(out []byte, pos *int, target int) error {
	p := *pos
	defer func() { *pos = p }()
	target = min(target, len(out))
	pbMask := uint32(1)<<z.pb - 1
	lpMask := uint32(1)<<z.lp - 1
	for p < target {
		if z.inp > len(z.in) {
			return fmt.Errorf("%w: stream ends early", errLZMA)
		}
		posState := uint32(p) & pbMask
		st := z.state
		if z.decodeBit(&z.isMatch[st<<4+posState]) == 0 {
			var prev uint32
			if p > 0 {
				prev = uint32(out[p-1])
			}
			lit := z.literal[0x300*((uint32(p)&lpMask)<<z.lc+prev>>(8-z.lc)):]
			sym := uint32(1)
			if st >= 7 {
				if int(z.rep[0]) >= p {
					return fmt.Errorf("%w: match before the block start", errLZMA)
				}
				match := uint32(out[p-int(z.rep[0])-1])
				for sym < 0x100 {
					mbit := match >> 7 & 1
					match <<= 1
					bit := z.decodeBit(&lit[(1+mbit)<<8+sym])
					sym = sym<<1 | bit
					if mbit != bit {
						break
					}
				}
			}
			for sym < 0x100 {
				sym = sym<<1 | z.decodeBit(&lit[sym])
			}
			out[p] = byte(sym)
			p++
			switch {
			case st < 4:
				z.state = 0
			case st < 10:
				z.state = st - 3
			default:
				z.state = st - 6
			}
			continue
		}
		var length uint32
		if z.decodeBit(&z.isRep[st]) != 0 {
			if p == 0 {
				return fmt.Errorf("%w: repeat match at the block start", errLZMA)
			}
			if z.decodeBit(&z.isRepG0[st]) == 0 {
				if z.decodeBit(&z.isRep0Long[st<<4+posState]) == 0 {
					if st < 7 {
						z.state = 9
					} else {
						z.state = 11
					}
					if int(z.rep[0]) >= p {
						return fmt.Errorf("%w: match before the block start", errLZMA)
					}
					out[p] = out[p-int(z.rep[0])-1]
					p++
					continue
				}
			} else {
				var dist uint32
				if z.decodeBit(&z.isRepG1[st]) == 0 {
					dist = z.rep[1]
				} else {
					if z.decodeBit(&z.isRepG2[st]) == 0 {
						dist = z.rep[2]
					} else {
						dist = z.rep[3]
						z.rep[3] = z.rep[2]
					}
					z.rep[2] = z.rep[1]
				}
				z.rep[1] = z.rep[0]
				z.rep[0] = dist
			}
			length = z.decodeLen(&z.repLenDec, posState)
			if st < 7 {
				z.state = 8
			} else {
				z.state = 11
			}
		} else {
			z.rep[3], z.rep[2], z.rep[1] = z.rep[2], z.rep[1], z.rep[0]
			length = z.decodeLen(&z.lenDec, posState)
			if st < 7 {
				z.state = 7
			} else {
				z.state = 10
			}
			lenState := min(length, lzmaNumLenToPos-1)
			slot := z.tree(z.posSlot[lenState][:], 6)
			dist := slot
			if slot >= 4 {
				nd := uint(slot>>1) - 1
				dist = (2 | slot&1) << nd
				if slot < lzmaEndPosModel {
					dist += z.reverseTree(z.posDec[dist-slot:], nd)
				} else {
					dist += z.directBits(nd-lzmaNumAlignBits) << lzmaNumAlignBits
					dist += z.reverseTree(z.align[:], lzmaNumAlignBits)
				}
			}
			if dist == 0xFFFFFFFF {
				return fmt.Errorf("%w: end marker before the end of the block", errLZMA)
			}
			z.rep[0] = dist
		}
		n := int(length) + lzmaMatchMinLen
		d := int(z.rep[0]) + 1
		if d > p {
			return fmt.Errorf("%w: match before the block start", errLZMA)
		}
		if n > len(out)-p {
			return fmt.Errorf("%w: match past the end of the block", errLZMA)
		}
		src := p - d
		if d >= n {
			copy(out[p:p+n], out[src:src+n])
		} else {
			for i := range n {
				out[p+i] = out[src+i]
			}
		}
		p += n
	}
	if z.inp > len(z.in) {
		return fmt.Errorf("%w: stream ends early", errLZMA)
	}
	return nil
}
