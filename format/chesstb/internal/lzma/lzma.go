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
	// litCoderSize is the room of one literal coder: 0x300 probabilities
	// padded to a power of two.
	litCoderSize = 0x400
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

	// The probability arrays are sized to powers of two, so that an
	// index masked to the size needs no bounds check in the decode loop;
	// the padding is never used.
	isMatch    [256]uint16 // state<<4 | posState
	isRep      [16]uint16
	isRepG0    [16]uint16
	isRepG1    [16]uint16
	isRepG2    [16]uint16
	isRep0Long [256]uint16
	posSlot    [numLenToPos][1 << 6]uint16
	posDec     [128]uint16 // 1 + numFullDist - endPosModel used
	align      [1 << numAlignBits]uint16
	lenDec     lenDecoder
	repLenDec  lenDecoder
	literal    []uint16 // litCoderSize per literal context (0x300 used)

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
// it is the dictionary. Bytes of out past the returned Pos may be
// overwritten too (a match is copied in whole words). out may be shorter
// than Size; a match cut short by its end is finished by the next call. After a failure, which wraps
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
	z.literal = make([]uint16, litCoderSize<<(z.lc+z.lp))
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

// The range coder lives in locals of decode (rng, cod, and the symbol's
// input window with the count of bytes taken from it), passed through these
// small functions by value: they inline, so the coder stays in registers
// across the hot paths instead of being loaded and stored through the
// decoder pointer for every bit. The coder is normalised before each bit
// rather than after. Input past the end reads as zero bytes; decode checks
// for overrun when it stops.

// winSize is the input window of one symbol: more than the most bytes a
// symbol can shift in, one per bit decoded, 48 for a match with a 26-bit
// direct distance (isMatch, isRep, 10 of length, 6 of slot, 26 direct and 4
// aligned bits). A power of two, so an index masked to it needs no check.
const winSize = 64

// rcNorm shifts in the next byte of the window, the k-th of this symbol,
// when the range has grown too small.
func rcNorm(rng, cod uint32, win *[winSize]byte, k int) (uint32, uint32, int) {
	if rng < topValue {
		rng <<= 8
		cod = cod<<8 | uint32(win[k&(winSize-1)])
		k++
	}
	return rng, cod, k
}

// rcBitMask decodes one bit with adaptive probability *p (the coder
// already normalised) without a branch, returning the new range, code and
// the bit as a mask: all ones for a 0, zero for a 1. It is for the literal
// bits, the hardest to predict, where a mispredicted branch costs more
// than the few extra instructions (rcTree, with a branch, wins elsewhere).
func rcBitMask(p *uint16, rng, cod uint32) (uint32, uint32, uint32) {
	v := uint32(*p)
	bound := (rng >> 11) * v
	m := uint32((int64(cod) - int64(bound)) >> 63)
	rng = bound&m | (rng-bound)&^m
	cod -= bound &^ m
	// For a 0 bit v grows by (2048-v)>>5, for a 1 bit it shrinks by v>>5;
	// with v-2017 ≤ 0 the arithmetic shift rounds the 0 case the same way.
	*p = uint16(int32(v) - (int32(v)-int32(2017&m))>>moveBits)
	return rng, cod, m
}

// rcTree decodes one bit of a bit tree into the tree index m (the coder
// already normalised): m becomes m<<1 | bit.
func rcTree(p *uint16, rng, cod, m uint32) (uint32, uint32, uint32) {
	v := uint32(*p)
	bound := (rng >> 11) * v
	if cod < bound {
		*p = uint16(v + (bitModelTotal-v)>>moveBits)
		return bound, cod, m << 1
	}
	*p = uint16(v - v>>moveBits)
	return rng - bound, cod - bound, m<<1 | 1
}

