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

// memSize is the bytes the decoder state holds with the compressed stream
// it reads, for the cache budget.
func (z *lzmaDecoder) memSize() int64 {
	return 1024 + int64(2*len(z.literal)) + 28*1024 + int64(len(z.in))
}

// The range coder lives in locals of decode (rng, cod and the input
// position), passed through these small functions by value: they inline, so
// the coder stays in registers across the hot loops instead of being loaded
// and stored through the decoder pointer for every bit. The coder is
// normalised before each bit rather than after. Input past the end reads as
// zero bytes; decode checks for overrun when it stops.

// rcNorm shifts in one more input byte when the range has grown too small.
func rcNorm(rng, cod uint32, in []byte, inp int) (uint32, uint32, int) {
	if rng < lzmaTopValue {
		rng <<= 8
		var b byte
		if uint(inp) < uint(len(in)) {
			b = in[inp]
		}
		inp++ // counted past the end so overrun is detected
		cod = cod<<8 | uint32(b)
	}
	return rng, cod, inp
}

// rcBitFlat is rcBit without a branch, for the plain literal bits: they are
// the hardest to predict, and there a mispredicted branch costs more than
// the few extra instructions (measured on BenchmarkLZMABlock; elsewhere the
// branchy form wins).
func rcBitFlat(p *uint16, rng, cod uint32) (uint32, uint32, uint32) {
	v := uint32(*p)
	bound := (rng >> 11) * v
	// m is all ones when the bit is 0 (cod < bound).
	m := uint32((int64(cod) - int64(bound)) >> 63)
	rng = bound&m | (rng-bound)&^m
	cod -= bound &^ m
	// For a 0 bit v grows by (2048-v)>>5, for a 1 bit it shrinks by v>>5;
	// with v-2017 ≤ 0 the arithmetic shift rounds the 0 case the same way.
	*p = uint16(int32(v) - (int32(v)-int32(2017&m))>>lzmaMoveBits)
	return rng, cod, 1 + m
}

// rcBit decodes one bit with adaptive probability *p (the coder already
// normalised) and returns the new range, code and the bit.
func rcBit(p *uint16, rng, cod uint32) (uint32, uint32, uint32) {
	v := uint32(*p)
	bound := (rng >> 11) * v
	if cod < bound {
		*p = uint16(v + (lzmaBitModelTotal-v)>>lzmaMoveBits)
		return bound, cod, 0
	}
	*p = uint16(v - v>>lzmaMoveBits)
	return rng - bound, cod - bound, 1
}

// decodeLen decodes a match length (0-based) with the coder passed in and
// out by value.
func (l *lzmaLenDecoder) decodeLen(posState, rng, cod uint32, in []byte, inp int) (length, rng2, cod2 uint32, inp2 int) {
	var bit uint32
	rng, cod, inp = rcNorm(rng, cod, in, inp)
	rng, cod, bit = rcBit(&l.choice, rng, cod)
	var probs []uint16
	var bits uint
	switch {
	case bit == 0:
		probs, bits = l.low[posState&(lzmaPosStatesMax-1)][:], 3
	default:
		rng, cod, inp = rcNorm(rng, cod, in, inp)
		rng, cod, bit = rcBit(&l.choice2, rng, cod)
		if bit == 0 {
			probs, bits, length = l.mid[posState&(lzmaPosStatesMax-1)][:], 3, lzmaLenLowSyms
		} else {
			probs, bits, length = l.high[:], 8, lzmaLenLowSyms+lzmaLenMidSyms
		}
	}
	m := uint32(1)
	mask := uint32(len(probs) - 1)
	for range bits {
		rng, cod, inp = rcNorm(rng, cod, in, inp)
		rng, cod, bit = rcBit(&probs[m&mask], rng, cod)
		m = m<<1 | bit
	}
	return length + m - 1<<bits, rng, cod, inp
}

// errLZMAEarly is the overrun failure: the stream ended before the block.
var errLZMAEarly = fmt.Errorf("%w: stream ends early", errLZMA)

// lzmaMaxMatch is the longest match: decoding to a target may write this
// many bytes past it.
const lzmaMaxMatch = lzmaMatchMinLen + lzmaLenLowSyms + lzmaLenMidSyms + lzmaLenHighSyms - 1

// decode fills out[*pos:] until *pos reaches target (it may go a match
// further) or the end of out, the end of the block. out[:*pos] must hold
// what was decoded before. On failure the decoder is left unusable.
func (z *lzmaDecoder) decode(out []byte, pos *int, target int) error {
	return z.decodeTo(out, pos, target, len(out))
}

