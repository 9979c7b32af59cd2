package syzygy

import (
	"encoding/binary"
	"hash/crc32"
	"math/bits"
)

// The checksum the Syzygy generator appends to each file (and its tbcheck
// tool recomputes) is CityHash v1.1 in its CRC flavour: CityHashCrc256 of
// every 16 MiB chunk of the file, then CityHashCrc128 of those 32-byte
// results. This is an implementation of the two functions from their
// definition.

const (
	cityK0 = 0xc3a5c85c97cb3127
	cityK1 = 0xb492b66fbe98f273
	cityK2 = 0x9ae16a3b2f90404f
	cityK3 = 0xc949d7c7509e6557
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// crcSlices are the slicing-by-8 tables of CRC-32C: crcSlices[k][b] is
// the CRC of byte b followed by k zero bytes.
var crcSlices = func() (t [8][256]uint32) {
	for b := range 256 {
		t[0][b] = castagnoli[b]
	}
	for k := 1; k < 8; k++ {
		for b := range 256 {
			prev := t[k-1][b]
			t[k][b] = prev>>8 ^ t[0][prev&0xff]
		}
	}
	return t
}()

func fetch64(s []byte, i int) uint64 { return binary.LittleEndian.Uint64(s[i:]) }
func fetch32(s []byte, i int) uint64 { return uint64(binary.LittleEndian.Uint32(s[i:])) }

func rot(v uint64, s uint) uint64 { return bits.RotateLeft64(v, -int(s)) }

func shiftMix(v uint64) uint64 { return v ^ v>>47 }

func hash16(u, v uint64) uint64 {
	const mul = 0x9ddfea08eb382d69
	a := (u ^ v) * mul
	a ^= a >> 47
	b := (v ^ a) * mul
	b ^= b >> 47
	return b * mul
}

// crc8 is the SSE4.2 crc32 instruction on 8 bytes: CRC-32C without the
// customary inversions.
func crc8(crc, v uint64) uint64 {
	x := uint64(uint32(crc)) ^ v
	t := &crcSlices
	return uint64(t[7][x&0xff] ^ t[6][x>>8&0xff] ^ t[5][x>>16&0xff] ^ t[4][x>>24&0xff] ^
		t[3][x>>32&0xff] ^ t[2][x>>40&0xff] ^ t[1][x>>48&0xff] ^ t[0][x>>56])
}

func hashLen0to16(s []byte) uint64 {
	n := len(s)
	switch {
	case n > 8:
		a := fetch64(s, 0)
		b := fetch64(s, n-8)
		return hash16(a, bits.RotateLeft64(b+uint64(n), -n)) ^ b
	case n >= 4:
		a := fetch32(s, 0)
		return hash16(uint64(n)+a<<3, fetch32(s, n-4))
	case n > 0:
		y := uint32(s[0]) + uint32(s[n>>1])<<8
		z := uint32(n) + uint32(s[n-1])<<2
		return shiftMix(uint64(y)*cityK2^uint64(z)*cityK3) * cityK2
	}
	return cityK2
}

func weak32(s []byte, i int, a, b uint64) (uint64, uint64) {
	w, x, y, z := fetch64(s, i), fetch64(s, i+8), fetch64(s, i+16), fetch64(s, i+24)
	a += w
	b = rot(b+a+z, 21)
	c := a
	a += x
	a += y
	b += rot(a, 44)
	return a + z, b + c
}

func cityMurmur(s []byte, a, b uint64) (uint64, uint64) {
	n := len(s)
	var c, d uint64
	if n <= 16 {
		a = shiftMix(a*cityK1) * cityK1
		c = b*cityK1 + hashLen0to16(s)
		if n >= 8 {
			d = shiftMix(a + fetch64(s, 0))
		} else {
			d = shiftMix(a + c)
		}
	} else {
		c = hash16(fetch64(s, n-8)+cityK1, a)
		d = hash16(b+uint64(n), c+fetch64(s, n-16))
		a += d
		for i := 0; n-i > 16; i += 16 {
			a ^= shiftMix(fetch64(s, i)*cityK1) * cityK1
			a *= cityK1
			b ^= a
			c ^= shiftMix(fetch64(s, i+8)*cityK1) * cityK1
			c *= cityK1
			d ^= c
		}
	}
	a = hash16(a, c)
	b = hash16(d, b)
	return a ^ b, hash16(b, a)
}

func city128Seed(s []byte, x, y uint64) (uint64, uint64) {
	if len(s) < 128 {
		return cityMurmur(s, x, y)
	}
	n := len(s)
	z := uint64(n) * cityK1
	v0 := rot(y^cityK1, 49)*cityK1 + fetch64(s, 0)
	v1 := rot(v0, 42)*cityK1 + fetch64(s, 8)
	w0 := rot(y+z, 35)*cityK1 + x
	w1 := rot(x+fetch64(s, 88), 53) * cityK1
	p := 0
	for {
		for range 2 {
			x = rot(x+y+v0+fetch64(s, p+8), 37) * cityK1
			y = rot(y+v1+fetch64(s, p+48), 42) * cityK1
			x ^= w1
			y += v0 + fetch64(s, p+40)
			z = rot(z+w0, 33) * cityK1
			v0, v1 = weak32(s, p, v1*cityK1, x+w0)
			w0, w1 = weak32(s, p+32, z+w1, y+fetch64(s, p+16))
			z, x = x, z
			p += 64
		}
		n -= 128
		if n < 128 {
			break
		}
	}
	x += rot(v0+z, 49) * cityK0
	z += rot(w0, 37) * cityK0
	for done := 0; done < n; {
		done += 32
		y = rot(x+y, 42)*cityK0 + v1
		w0 += fetch64(s, p+n-done+16)
		x = x*cityK0 + w0
		z += w1 + fetch64(s, p+n-done)
		w1 += v0
		v0, v1 = weak32(s, p+n-done, v0+z, v1)
	}
	x = hash16(x, v0)
	y = hash16(y+z, w0)
	return hash16(x+v1, w1) + y, hash16(x+w1, y+v1)
}

func city128(s []byte) (uint64, uint64) {
	n := len(s)
	switch {
	case n >= 16:
		return city128Seed(s[16:], fetch64(s, 0)^cityK3, fetch64(s, 8))
	case n >= 8:
		return city128Seed(nil, fetch64(s, 0)^(uint64(n)*cityK0), fetch64(s, n-8)^cityK1)
	}
	return city128Seed(s, cityK0, cityK1)
}

// byteSpan is the input of cityCrc256Long, handed out a piece at a time
// so a long input need not be in memory whole.
type byteSpan interface {
	// size is the input's length.
	size() int
	// at returns the n bytes at p, valid until the next call.
	at(p, n int) []byte
}

// memSpan is an input held in memory.
type memSpan []byte

func (m memSpan) size() int          { return len(m) }
func (m memSpan) at(p, n int) []byte { return m[p : p+n] }

func cityCrc256Long(s byteSpan, seed uint32) [4]uint64 {
	var r [4]uint64
	n := s.size()
	var head [192]byte
	copy(head[:], s.at(0, len(head)))
	a := fetch64(head[:], 56) + cityK0
	b := fetch64(head[:], 96) + cityK0
	c := hash16(b, uint64(n))
	r[0] = c
	d := fetch64(head[:], 120)*cityK0 + uint64(n)
	r[1] = d
	e := fetch64(head[:], 184) + uint64(seed)
	f := uint64(seed)
	var g, h, i, j uint64
	t := c + d
	p := 0
	chunk := func(mul uint64, z uint) {
		w := s.at(p, 40)
		oldA := a
		a = rot(b, 41^z)*mul + fetch64(w, 0)
		b = rot(c, 27^z)*mul + fetch64(w, 8)
		c = rot(d, 41^z)*mul + fetch64(w, 16)
		d = rot(e, 33^z)*mul + fetch64(w, 24)
		e = rot(t, 25^z)*mul + fetch64(w, 32)
		t = oldA
		f = crc8(f, a)
		g = crc8(g, b)
		h = crc8(h, c)
		i = crc8(i, d)
		j = crc8(j, e)
		p += 40
	}
	iters := n / 240
	n -= iters * 240
	for ; iters > 0; iters-- {
		for range 3 {
			chunk(1, 1)
			chunk(cityK0, 0)
		}
	}
	for n >= 40 {
		chunk(cityK0, 0)
		n -= 40
	}
	if n > 0 {
		p = p + n - 40
		chunk(cityK0, 0)
	}
	j += i << 32
	a = hash16(a, j)
	h += g << 32
	b += h
	c = hash16(c, f) + i
	d = hash16(d, e+r[0])
	j += e
	i += hash16(h, t)
	e = hash16(a, d) + j
	f = hash16(b, c) + a
	g = hash16(j, i) + c
	r[0] = e + f + g + h
	a = shiftMix((a+g)*cityK0)*cityK0 + b
	r[1] += a + r[0]
	a = shiftMix(a*cityK0)*cityK0 + c
	r[2] = a + r[1]
	a = shiftMix((a+e)*cityK0) * cityK0
	r[3] = a + r[2]
	return r
}

func cityCrc256(s []byte) [4]uint64 {
	if len(s) >= 240 {
		return cityCrc256Long(memSpan(s), 0)
	}
	var buf [240]byte
	copy(buf[:], s)
	return cityCrc256Long(memSpan(buf[:]), ^uint32(len(s)))
}

func cityCrc128(s []byte) (uint64, uint64) {
	if len(s) <= 900 {
		return city128(s)
	}
	r := cityCrc256(s)
	return r[2], r[3]
}
