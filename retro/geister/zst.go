package geister

import (
	"context"
	"fmt"
	"io"
	"runtime"

	seekable "github.com/SaveTheRbtz/zstd-seekable-format-go/pkg"
	"github.com/klauspost/compress/zstd"
)

// FrameSize is the number of table bytes in each zstd frame of a
// ".bin.zst" file, as the reference's compressor cuts them, so that a
// reader decompresses at most one 8 KiB frame per probe.
const FrameSize = 8192

// WriteSeekableZstd writes the table read from r to w as seekable zstd:
// one independent frame per FrameSize bytes (the last may be shorter),
// compressed at the best level klauspost/compress offers and without
// checksums, followed by the seek table. Frames are compressed on workers
// goroutines (0 means GOMAXPROCS) and written in order. The table is read
// a frame at a time, so it need not be in memory; each encoder costs about
// zstdMemory.
func WriteSeekableZstd(ctx context.Context, w io.Writer, r io.Reader, workers int) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	enc, err := zstd.NewWriter(nil,
		zstd.WithEncoderLevel(zstd.SpeedBestCompression),
		zstd.WithEncoderCRC(false),
		zstd.WithEncoderConcurrency(workers),
		// A frame never exceeds FrameSize, so a larger window would only
		// cost memory.
		zstd.WithWindowSize(1<<16),
	)
	if err != nil {
		return fmt.Errorf("geister: zstd encoder: %w", err)
	}
	defer enc.Close()
	sw, err := seekable.NewWriter(w, enc)
	if err != nil {
		return fmt.Errorf("geister: seekable writer: %w", err)
	}
	next := func() ([]byte, error) {
		// Each frame gets its own buffer: frames are compressed while
		// later ones are read.
		f := make([]byte, FrameSize)
		n, err := io.ReadFull(r, f)
		switch {
		case err == io.EOF:
			return nil, nil
		case err == io.ErrUnexpectedEOF:
			return f[:n], nil
		case err != nil:
			return nil, fmt.Errorf("geister: reading the table to compress: %w", err)
		}
		return f, nil
	}
	if err := sw.WriteMany(ctx, next, seekable.WithConcurrency(workers)); err != nil {
		sw.Close()
		return fmt.Errorf("geister: writing zstd frames: %w", err)
	}
	if err := sw.Close(); err != nil {
		return fmt.Errorf("geister: writing seek table: %w", err)
	}
	return nil
}