// decodeTo is decode into the first bytes of a block of size bytes: out may
// be shorter than the block, and decoding stops at target or len(out),
// whichever comes first. A target at least lzmaMaxMatch short of len(out)
// (or of the block's end) is always reached.
func (z *lzmaDecoder) decodeTo(out []byte, pos *int, target, size int) error {
	p := *pos
	target = min(target, len(out), size)
	in, inp, rng, cod := z.in, z.inp, z.rng, z.cod
	state := z.state
	rep0, rep1, rep2, rep3 := z.rep[0], z.rep[1], z.rep[2], z.rep[3]
	pbMask := uint32(1)<<z.pb - 1
	lpMask := uint32(1)<<z.lp - 1
	lc := z.lc
	var err error
	var bit uint32
loop:
	for p < target {
		if inp > len(in) {
			err = errLZMAEarly
			break
		}
		posState := uint32(p) & pbMask
		rng, cod, inp = rcNorm(rng, cod, in, inp)
		rng, cod, bit = rcBit(&z.isMatch[state<<4|posState], rng, cod)
		if bit == 0 {
			var prev uint32
			if p > 0 {
				prev = uint32(out[p-1])
			}
			base := 0x300 * int((uint32(p)&lpMask)<<lc+prev>>(8-lc))
			lit := (*[0x300]uint16)(z.literal[base : base+0x300])
			sym := uint32(1)
			if state >= 7 {
				if int(rep0) >= p {
					err = fmt.Errorf("%w: match before the block start", errLZMA)
					break
				}
				match := uint32(out[p-int(rep0)-1])
				for sym < 0x100 {
					mbit := match >> 7 & 1
					match <<= 1
					rng, cod, inp = rcNorm(rng, cod, in, inp)
					rng, cod, bit = rcBit(&lit[0x100+mbit<<8+sym], rng, cod)
					sym = sym<<1 | bit
					if mbit != bit {
						break
					}
				}
			}
			for sym < 0x100 {
				rng, cod, inp = rcNorm(rng, cod, in, inp)
				rng, cod, bit = rcBitFlat(&lit[sym], rng, cod)
				sym = sym<<1 | bit
			}
			out[p] = byte(sym)
			p++
			switch {
			case state < 4:
				state = 0
			case state < 10:
				state -= 3
			default:
				state -= 6
			}
			continue
		}
		var length uint32
		rng, cod, inp = rcNorm(rng, cod, in, inp)
		rng, cod, bit = rcBit(&z.isRep[state], rng, cod)
		if bit != 0 {
			if p == 0 {
				err = fmt.Errorf("%w: repeat match at the block start", errLZMA)
				break
			}
			rng, cod, inp = rcNorm(rng, cod, in, inp)
			rng, cod, bit = rcBit(&z.isRepG0[state], rng, cod)
			if bit == 0 {
				rng, cod, inp = rcNorm(rng, cod, in, inp)
				rng, cod, bit = rcBit(&z.isRep0Long[state<<4|posState], rng, cod)
				if bit == 0 {
					if state < 7 {
						state = 9
					} else {
						state = 11
					}
					if int(rep0) >= p {
						err = fmt.Errorf("%w: match before the block start", errLZMA)
						break
					}
					out[p] = out[p-int(rep0)-1]
					p++
					continue
				}
			} else {
				var dist uint32
				rng, cod, inp = rcNorm(rng, cod, in, inp)
				rng, cod, bit = rcBit(&z.isRepG1[state], rng, cod)
				if bit == 0 {
					dist = rep1
				} else {
					rng, cod, inp = rcNorm(rng, cod, in, inp)
					rng, cod, bit = rcBit(&z.isRepG2[state], rng, cod)
					if bit == 0 {
						dist = rep2
					} else {
						dist = rep3
						rep3 = rep2
					}
					rep2 = rep1
				}
				rep1 = rep0
				rep0 = dist
			}
			length, rng, cod, inp = z.repLenDec.decodeLen(posState, rng, cod, in, inp)
			if state < 7 {
				state = 8
			} else {
				state = 11
			}
		} else {
			rep3, rep2, rep1 = rep2, rep1, rep0
			length, rng, cod, inp = z.lenDec.decodeLen(posState, rng, cod, in, inp)
			if state < 7 {
				state = 7
			} else {
				state = 10
			}
			slots := &z.posSlot[min(length, lzmaNumLenToPos-1)]
			m := uint32(1)
			for range 6 {
				rng, cod, inp = rcNorm(rng, cod, in, inp)
				rng, cod, bit = rcBit(&slots[m&63], rng, cod)
				m = m<<1 | bit
			}
			slot := m - 64
			dist := slot
			if slot >= 4 {
				nd := uint(slot>>1) - 1
				dist = (2 | slot&1) << nd
				var probs []uint16
				if slot < lzmaEndPosModel {
					probs = z.posDec[dist-slot:]
				} else {
					// Direct bits, then the aligned low bits.
					var direct uint32
					for range nd - lzmaNumAlignBits {
						rng, cod, inp = rcNorm(rng, cod, in, inp)
						rng >>= 1
						t := (cod - rng) >> 31 // 1 when cod < rng
						cod -= rng & (t - 1)
						direct = direct<<1 | (1 - t)
					}
					dist += direct << lzmaNumAlignBits
					probs, nd = z.align[:], lzmaNumAlignBits
				}
				m, sym := uint32(1), uint32(0)
				for i := range nd {
					rng, cod, inp = rcNorm(rng, cod, in, inp)
					rng, cod, bit = rcBit(&probs[m], rng, cod)
					m = m<<1 | bit
					sym |= bit << i
				}
				dist += sym
			}
			if dist == 0xFFFFFFFF {
				err = fmt.Errorf("%w: end marker before the end of the block", errLZMA)
				break
			}
			rep0 = dist
		}
		n := int(length) + lzmaMatchMinLen
		d := int(rep0) + 1
		if d > p {
			err = fmt.Errorf("%w: match before the block start", errLZMA)
			break
		}
		if n > size-p {
			err = fmt.Errorf("%w: match past the end of the block", errLZMA)
			break
		}
		if n > len(out)-p {
			err = fmt.Errorf("%w: match past the %d bytes being decoded", errLZMA, len(out))
			break
		}
		// An overlapping match repeats its last d bytes: copy them in
		// chunks that double, each from the already periodic run.
		end, src := p+n, p-d
		for p < end {
			p += copy(out[p:end], out[src:p])
		}
		continue loop
	}
	if err == nil && inp > len(in) {
		err = errLZMAEarly
	}
	*pos = p
	z.inp, z.rng, z.cod = inp, rng, cod
	z.state = state
	z.rep = [4]uint32{rep0, rep1, rep2, rep3}
	return err
}
