package changepoint

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/ulikunitz/xz/lzma"
)

// propsBytes is the size of the LZMA properties the format stores at the end
// of every compressed block (one lc/lp/pb byte and the dictionary size).
const propsBytes = 5

// Decompress inflates one compressed block to exactly usize bytes. The
// format keeps the LZMA properties after the stream rather than before it,
// and no size or end marker, so the classic header is rebuilt here.
func Decompress(comp []byte, usize int) ([]byte, error) {
	if len(comp) < propsBytes+1 {
		return nil, corrupt("compressed block of %d bytes", len(comp))
	}
	if usize <= 0 {
		return nil, corrupt("decompressed size %d", usize)
	}
	var hdr [13]byte
	copy(hdr[:5], comp[len(comp)-propsBytes:])
	binary.LittleEndian.PutUint64(hdr[5:], uint64(usize))
	if hdr[0] >= 9*5*5 {
		return nil, corrupt("bad LZMA properties byte %#x", hdr[0])
	}
	r, err := lzma.NewReader(io.MultiReader(bytes.NewReader(hdr[:]), bytes.NewReader(comp[:len(comp)-propsBytes])))
	if err != nil {
		return nil, fmt.Errorf("%w: LZMA header: %v", ErrCorrupt, err)
	}
	out := make([]byte, usize)
	if _, err := io.ReadFull(r, out); err != nil {
		return nil, fmt.Errorf("%w: LZMA stream: %v", ErrCorrupt, err)
	}
	return out, nil
}