// decodeLiteral decodes a plain literal, the eight bits of a tree, and
// returns it with the coder. It is a function of its own, unlike the rest of
// decode: with only the coder and the tree live, the register allocator
// keeps them in registers.
//
// Each bit's probability is loaded before the bit before it is known: both
// children of the current node are read, and the bit selects one. The load
// is off the chain of dependent steps from one bit to the next, which is
// what bounds the speed of a branchless decode.
//
//go:noinline
func decodeLiteral(lit *[litCoderSize]uint16, rng, cod uint32, win *[winSize]byte, k int) (uint32, uint32, uint32, int) {
	sym, v := uint32(1), uint32(lit[1])
	for range 8 {
		v0, v1 := uint32(lit[(2*sym)&0x3FF]), uint32(lit[(2*sym+1)&0x3FF])
		rng, cod, k = rcNorm(rng, cod, win, k)
		var m uint32
		rng, cod, m, lit[sym&0x3FF] = rcBitMaskV(v, rng, cod)
		sym = sym<<1 + 1 + m
		v = v1 ^ (v0^v1)&m
	}
	return sym, rng, cod, k
}

// decodeMatched decodes a literal coded against the byte match at rep0
// (a function of its own for decodeLiteral's reason): offs is 0x100 while
// the bits agree with match and 0 from the first that differs, which
// selects the plain coder without a branch. The bits are decoded without a
// branch, as a plain literal's are: m is all ones for a 0 bit, which also
// restores offs where the bit agrees with the match byte's.
//
// As in decodeLiteral, the next bit's probability is loaded for both
// outcomes of the current bit before it is known.
//
//go:noinline
func decodeMatched(lit *[litCoderSize]uint16, match, rng, cod uint32, win *[winSize]byte, k int) (uint32, uint32, uint32, int) {
	sym, offs := uint32(1), uint32(0x100)
	match <<= 1
	bitOffs := offs
	offs &= match
	v := uint32(lit[(offs+bitOffs+sym)&0x3FF])
	for range 8 {
		// The index of the next bit's probability for a 1 (offs kept)
		// and for a 0 (offs restored by bitOffs).
		next := match << 1
		o0 := offs ^ bitOffs
		v1 := uint32(lit[(offs&next+offs+2*sym+1)&0x3FF])
		v0 := uint32(lit[(o0&next+o0+2*sym)&0x3FF])
		rng, cod, k = rcNorm(rng, cod, win, k)
		var m uint32
		rng, cod, m, lit[(offs+bitOffs+sym)&0x3FF] = rcBitMaskV(v, rng, cod)
		sym = sym<<1 + 1 + m
		offs ^= bitOffs & m
		v = v1 ^ (v0^v1)&m
		match = next
		bitOffs = offs
		offs &= match
	}
	return sym, rng, cod, k
}

// rcBitMaskV is rcBitMask on a probability v already loaded: it returns
// the coder, the bit's mask and v updated, for the caller to store.
func rcBitMaskV(v, rng, cod uint32) (uint32, uint32, uint32, uint16) {
	bound := (rng >> 11) * v
	m := uint32((int64(cod) - int64(bound)) >> 63)
	rng = bound&m | (rng-bound)&^m
	cod -= bound &^ m
	return rng, cod, m, uint16(int32(v) - (int32(v)-int32(2017&m))>>moveBits)
}

// errEarly is the overrun failure: the stream ended before the block.
var errEarly = fmt.Errorf("%w: stream ends early", ErrMalformed)

// decode is Decode with no match pending. It is one function with the
// length and distance decoders written out in it, as the LZMA SDK's decoder
// is: a call would spill the coder held in registers (Go keeps no register
// across a call), and the decision bits branch on the coder directly
// instead of through a returned bit. The literals are the exception
// (decodeLiteral, decodeMatched): eight bits each, they gain more from a
// function's own registers than the call costs. Probability arrays are indexed with
// masks to their power-of-two sizes, which removes the bounds checks.
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
	lc := z.lc & 15
	var err error
	var m uint32
	// Each symbol reads its input from a window of winSize bytes, which
	// needs no bounds check and no test for the end of the stream at each
	// byte: k counts the bytes it took, added to inp after it. Within the
	// last winSize bytes of the stream the window is a copy padded with
	// zeros, so input past the end reads as zeros; an overrun is checked
	// when decoding stops (each symbol writes at least one byte, so a
	// truncated stream still stops at target).
	var tail [winSize]byte
	var win *[winSize]byte
	k := 0
