package chesstb

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// This file reads the generator's ".info" side files: a fixed-size record
// the generator writes next to each table with, per side to move, how many
// real positions are won, drawn, lost and illegal. Counts are of positions
// on the board, not of table cells: a cell stands for every placement its
// board symmetry folds onto it, and cells whose men collide count nothing.

// InfoSize is the length in bytes of a generator .info file.
const InfoSize = 328

// The record is little-endian: four count pairs, the longest win pair, two
// NUL-padded FEN fields, alignment padding, and the index pair.
const (
	infoFENBytes = 120
	infoFENAt    = 68
	infoIdxAt    = 312
)

// ColorCounts are the generator's totals for one side to move. Cursed wins
// count as wins and blessed losses as losses, as the generator counts them.
type ColorCounts struct {
	Win, Draw, Lose, Illegal uint64
}

// Legal is the number of legal positions: wins, draws and losses.
func (c ColorCounts) Legal() uint64 { return c.Win + c.Draw + c.Lose }

// Info is one parsed .info file. Index 0 is White to move, 1 Black.
type Info struct {
	Counts [2]ColorCounts
	// LongestWin is the longest win in the metric's units, LongestIndex
	// its cell and LongestFEN its position (empty when there is no win).
	LongestWin   [2]uint16
	LongestIndex [2]uint64
	LongestFEN   [2]string
}

// ParseInfo decodes a generator .info file. A record of the wrong length,
// an unterminated FEN field or non-printable FEN bytes match ErrCorrupt.
func ParseInfo(data []byte) (*Info, error) {
	if len(data) != InfoSize {
		return nil, corruptf("info record of %d bytes, want %d", len(data), InfoSize)
	}
	le := binary.LittleEndian
	var in Info
	for c := range 2 {
		in.Counts[c] = ColorCounts{
			Win:     le.Uint64(data[0+8*c:]),
			Lose:    le.Uint64(data[16+8*c:]),
			Draw:    le.Uint64(data[32+8*c:]),
			Illegal: le.Uint64(data[48+8*c:]),
		}
		in.LongestWin[c] = le.Uint16(data[64+2*c:])
		in.LongestIndex[c] = le.Uint64(data[infoIdxAt+8*c:])
		field := data[infoFENAt+infoFENBytes*c : infoFENAt+infoFENBytes*(c+1)]
		end := bytes.IndexByte(field, 0)
		if end < 0 {
			return nil, corruptf("info FEN field %d has no terminating NUL", c)
		}
		for _, b := range field[:end] {
			if b < 0x20 || b > 0x7e {
				return nil, corruptf("info FEN field %d holds byte %#x", c, b)
			}
		}
		in.LongestFEN[c] = string(field[:end])
	}
	// No table has more than maxIndexPositions cells, each standing for at
	// most eight placements; a larger count is damage, not data.
	for c := range 2 {
		n := in.Counts[c]
		for _, v := range [...]uint64{n.Win, n.Draw, n.Lose, n.Illegal} {
			if v > maxIndexPositions*8 {
				return nil, corruptf("info count %d for colour %d exceeds any table", v, c)
			}
		}
	}
	return &in, nil
}

// String formats the counts as the generator's dump prints them.
func (c ColorCounts) String() string {
	return fmt.Sprintf("win=%d draw=%d lose=%d illegal=%d", c.Win, c.Draw, c.Lose, c.Illegal)
}
