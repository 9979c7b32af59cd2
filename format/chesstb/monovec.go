package chesstb

import "encoding/binary"

// monoVec is the block-offset table: a non-decreasing sequence stored as one
// full-width sample per 2^log2bu values plus a fixed-width delta per value,
// both little-endian bit streams.
type monoVec struct {
	n        uint64
	log2bu   uint8
	sw, ow   uint8
	samples  []byte // padded with 8 zero bytes
	deltas   []byte // padded with 8 zero bytes
	sampleSz int
}

func newMonoVec(n uint64, log2bu, sw, ow uint8) (monoVec, error) {
	if log2bu > 40 || sw > 64 || ow > 64 || n > 1<<40 {
		return monoVec{}, corruptf("offset table parameters (%d, %d, %d) out of range", log2bu, sw, ow)
	}
	ns := (n + 1<<log2bu - 1) >> log2bu
	return monoVec{n: n, log2bu: log2bu, sw: sw, ow: ow, sampleSz: int((ns*uint64(sw) + 7) / 8)}, nil
}

func (v *monoVec) onDiskBytes() int {
	return v.sampleSz + int((v.n*uint64(v.ow)+7)/8)
}

// setData keeps a copy of the on-disk blob; nil (a failed read) leaves the
// vector empty, which get reads as zeros.
func (v *monoVec) setData(b []byte) {
	if b == nil {
		return
	}
	v.samples = append(append([]byte(nil), b[:v.sampleSz]...), make([]byte, 8)...)
	v.deltas = append(append([]byte(nil), b[v.sampleSz:]...), make([]byte, 8)...)
}

// get returns value i (i < n).
func (v *monoVec) get(i uint64) uint64 {
	return readBits(v.samples, (i>>v.log2bu)*uint64(v.sw), v.sw) + readBits(v.deltas, i*uint64(v.ow), v.ow)
}

// min0Vec is a packed array of fixed-width unsigned values.
type min0Vec struct {
	n    uint64
	w    uint8
	data []byte
}

func newMin0Vec(n uint64, w uint8) (min0Vec, error) {
	if w > 64 {
		return min0Vec{}, corruptf("packed width %d", w)
	}
	return min0Vec{n: n, w: w}, nil
}

func (v *min0Vec) onDiskBytes() int { return int((v.n*uint64(v.w) + 7) / 8) }

func (v *min0Vec) setData(b []byte) {
	if b != nil {
		v.data = append(append([]byte(nil), b...), make([]byte, 8)...)
	}
}

func (v *min0Vec) get(i uint64) uint64 { return readBits(v.data, i*uint64(v.w), v.w) }

// readBits reads width bits at bit position pos of a little-endian stream.
// Reads past the end yield zero bits.
func readBits(b []byte, pos uint64, width uint8) uint64 {
	if width == 0 {
		return 0
	}
	byteOff := pos >> 3
	shift := pos & 7
	var lo, hi uint64
	lo = load64(b, byteOff)
	v := lo >> shift
	if shift+uint64(width) > 64 {
		hi = load64(b, byteOff+8)
		v |= hi << (64 - shift)
	}
	if width < 64 {
		v &= 1<<width - 1
	}
	return v
}

func load64(b []byte, off uint64) uint64 {
	if off+8 <= uint64(len(b)) {
		return binary.LittleEndian.Uint64(b[off:])
	}
	var t [8]byte
	if off < uint64(len(b)) {
		copy(t[:], b[off:])
	}
	return binary.LittleEndian.Uint64(t[:])
}
