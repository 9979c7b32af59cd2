package changepoint

import (
	"fmt"

	"github.com/tbfs/tbfs/format/chesstb/internal/lzma"
)

// Decompress inflates one compressed block to exactly usize bytes. The
// format keeps the LZMA properties after the stream rather than before it,
// and no size or end marker.
func Decompress(comp []byte, usize int) ([]byte, error) {
	if len(comp) < lzma.PropsSize+1 {
		return nil, corrupt("compressed block of %d bytes", len(comp))
	}
	if usize <= 0 {
		return nil, corrupt("decompressed size %d", usize)
	}
	out, err := lzma.DecodeAll(comp[:len(comp)-lzma.PropsSize], comp[len(comp)-lzma.PropsSize:], usize)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return out, nil
}