loop:
	for ; p < target; inp += k {
		k = 0
		if inp+winSize <= len(in) {
			win = (*[winSize]byte)(in[inp : inp+winSize])
		} else {
			if inp > len(in) {
				break
			}
			tail = [winSize]byte{}
			copy(tail[:], in[inp:])
			win = &tail
		}
		posState := uint32(p) & pbMask
		rng, cod, k = rcNorm(rng, cod, win, k)
		prob := &z.isMatch[(state<<4|posState)&0xFF]
		bound := (rng >> 11) * uint32(*prob)
		if cod < bound {
			rng = bound
			*prob += (bitModelTotal - *prob) >> moveBits
			var prev uint32
			if p > 0 {
				prev = uint32(out[p-1])
			}
			base := litCoderSize * int((uint32(p)&lpMask)<<lc+prev>>(8-lc))
			lit := (*[litCoderSize]uint16)(z.literal[base : base+litCoderSize])
			var sym uint32
			if state < 7 {
				// A plain literal: eight bits of a tree.
				sym, rng, cod, k = decodeLiteral(lit, rng, cod, win, k)
				if state < 4 {
					state = 0
				} else {
					state -= 3
				}
			} else {
				// A literal after a match is coded against the byte at
				// rep0.
				if int(rep0) >= p {
					err = fmt.Errorf("%w: match before the block start", ErrMalformed)
					break
				}
				sym, rng, cod, k = decodeMatched(lit, uint32(out[p-int(rep0)-1]), rng, cod, win, k)
				if state < 10 {
					state -= 3
				} else {
					state -= 6
				}
			}
			out[p] = byte(sym)
			p++
			continue
		}
		rng -= bound
		cod -= bound
		*prob -= *prob >> moveBits

		// A match (isRep 0) or a repeated match (isRep 1).
		rng, cod, k = rcNorm(rng, cod, win, k)
		prob = &z.isRep[state&15]
		bound = (rng >> 11) * uint32(*prob)
		var ld *lenDecoder
		isRep := cod >= bound
		if !isRep {
			rng = bound
			*prob += (bitModelTotal - *prob) >> moveBits
			z.rep[3], z.rep[2], z.rep[1] = z.rep[2], z.rep[1], rep0
			ld = &z.lenDec
			if state < 7 {
				state = 7
			} else {
				state = 10
			}
		} else {
			rng -= bound
			cod -= bound
			*prob -= *prob >> moveBits
			if p == 0 {
				err = fmt.Errorf("%w: repeat match at the block start", ErrMalformed)
				break
			}
			rng, cod, k = rcNorm(rng, cod, win, k)
			prob = &z.isRepG0[state&15]
			bound = (rng >> 11) * uint32(*prob)
			if cod < bound {
				rng = bound
				*prob += (bitModelTotal - *prob) >> moveBits
				rng, cod, k = rcNorm(rng, cod, win, k)
				prob = &z.isRep0Long[(state<<4|posState)&0xFF]
				bound = (rng >> 11) * uint32(*prob)
				if cod < bound {
					// A short repeat: one byte at rep0.
					rng = bound
					*prob += (bitModelTotal - *prob) >> moveBits
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
				rng -= bound
				cod -= bound
				*prob -= *prob >> moveBits
			} else {
				rng -= bound
				cod -= bound
				*prob -= *prob >> moveBits
				var dist uint32
				rng, cod, k = rcNorm(rng, cod, win, k)
				prob = &z.isRepG1[state&15]
				bound = (rng >> 11) * uint32(*prob)
				if cod < bound {
					rng = bound
					*prob += (bitModelTotal - *prob) >> moveBits
					dist = z.rep[1]
				} else {
					rng -= bound
					cod -= bound
					*prob -= *prob >> moveBits
					rng, cod, k = rcNorm(rng, cod, win, k)
					prob = &z.isRepG2[state&15]
					bound = (rng >> 11) * uint32(*prob)
					if cod < bound {
						rng = bound
						*prob += (bitModelTotal - *prob) >> moveBits
						dist = z.rep[2]
					} else {
						rng -= bound
						cod -= bound
						*prob -= *prob >> moveBits
						dist = z.rep[3]
						z.rep[3] = z.rep[2]
					}
					z.rep[2] = z.rep[1]
				}
				z.rep[1] = rep0
				rep0 = dist
			}
			ld = &z.repLenDec
			if state < 7 {
				state = 8
			} else {
				state = 11
			}
		}

		// The length: 3 bits (0-7), 3 more (8-15) or 8 more (16-271). The
		// two 3-bit trees share one decode, of the tree t chosen.
		var length uint32
		var t *[lenLowSyms]uint16
		rng, cod, k = rcNorm(rng, cod, win, k)
		bound = (rng >> 11) * uint32(ld.choice)
		if cod < bound {
			rng = bound
			ld.choice += (bitModelTotal - ld.choice) >> moveBits
			t = &ld.low[posState&(posStatesMax-1)]
		} else {
			rng -= bound
			cod -= bound
			ld.choice -= ld.choice >> moveBits
			rng, cod, k = rcNorm(rng, cod, win, k)
			bound = (rng >> 11) * uint32(ld.choice2)
			if cod < bound {
				rng = bound
				ld.choice2 += (bitModelTotal - ld.choice2) >> moveBits
				t, length = &ld.mid[posState&(posStatesMax-1)], lenLowSyms
			} else {
				rng -= bound
				cod -= bound
				ld.choice2 -= ld.choice2 >> moveBits
				// Eight bits, unrolled.
				h := &ld.high
				rng, cod, k = rcNorm(rng, cod, win, k)
				rng, cod, m = rcTree(&h[1], rng, cod, 1)
				rng, cod, k = rcNorm(rng, cod, win, k)
				rng, cod, m = rcTree(&h[m&0xFF], rng, cod, m)
				rng, cod, k = rcNorm(rng, cod, win, k)
				rng, cod, m = rcTree(&h[m&0xFF], rng, cod, m)
				rng, cod, k = rcNorm(rng, cod, win, k)
				rng, cod, m = rcTree(&h[m&0xFF], rng, cod, m)
				rng, cod, k = rcNorm(rng, cod, win, k)
				rng, cod, m = rcTree(&h[m&0xFF], rng, cod, m)
				rng, cod, k = rcNorm(rng, cod, win, k)
				rng, cod, m = rcTree(&h[m&0xFF], rng, cod, m)
				rng, cod, k = rcNorm(rng, cod, win, k)
				rng, cod, m = rcTree(&h[m&0xFF], rng, cod, m)
				rng, cod, k = rcNorm(rng, cod, win, k)
				rng, cod, m = rcTree(&h[m&0xFF], rng, cod, m)
				length = m - lenHighSyms + lenLowSyms + lenMidSyms
			}
		}
		if t != nil {
			rng, cod, k = rcNorm(rng, cod, win, k)
			rng, cod, m = rcTree(&t[1], rng, cod, 1)
			rng, cod, k = rcNorm(rng, cod, win, k)
			rng, cod, m = rcTree(&t[m&7], rng, cod, m)
			rng, cod, k = rcNorm(rng, cod, win, k)
			rng, cod, m = rcTree(&t[m&7], rng, cod, m)
			length += m - lenLowSyms
		}

		if !isRep {
			// The distance: a 6-bit slot, then for slots of 4 and up
			// reverse-coded low bits, from probabilities below slot 14
			// and as direct bits with 4 aligned ones from there.
			slots := &z.posSlot[min(length, numLenToPos-1)]
			rng, cod, k = rcNorm(rng, cod, win, k)
			rng, cod, m = rcTree(&slots[1], rng, cod, 1)
			rng, cod, k = rcNorm(rng, cod, win, k)
			rng, cod, m = rcTree(&slots[m&63], rng, cod, m)
			rng, cod, k = rcNorm(rng, cod, win, k)
			rng, cod, m = rcTree(&slots[m&63], rng, cod, m)
			rng, cod, k = rcNorm(rng, cod, win, k)
			rng, cod, m = rcTree(&slots[m&63], rng, cod, m)
			rng, cod, k = rcNorm(rng, cod, win, k)
			rng, cod, m = rcTree(&slots[m&63], rng, cod, m)
			rng, cod, k = rcNorm(rng, cod, win, k)
			rng, cod, m = rcTree(&slots[m&63], rng, cod, m)
			slot := m - 64
			dist := slot
			if slot >= 4 {
				nd := uint(slot>>1) - 1
				dist = (2 | slot&1) << nd
				if slot < endPosModel {
					// The reverse tree's probs[1:] start at
					// posDec[dist-slot]; the index masked to posDec's
					// size needs no bounds check.
					base := dist - slot
					m, sym := uint32(1), uint32(0)
					for i := range nd {
						rng, cod, k = rcNorm(rng, cod, win, k)
						rng, cod, m = rcTree(&z.posDec[(base+m)&127], rng, cod, m)
						sym |= (m & 1) << i
					}
					dist += sym
				} else {
					var direct uint32
					for range (nd - numAlignBits) & 31 {
						rng, cod, k = rcNorm(rng, cod, win, k)
						rng >>= 1
						t := (cod - rng) >> 31 // 1 when cod < rng
						cod -= rng & (t - 1)
						direct = direct<<1 | (1 - t)
					}
					dist += direct << numAlignBits
					a := &z.align
					rng, cod, k = rcNorm(rng, cod, win, k)
					rng, cod, m = rcTree(&a[1], rng, cod, 1)
					rng, cod, k = rcNorm(rng, cod, win, k)
					rng, cod, m = rcTree(&a[m&15], rng, cod, m)
					rng, cod, k = rcNorm(rng, cod, win, k)
					rng, cod, m = rcTree(&a[m&15], rng, cod, m)
					rng, cod, k = rcNorm(rng, cod, win, k)
					rng, cod, m = rcTree(&a[m&15], rng, cod, m)
					// m holds the four bits most significant first:
					// reverse them.
					m -= 16
					dist += m>>3&1 | m>>1&2 | m<<1&4 | m<<3&8
				}
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
		end, src := p+n, p-d
		if end > len(out) {
			z.pending = end - len(out)
			end = len(out)
		}
		switch {
		case d >= 16 && end+16 <= len(out):
			// Sixteen bytes at a time, as below with eight.
			for p < end {
				w0 := binary.LittleEndian.Uint64(out[src : src+8])
				w1 := binary.LittleEndian.Uint64(out[src+8 : src+16])
				binary.LittleEndian.PutUint64(out[p:p+8], w0)
				binary.LittleEndian.PutUint64(out[p+8:p+16], w1)
				p += 16
				src += 16
			}
			p = end
		case d >= 8 && end+8 <= len(out):
			// Eight bytes at a time, each word read from bytes already
			// written; the last word may write up to 7 bytes past end,
			// which the next symbols overwrite.
			for p < end {
				binary.LittleEndian.PutUint64(out[p:p+8], binary.LittleEndian.Uint64(out[src:src+8]))
				p += 8
				src += 8
			}
			p = end
		case d == 1 && end+8 <= len(out):
			// A run of one byte.
			w := uint64(out[src]) * 0x0101010101010101
			for p < end {
				binary.LittleEndian.PutUint64(out[p:p+8], w)
				p += 8
			}
			p = end
		default:
			// An overlapping match repeats its last d bytes: copy them
			// in chunks that double, each from the already periodic run.
			for p < end {
				p += copy(out[p:end], out[src:p])
			}
		}
		if z.pending > 0 {
			inp += k
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
