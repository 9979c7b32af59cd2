package changepoint

import (
	"encoding/binary"
	"fmt"
	"io"
)

// Magic numbers of the two pack kinds (the first four bytes of a file,
// little-endian).
const (
	MagicDTC   = 0x2ec8b17e
	MagicDTM50 = 0xab57c151
)

// Frame flag bits, one flag byte per stored side to move.
const (
	FlagSingular = 0x80
	FlagDropped  = 0x40
	FlagLossOnly = 0x20
	FlagRelaxed  = 0x10
)

// Frame is one side to move's part of a pack file.
type Frame struct {
	// Flags is the frame's flag byte as stored (for a symmetric material's
	// black frame, a copy of white's with FlagDropped added).
	Flags byte
	// Singular frames hold one value (DRAW) for every position; dropped
	// frames hold nothing and are rebuilt by the prober.
	Singular, Dropped, LossOnly, Relaxed bool
	// Mirrored marks the black frame of a symmetric material, which is the
	// white frame read on the colour-flipped position.
	Mirrored bool

	// Perm is the stored index permutation, for the position index.
	Perm uint32
	// EntryBytes is the rank width (1 or 2).
	EntryBytes int
	// BlockPositions is the number of positions per block; the last block
	// holds TailPositions when that is not zero.
	BlockPositions uint32
	BlockCount     uint64
	TailPositions  uint32
	// DataSize is the byte length of the frame's compressed data.
	DataSize uint64
	// RankToValue maps a stored rank to its storage value.
	RankToValue []uint16

	offsets monoVec
	usizes  packedVec
	// DataOffset is the file offset of the frame's compressed data.
	DataOffset int64
}

// Header is the parsed header of a .lzdtm50 or .lzdtc file.
type Header struct {
	Magic uint32
	// Key is the material key the file was built for (the reference's
	// minimal material key); the caller checks it against the material.
	Key uint32
	// Symmetric is true when the file stores one frame for a material that
	// is its own colour mirror.
	Symmetric bool
	// Frames is indexed by side to move: 0 white, 1 black.
	Frames [2]Frame
	// HeaderBytes is how much of the file the header (with the offset
	// sections) occupies.
	HeaderBytes int64
}

type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) need(n int) bool {
	if r.err != nil {
		return false
	}
	if n < 0 || n > len(r.b)-r.off {
		r.err = io.ErrUnexpectedEOF
		return false
	}
	return true
}

func (r *reader) u8() uint8 {
	if !r.need(1) {
		return 0
	}
	v := r.b[r.off]
	r.off++
	return v
}

func (r *reader) u16() uint16 {
	if !r.need(2) {
		return 0
	}
	v := binary.LittleEndian.Uint16(r.b[r.off:])
	r.off += 2
	return v
}

func (r *reader) u32() uint32 {
	if !r.need(4) {
		return 0
	}
	v := binary.LittleEndian.Uint32(r.b[r.off:])
	r.off += 4
	return v
}

func (r *reader) u64() uint64 {
	if !r.need(8) {
		return 0
	}
	v := binary.LittleEndian.Uint64(r.b[r.off:])
	r.off += 8
	return v
}

func (r *reader) bytes(n uint64) []byte {
	if n > uint64(len(r.b)) || !r.need(int(n)) {
		r.err = io.ErrUnexpectedEOF
		return nil
	}
	v := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	return v
}

