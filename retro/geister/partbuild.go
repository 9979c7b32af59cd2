package geister

import (
	"bufio"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync/atomic"

	units "github.com/docker/go-units"

	geistertb "github.com/tbfs/tbfs/format/geister"
	"github.com/tbfs/tbfs/geister"
)

// partitioned reports whether Build makes pair pr in parts: when a memory
// limit is set that the in-memory solve of the pair would exceed and the
// pair has one red a side.
func partitioned(opts BuildOptions, pr []geistertb.Material) bool {
	return opts.MemLimit > 0 && solveMemory(pr)+baseMemory > opts.MemLimit && Partitionable(pr[0])
}

// partitionedMemory is the least memory a partitioned build of pr needs:
// the tables it captures into, the fewest resident parts, one encoder.
func partitionedMemory(opts BuildOptions, pr []geistertb.Material) int64 {
	var held, part int64
	for _, d := range Dependencies(pr[0]) {
		held += int64(d.Entries())
	}
	for _, m := range pr {
		part = max(part, PartMemory(m))
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = 2
	}
	return held + max(int64(minResidentParts*workers)*part, zstdMemory)
}

// buildPairParts builds pair pr in parts within opts.MemLimit: the parts
// are solved with SolveParts, spilling to opts.Out, their values written
// part by part to a file per material, and then repacked into obsblk
// order, a range of the table per pass over that file, as large a range as
// the memory allows.
func buildPairParts(ctx context.Context, opts BuildOptions, pr []geistertb.Material, logf func(string, ...any)) error {
	var tabs Tables
	var held int64
	for _, d := range Dependencies(pr[0]) {
		v, err := readTable(opts.Out, d)
		if err != nil {
			return err
		}
		if err := tabs.Set(d, v); err != nil {
			return err
		}
		held += int64(len(v))
	}
	avail := opts.MemLimit - baseMemory - held
	restore := heapLimit(opts.MemLimit - baseMemory + heapSlack)
	defer restore()

	// Each material's values in part order, as the parts finish.
	vfiles := map[geistertb.Material]*os.File{}
	vbufs := map[geistertb.Material]*bufio.Writer{}
	for _, m := range pr {
		f, err := os.CreateTemp(opts.Out, "."+m.FileName()+".parts*")
		if err != nil {
			return err
		}
		defer f.Close()
		defer os.Remove(f.Name())
		vfiles[m], vbufs[m] = f, bufio.NewWriterSize(f, 1<<20)
	}
	var valuesWritten int64
	st, err := SolveParts(ctx, &tabs, pr[0], avail, opts.Out, Options{Workers: opts.Workers, Progress: opts.Progress},
		func(m geistertb.Material, _ int, values []byte) error {
			valuesWritten += int64(len(values))
			_, err := vbufs[m].Write(values)
			return err
		})
	if err != nil {
		return err
	}
	for _, m := range pr {
		if err := vbufs[m].Flush(); err != nil {
			return err
		}
	}
	for _, d := range Dependencies(pr[0]) {
		tabs.Drop(d)
	}
	debug.FreeOSMemory()
	if opts.Check {
		logf("%v: self-check left out: it needs the pair's whole tables in memory", pr)
	}
	var repackRead int64
	sums := make([][sha256.Size]byte, len(pr))
	for i, m := range pr {
		n, sum, err := repack(ctx, opts.Out, m, vfiles[m], opts.MemLimit-baseMemory, opts.Workers)
		if err != nil {
			return err
		}
		repackRead += n
		sums[i] = sum
		debug.FreeOSMemory()
	}
	st.SpillWritten += valuesWritten
	st.SpillRead += repackRead
	logf("%v: built in %d parts (at most %d in memory), spill files: %s written, %s read",
		pr, st.Parts, st.Resident, units.BytesSize(float64(st.SpillWritten)), units.BytesSize(float64(st.SpillRead)))
	if opts.OnParts != nil {
		opts.OnParts(pr, st)
	}
	restore()
	enc := max(1, min(zstdEncoders(opts.Workers, pr), int((opts.MemLimit-baseMemory)/zstdMemory)))
	defer heapLimit(int64(enc)*zstdMemory + heapSlack)()
	for i, m := range pr {
		if err := compressTable(ctx, opts.Out, m, sums[i], enc); err != nil {
			return err
		}
		logf("%s: written", m.FileName())
	}
	return nil
}

// repack writes m's raw table in obsblk order, and its frame manifest,
// from its values in part order in parts, using at most memory bytes for
// the range of the table made in one pass. It returns the bytes read from
// parts and the raw file's sha256.
func repack(ctx context.Context, dir string, m geistertb.Material, parts *os.File, memory int64, workers int) (int64, [sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	entries := m.Entries()
	lay := newPartLayout(m)
	window := min(uint64(max(memory, 1<<20)), entries)
	out := make([]byte, window)
	s := newSolver(nil, workers)
	bufs := make([][]byte, s.workers)
	for i := range bufs {
		bufs[i] = make([]byte, lay.size)
	}
	var read atomic.Int64
	err := writeAtomic(dir, m.FileName(), func(w io.Writer) error {
		for lo := uint64(0); lo < entries; lo += window {
			hi := min(lo+window, entries)
			win := out[:hi-lo]
			err := s.eachPart(ctx, partOrder, func(wk, p int) error {
				rk := &s.rankers[wk]
				buf := bufs[wk]
				{
					if _, err := parts.ReadAt(buf, int64(uint64(p)*lay.size)); err != nil {
						return fmt.Errorf("geister: reading the parts of %v: %w", m, err)
					}
					read.Add(int64(len(buf)))
					var rerr error
					lay.walk(p, func(j uint64, pos geister.Position) bool {
						_, idx, _, err := rk.Rank(pos)
						if err != nil {
							rerr = err
							return false
						}
						if idx >= lo && idx < hi {
							win[idx-lo] = buf[j]
						}
						return true
					})
					if rerr != nil {
						return rerr
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
			if _, err := w.Write(win); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return read.Load(), sum, err
	}
	f, err := os.Open(filepath.Join(dir, m.FileName()))
	if err != nil {
		return read.Load(), sum, err
	}
	defer f.Close()
	mf, sum, err := geistertb.ManifestFrom(m, bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return read.Load(), sum, err
	}
	err = writeAtomic(dir, m.FileName()+geistertb.ManifestSuffix, func(w io.Writer) error {
		_, err := w.Write(mf)
		return err
	})
	return read.Load(), sum, err
}
