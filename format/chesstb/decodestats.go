package chesstb

import "sync/atomic"

// DecodeStat is what a Tablebase's probes have decompressed from the LZMA
// blocks of one table kind. A probe decodes a block only up to the bytes it
// reads, so Decoded may stay below BlockBytes; the two tell a decoder's
// speed apart from how much a pass makes it decode.
type DecodeStat struct {
	Blocks     int64 // blocks whose decoding began
	BlockBytes int64 // their decoded size, were each decoded whole
	Decoded    int64 // the bytes decoded
}

// decodeCounter is one kind's DecodeStat as it accrues; a nil counter
// counts nothing.
type decodeCounter struct{ blocks, blockBytes, decoded atomic.Int64 }

// begin counts a block of size bytes whose decoding starts.
func (c *decodeCounter) begin(size int) {
	if c != nil {
		c.blocks.Add(1)
		c.blockBytes.Add(int64(size))
	}
}

// add counts n more bytes decoded.
func (c *decodeCounter) add(n int) {
	if c != nil {
		c.decoded.Add(int64(n))
	}
}

// DecodeStats returns what probes have decompressed from the LZMA blocks of
// kind k's tables (the DTZ, DTC, DTM and DTM50 kinds; WDL blocks are LZ4 and
// counted nowhere). Blocks read back from the decoded store are not
// decoded, so not counted; one that fails there and is decoded afresh is.
func (tb *Tablebase) DecodeStats(k Kind) DecodeStat {
	if k >= numKinds {
		return DecodeStat{}
	}
	c := &tb.decodes[k]
	return DecodeStat{Blocks: c.blocks.Load(), BlockBytes: c.blockBytes.Load(), Decoded: c.decoded.Load()}
}