// ParseHeader parses a pack header from buf, a prefix of the file, which is
// fileSize bytes long. When buf is too short it returns an error matching
// io.ErrUnexpectedEOF and the caller may retry with a longer prefix; every
// other error matches ErrCorrupt.
func ParseHeader(buf []byte, fileSize int64, magic uint32) (*Header, error) {
	if fileSize&63 != 8 {
		return nil, corrupt("file size %d is not 8 past a multiple of 64", fileSize)
	}
	r := &reader{b: buf}
	h := &Header{Magic: r.u32()}
	kt := r.u32()
	if r.err != nil {
		return nil, r.err
	}
	if h.Magic != magic {
		return nil, corrupt("magic %#08x, want %#08x", h.Magic, magic)
	}
	h.Key = kt >> 2
	n := int(kt & 3)
	if n != 1 && n != 2 {
		return nil, corrupt("%d stored frames", n)
	}
	h.Symmetric = n == 1
	for c := 0; c < n; c++ {
		f := &h.Frames[c]
		f.Flags = r.u8()
		f.LossOnly = f.Flags&FlagLossOnly != 0
		f.Relaxed = f.Flags&FlagRelaxed != 0
		switch {
		case f.Flags&FlagSingular != 0:
			f.Singular = true
			if v := r.u8(); r.err == nil && v != 0 {
				return nil, corrupt("frame %d: singular value %d, only DRAW (0) is defined", c, v)
			}
		case f.Flags&FlagDropped != 0:
			f.Dropped = true
		default:
			f.Perm = r.u32()
			f.EntryBytes = int(r.u8())
			f.BlockPositions = r.u32()
			f.BlockCount = r.u64()
			f.TailPositions = r.u32()
			f.DataSize = r.u64()
			nr := int(r.u16())
			if r.err != nil {
				return nil, r.err
			}
			if f.EntryBytes != 1 && f.EntryBytes != 2 {
				return nil, corrupt("frame %d: rank width %d", c, f.EntryBytes)
			}
			if f.BlockPositions == 0 || f.BlockCount == 0 || f.BlockCount > 1<<32 {
				return nil, corrupt("frame %d: %d blocks of %d positions", c, f.BlockCount, f.BlockPositions)
			}
			if f.TailPositions >= f.BlockPositions {
				return nil, corrupt("frame %d: tail of %d positions in blocks of %d", c, f.TailPositions, f.BlockPositions)
			}
			if f.EntryBytes == 1 && nr > 256 {
				return nil, corrupt("frame %d: %d ranks for 1-byte entries", c, nr)
			}
			f.RankToValue = make([]uint16, nr)
			for i := range f.RankToValue {
				f.RankToValue[i] = r.u16()
			}
		}
		if r.err != nil {
			return nil, r.err
		}
	}
	if h.Symmetric {
		b := &h.Frames[1]
		*b = Frame{Flags: h.Frames[0].Flags | FlagDropped, Dropped: true, Mirrored: true,
			LossOnly: h.Frames[0].LossOnly, Relaxed: h.Frames[0].Relaxed}
	}
	for c := 0; c < n; c++ {
		f := &h.Frames[c]
		if f.Singular || f.Dropped {
			continue
		}
		log2bu, sw, ow, uw := r.u8(), r.u8(), r.u8(), r.u8()
		if r.err != nil {
			return nil, r.err
		}
		if log2bu > 32 || sw > 64 || ow > 64 || uw > 64 {
			return nil, corrupt("frame %d: offset section widths %d/%d/%d/%d", c, log2bu, sw, ow, uw)
		}
		nv := f.BlockCount + 1
		ns := (nv + 1<<log2bu - 1) >> log2bu
		sb := (ns*uint64(sw) + 7) / 8
		db := (nv*uint64(ow) + 7) / 8
		samples := r.bytes(sb)
		deltas := r.bytes(db)
		us := r.bytes((f.BlockCount*uint64(uw) + 7) / 8)
		if r.err != nil {
			return nil, r.err
		}
		f.offsets = monoVec{samples: packedVec{samples, sw}, deltas: packedVec{deltas, ow}, log2bu: log2bu}
		f.usizes = packedVec{us, uw}
	}
	pos := int64(r.off)
	h.HeaderBytes = pos
	for c := 0; c < n; c++ {
		f := &h.Frames[c]
		if f.Singular || f.Dropped {
			continue
		}
		pos = (pos + 63) &^ 63
		f.DataOffset = pos
		if f.DataSize > uint64(fileSize) || pos+int64(f.DataSize) > fileSize-8 {
			return nil, corrupt("frame %d: %d bytes of data at offset %d run past the %d-byte file", c, f.DataSize, pos, fileSize)
		}
		pos += int64(f.DataSize)
		if last := f.offsets.get(f.BlockCount); last != f.DataSize {
			return nil, corrupt("frame %d: block offsets end at %d, data is %d bytes", c, last, f.DataSize)
		}
	}
	return h, nil
}

// BlockInfo locates one compressed block of a frame.
type BlockInfo struct {
	// Offset and Size place the compressed bytes in the file; Size 0 marks
	// a skipped block, every position of which is DRAW or illegal.
	Offset, Size int64
	// USize is the decompressed payload length.
	USize int
	// Positions is the number of positions the block holds.
	Positions int
}

// Block returns where block i of the frame lives.
func (f *Frame) Block(i uint64) (BlockInfo, error) {
	if f.Singular || f.Dropped {
		return BlockInfo{}, fmt.Errorf("changepoint: frame has no blocks")
	}
	if i >= f.BlockCount {
		return BlockInfo{}, corrupt("block %d of %d", i, f.BlockCount)
	}
	lo, hi := f.offsets.get(i), f.offsets.get(i+1)
	if hi < lo || hi > f.DataSize {
		return BlockInfo{}, corrupt("block %d spans %d..%d of %d data bytes", i, lo, hi, f.DataSize)
	}
	bi := BlockInfo{Offset: f.DataOffset + int64(lo), Size: int64(hi - lo), Positions: int(f.BlockPositions)}
	if i == f.BlockCount-1 && f.TailPositions != 0 {
		bi.Positions = int(f.TailPositions)
	}
	if bi.Size != 0 {
		u := f.usizes.get(i)
		if u < headerBytes || u > 1<<30 || u&3 != 0 {
			return BlockInfo{}, corrupt("block %d: payload size %d", i, u)
		}
		bi.USize = int(u)
	}
	return bi, nil
}

// Locate splits a frame index into its block and the position inside it.
func (f *Frame) Locate(index uint64) (block uint64, pos int) {
	return index / uint64(f.BlockPositions), int(index % uint64(f.BlockPositions))
}

// packedVec is a vector of fixed-width little-endian bit fields.
type packedVec struct {
	b     []byte
	width uint8
}

func (v packedVec) get(i uint64) uint64 {
	if v.width == 0 {
		return 0
	}
	bit := i * uint64(v.width)
	var x uint64
	// Fields past the stored bytes read as zero; ParseHeader sized every
	// vector for the indexes it hands out.
	first := bit / 8
	for k := uint64(0); k < 8 && first+k < uint64(len(v.b)); k++ {
		x |= uint64(v.b[first+k]) << (8 * k)
	}
	sh := bit & 7
	x >>= sh
	if sh+uint64(v.width) > 64 && first+8 < uint64(len(v.b)) {
		x |= uint64(v.b[first+8]) << (64 - sh)
	}
	if v.width < 64 {
		x &= 1<<v.width - 1
	}
	return x
}

// monoVec is the reference's sampled delta coding of a non-decreasing
// sequence: one full sample per 2^log2bu values and a fixed-width delta from
// it for every value.
type monoVec struct {
	samples, deltas packedVec
	log2bu          uint8
}

func (m monoVec) get(i uint64) uint64 {
	return m.samples.get(i>>m.log2bu) + m.deltas.get(i)
}
