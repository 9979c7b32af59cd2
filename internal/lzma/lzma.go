// Package lzma decodes raw LZMA streams (no .lzma or .xz header, no end
// marker) whose whole output is the dictionary and whose decoded size is
// known: the blocks of chesstb's distance tables and changepoint packs.
//
// Decoding is resumable: Decode stops once it has reached a target offset,
// and a later call picks up from the saved coder state, so a reader can
// decode a block only as far as the bytes it needs. The output is
// byte-identical to github.com/ulikunitz/xz/lzma's reader (the package tests
// and the chesstb sweep of every shipped block check that, and the fuzz
// targets look for a difference).
package lzma

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrMalformed marks a malformed LZMA stream: every decoding failure wraps it.
var ErrMalformed = errors.New("malformed LZMA stream")

// PropsSize is the length of the LZMA properties: one lc/lp/pb byte and a
// 32-bit dictionary size.
const PropsSize = 5

// MaxMatch is the longest match: decoding to a target may write up to this
// many bytes past it.
const MaxMatch = matchMinLen + lenLowSyms + lenMidSyms + lenHighSyms - 1

const (
	numStates     = 12
	posStatesMax  = 16
	lenLowSyms    = 8
	lenMidSyms    = 8
	lenHighSyms   = 256
	endPosModel   = 14
	numFullDist   = 128
	numAlignBits  = 4
	numLenToPos   = 4
	probInit      = 1024
	matchMinLen   = 2
	topValue      = 1 << 24
	bitModelTotal = 1 << 11
	moveBits      = 5
)

// lenDecoder decodes match lengths (0-based, add matchMinLen).
type lenDecoder struct {
	choice, choice2 uint16
	low             [posStatesMax][lenLowSyms]uint16
	mid             [posStatesMax][lenMidSyms]uint16
	high            [lenHighSyms]uint16
}

func (l *lenDecoder) init() {
	l.choice, l.choice2 = probInit, probInit
	for i := range l.low {
		for j := range l.low[i] {
			l.low[i][j] = probInit
			l.mid[i][j] = probInit
		}
	}
	for i := range l.high {
		l.high[i] = probInit
	}
}

// Decoder is the resumable decoder state of one block.
type Decoder struct {
	in  []byte
	inp int
	rng uint32
	cod uint32

	lc, lp, pb uint
	state      uint32
	rep        [4]uint32

	isMatch    [numStates << 4]uint16
	isRep      [numStates]uint16
	isRepG0    [numStates]uint16
	isRepG1    [numStates]uint16
	isRepG2    [numStates]uint16
	isRep0Long [numStates << 4]uint16
	posSlot    [numLenToPos][1 << 6]uint16
	posDec     [1 + numFullDist - endPosModel]uint16
	align      [1 << numAlignBits]uint16
	lenDec     lenDecoder
	repLenDec  lenDecoder
	literal    []uint16

	size    int   // the decoded size
	pos     int   // bytes decoded so far
	pending int   // bytes of the last match not yet copied (out was full)
	err     error // the failure that left the decoder unusable
}

// Size is the number of bytes the stream decodes to.
func (z *Decoder) Size() int { return z.size }

// Pos is the number of bytes decoded so far.
func (z *Decoder) Pos() int { return z.pos }

// Decode decodes into out[z.Pos():] until Pos reaches target (it may go up
// to MaxMatch further), len(out) or Size, whichever comes first, and
// returns the new Pos. out[:z.Pos()] must hold what earlier calls decoded:
// it is the dictionary. out may be shorter than Size; a match cut short by
// its end is finished by the next call. After a failure, which wraps
// ErrMalformed, the decoder returns the same failure for good.
func (z *Decoder) Decode(out []byte, target int) (int, error) {
	if z.err != nil {
		return z.pos, z.err
	}
	if len(out) < z.pos {
		return z.pos, fmt.Errorf("lzma: output of %d bytes is shorter than the %d decoded", len(out), z.pos)
	}
	if z.pending > 0 {
		d := int(z.rep[0]) + 1
		end := min(z.pos+z.pending, len(out))
		for p := z.pos; p < end; {
			p += copy(out[p:end], out[p-d:p])
		}
		z.pending -= end - z.pos
		z.pos = end
	}
	if z.pending == 0 {
		z.err = z.decode(out, target)
	}
	return z.pos, z.err
}

// DecodeAll decodes the whole of stream, size bytes coded with props.
func DecodeAll(stream, props []byte, size int) ([]byte, error) {
	z, err := NewDecoder(stream, props, size)
	if err != nil {
		return nil, err
	}
	out := make([]byte, size)
	n, err := z.Decode(out, size)
	if err == nil && n < size {
		err = fmt.Errorf("%w: decoding stopped at byte %d of %d", ErrMalformed, n, size)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// NewDecoder prepares to decode size bytes from stream, raw LZMA data
// coded with props (PropsSize bytes). The dictionary size in props is not
// used: the whole output is the dictionary. The decoder keeps stream, which
// must not change while it decodes.
func NewDecoder(stream, props []byte, size int) (*Decoder, error) {
	if size < 0 {
		return nil, fmt.Errorf("%w: negative size %d", ErrMalformed, size)
	}
	if len(props) != PropsSize {
		return nil, fmt.Errorf("%w: %d property bytes", ErrMalformed, len(props))
	}
	d := props[0]
	if d >= 9*5*5 {
		return nil, fmt.Errorf("%w: properties byte %#x", ErrMalformed, d)
	}
	z := &Decoder{in: stream, size: size}
	z.lc, z.lp, z.pb = uint(d%9), uint(d/9%5), uint(d/45)
	if z.lc+z.lp > 8 {
		return nil, fmt.Errorf("%w: lc+lp = %d", ErrMalformed, z.lc+z.lp)
	}
	z.literal = make([]uint16, 0x300<<(z.lc+z.lp))
	for i := range z.literal {
		z.literal[i] = probInit
	}
	for _, p := range [][]uint16{z.isMatch[:], z.isRep[:], z.isRepG0[:], z.isRepG1[:], z.isRepG2[:],
		z.isRep0Long[:], z.posDec[:], z.align[:]} {
		for i := range p {
			p[i] = probInit
		}
	}
	for i := range z.posSlot {
		for j := range z.posSlot[i] {
			z.posSlot[i][j] = probInit
		}
	}
	z.lenDec.init()
	z.repLenDec.init()
	if len(stream) < 5 || stream[0] != 0 {
		return nil, fmt.Errorf("%w: bad range coder start", ErrMalformed)
	}
	z.cod = binary.BigEndian.Uint32(stream[1:5])
	z.rng = 0xFFFFFFFF
	z.inp = 5
	if z.cod == z.rng {
		return nil, fmt.Errorf("%w: bad range coder start", ErrMalformed)
	}
	return z, nil
}

// StateBytes is the memory the decoder holds, its probability tables with
// the compressed stream it reads, for a cache that budgets memory.
func (z *Decoder) StateBytes() int64 {
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
	if rng < topValue {
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
	*p = uint16(int32(v) - (int32(v)-int32(2017&m))>>moveBits)
	return rng, cod, 1 + m
}

// rcBit decodes one bit with adaptive probability *p (the coder already
// normalised) and returns the new range, code and the bit.
func rcBit(p *uint16, rng, cod uint32) (uint32, uint32, uint32) {
	v := uint32(*p)
	bound := (rng >> 11) * v
	if cod < bound {
		*p = uint16(v + (bitModelTotal-v)>>moveBits)
		return bound, cod, 0
	}
	*p = uint16(v - v>>moveBits)
	return rng - bound, cod - bound, 1
}

// decodeLen decodes a match length (0-based) with the coder passed in and
// out by value.
func (l *lenDecoder) decodeLen(posState, rng, cod uint32, in []byte, inp int) (length, rng2, cod2 uint32, inp2 int) {
	var bit uint32
	rng, cod, inp = rcNorm(rng, cod, in, inp)
	rng, cod, bit = rcBit(&l.choice, rng, cod)
	var probs []uint16
	var bits uint
	switch {
	case bit == 0:
		probs, bits = l.low[posState&(posStatesMax-1)][:], 3
	default:
		rng, cod, inp = rcNorm(rng, cod, in, inp)
		rng, cod, bit = rcBit(&l.choice2, rng, cod)
		if bit == 0 {
			probs, bits, length = l.mid[posState&(posStatesMax-1)][:], 3, lenLowSyms
		} else {
			probs, bits, length = l.high[:], 8, lenLowSyms+lenMidSyms
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

// errEarly is the overrun failure: the stream ended before the block.
var errEarly = fmt.Errorf("%w: stream ends early", ErrMalformed)

// decode is Decode with no match pending.
func (z *Decoder) decode(out []byte, target int) error {
	p := z.pos
	size := z.size
	target = min(target, len(out), size)
	in, inp, rng, cod := z.in, z.inp, z.rng, z.cod
	state := z.state
	// rep1..rep3 stay in z.rep: they are rarely touched, and as locals
	// they would crowd the coder out of registers.
	rep0 := z.rep[0]
	pbMask := uint32(1)<<z.pb - 1
	lpMask := uint32(1)<<z.lp - 1
	lc := z.lc
	var err error
	var bit uint32
loop:
	for p < target {
		if inp > len(in) {
			err = errEarly
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
					err = fmt.Errorf("%w: match before the block start", ErrMalformed)
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
				err = fmt.Errorf("%w: repeat match at the block start", ErrMalformed)
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
						err = fmt.Errorf("%w: match before the block start", ErrMalformed)
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
					dist = z.rep[1]
				} else {
					rng, cod, inp = rcNorm(rng, cod, in, inp)
					rng, cod, bit = rcBit(&z.isRepG2[state], rng, cod)
					if bit == 0 {
						dist = z.rep[2]
					} else {
						dist = z.rep[3]
						z.rep[3] = z.rep[2]
					}
					z.rep[2] = z.rep[1]
				}
				z.rep[1] = rep0
				rep0 = dist
			}
			length, rng, cod, inp = z.repLenDec.decodeLen(posState, rng, cod, in, inp)
			if state < 7 {
				state = 8
			} else {
				state = 11
			}
		} else {
			z.rep[3], z.rep[2], z.rep[1] = z.rep[2], z.rep[1], rep0
			length, rng, cod, inp = z.lenDec.decodeLen(posState, rng, cod, in, inp)
			if state < 7 {
				state = 7
			} else {
				state = 10
			}
			slots := &z.posSlot[min(length, numLenToPos-1)]
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
				if slot < endPosModel {
					probs = z.posDec[dist-slot:]
				} else {
					// Direct bits, then the aligned low bits.
					var direct uint32
					for range nd - numAlignBits {
						rng, cod, inp = rcNorm(rng, cod, in, inp)
						rng >>= 1
						t := (cod - rng) >> 31 // 1 when cod < rng
						cod -= rng & (t - 1)
						direct = direct<<1 | (1 - t)
					}
					dist += direct << numAlignBits
					probs, nd = z.align[:], numAlignBits
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
				err = fmt.Errorf("%w: end marker before the end of the block", ErrMalformed)
				break
			}
			rep0 = dist
		}
		n := int(length) + matchMinLen
		d := int(rep0) + 1
		if d > p {
			err = fmt.Errorf("%w: match before the block start", ErrMalformed)
			break
		}
		if n > size-p {
			err = fmt.Errorf("%w: match past the end of the block", ErrMalformed)
			break
		}
		// An overlapping match repeats its last d bytes: copy them in
		// chunks that double, each from the already periodic run.
		end, src := p+n, p-d
		if end > len(out) {
			z.pending = end - len(out)
			end = len(out)
		}
		for p < end {
			p += copy(out[p:end], out[src:p])
		}
		if z.pending > 0 {
			break
		}
		continue loop
	}
	if err == nil && inp > len(in) {
		err = errEarly
	}
	z.pos = p
	z.inp, z.rng, z.cod = inp, rng, cod
	z.state = state
	z.rep[0] = rep0
	return err
}
