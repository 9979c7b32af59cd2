package geister

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	units "github.com/docker/go-units"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"

	geistertb "github.com/tbfs/tbfs/format/geister"
)

// BuildOptions say what Build makes and where.
type BuildOptions struct {
	// Out is the directory the tables are written to (created if needed).
	Out string
	// UptoTotal builds every material with at most this many pieces
	// (4..16). Ignored when Materials is set.
	UptoTotal int
	// Materials, when set, builds these materials (each with its twin)
	// and whatever they depend on.
	Materials []geistertb.Material
	// MemLimit bounds the memory of the build (bytes); 0 means no limit.
	// A pair with one red a side whose in-memory solve would exceed it is
	// built in parts spilled to disk in Out (SolveParts) and repacked; the
	// build refuses to start when any other pair, or a partitioned pair's
	// least working set, would exceed it.
	MemLimit int64
	// OnParts, when set, receives the spill traffic of each pair built in
	// parts.
	OnParts func(pair []geistertb.Material, st PartStats)
	// Check tests every entry of each new table against the consistency
	// rule before it is written, as the reference builder does.
	Check bool
	// Workers is the number of goroutines; 0 means GOMAXPROCS.
	Workers int
	// Progress receives the solver's progress; Logf one line per material
	// built or skipped. Either may be nil.
	Progress func(Progress)
	Logf     func(format string, args ...any)
}

// ErrMemory is matched by the error Build returns when its memory estimate
// exceeds BuildOptions.MemLimit.
var ErrMemory = errors.New("geister: build needs more memory than allowed")

// Plan returns the materials Build makes for opts, in the order it makes
// them: by total piece count, then id, each material directly followed by
// its twin when that is a different material.
func Plan(opts BuildOptions) ([]geistertb.Material, error) {
	want := map[geistertb.Material]bool{}
	var add func(m geistertb.Material)
	add = func(m geistertb.Material) {
		if want[m] {
			return
		}
		want[m], want[m.Swap()] = true, true
		for _, d := range Dependencies(m) {
			add(d)
		}
	}
	if len(opts.Materials) > 0 {
		for _, m := range opts.Materials {
			if !m.Valid() {
				return nil, fmt.Errorf("%w: %v", geistertb.ErrNoMaterial, m)
			}
			add(m)
		}
	} else {
		if opts.UptoTotal < 4 || opts.UptoTotal > 16 {
			return nil, fmt.Errorf("geister: total piece count %d outside 4..16", opts.UptoTotal)
		}
		for _, m := range geistertb.Materials() {
			if m.Total() <= opts.UptoTotal {
				add(m)
			}
		}
	}
	var all []geistertb.Material
	for m := range want {
		all = append(all, m)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].ID() < all[j].ID() })
	var out []geistertb.Material
	done := map[geistertb.Material]bool{}
	for _, m := range all {
		if done[m] {
			continue
		}
		out = append(out, m)
		done[m] = true
		if sw := m.Swap(); !done[sw] {
			out = append(out, sw)
			done[sw] = true
		}
	}
	return out, nil
}

// pairs groups a plan into solve units: a material and its twin.
func pairs(plan []geistertb.Material) [][]geistertb.Material {
	var out [][]geistertb.Material
	for i := 0; i < len(plan); i++ {
		if sw := plan[i].Swap(); sw != plan[i] && i+1 < len(plan) && plan[i+1] == sw {
			out = append(out, plan[i:i+2])
			i++
			continue
		}
		out = append(out, plan[i:i+1])
	}
	return out
}

// zstdMemory is an allowance for one zstd encoder at the best level
// (klauspost/compress keeps a 32 MiB match table per encoder).
const zstdMemory = 40 << 20

// heapSlack is the heap a phase of a build may use beyond its large
// arrays (the frames being compressed, a worker's buffers) before the
// garbage collector is made to run.
const heapSlack = 12 << 20

// heapLimit lowers the Go runtime's soft memory limit to n bytes, unless it
// is lower already, and returns the function that puts it back. A phase of
// a build knows what it keeps alive; by default garbage would be collected
// only when the heap reached twice that, which would double the peak.
func heapLimit(n int64) func() {
	old := debug.SetMemoryLimit(-1)
	if old <= n {
		return func() {}
	}
	debug.SetMemoryLimit(n)
	var once sync.Once
	return func() { once.Do(func() { debug.SetMemoryLimit(old) }) }
}

// baseMemory is an allowance for the Go runtime, the binary and the small
// allocations of a build.
const baseMemory = 32 << 20

// zstdEncoders is the number of frames compressed at once for a pair:
// one per worker, but no more than fit in the memory the pair's solve
// needed, so that compressing never raises a build's peak above the
// solve's (compression is a small part of a build's time).
func zstdEncoders(workers int, pr []geistertb.Material) int {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	return max(1, min(workers, int(solveMemory(pr)/zstdMemory)))
}

// solveMemory is the memory the solve of a pair needs: its working state
// and the tables its captures lead to.
func solveMemory(pr []geistertb.Material) int64 {
	var n int64
	for _, m := range pr {
		n += int64(m.Entries()) * solveBytesPerEntry
	}
	for _, d := range Dependencies(pr[0]) {
		n += int64(d.Entries())
	}
	return n
}

// EstimateMemory returns the peak memory in bytes Build needs for opts:
// the largest of, over its pairs, the pair's solve (its working state,
// solveBytesPerEntry per entry, and the tables its captures lead to, read
// from disk for the pair and dropped after it) and its compression (the
// zstd encoders; the values are read back from the raw files), plus an
// allowance for the runtime. Pairs already built (every material's sidecar
// in opts.Out) are not counted; Build verifies them and refuses a pair
// that turns out to need rebuilding beyond opts.MemLimit.
func EstimateMemory(opts BuildOptions) (int64, error) {
	plan, err := Plan(opts)
	if err != nil {
		return 0, err
	}
	var peak int64
	for _, pr := range pairs(plan) {
		if opts.Out != "" && sidecarsPresent(opts.Out, pr) {
			continue
		}
		if partitioned(opts, pr) {
			// A partitioned pair uses what the limit leaves, at least its
			// fewest parts.
			peak = max(peak, min(opts.MemLimit, solveMemory(pr)+baseMemory), pairMemory(opts, pr))
			continue
		}
		peak = max(peak, pairMemory(opts, pr))
	}
	return peak, nil
}

// sidecarsPresent reports whether every material of pr has its sidecar in
// dir, which is what a finished build leaves.
func sidecarsPresent(dir string, pr []geistertb.Material) bool {
	for _, m := range pr {
		if _, err := os.Stat(filepath.Join(dir, sidecarName(m))); err != nil {
			return false
		}
	}
	return true
}

// pairMemory is the memory Build needs for pair pr alone.
func pairMemory(opts BuildOptions, pr []geistertb.Material) int64 {
	if partitioned(opts, pr) {
		return partitionedMemory(opts, pr) + baseMemory
	}
	return max(solveMemory(pr), int64(zstdEncoders(opts.Workers, pr))*zstdMemory) + baseMemory
}

// Build makes the tables opts asks for, in dependency order. A material
// whose files are already in Out and match their ".sha256" sidecar is not
// built again. Each pair reads the tables its captures lead to from Out
// and drops them, and its own, once it is written, so only one pair's
// tables are in memory at a time. Each file is written under a temporary
// name and renamed, and the sidecar last, so an interrupted build leaves
// only complete materials behind and a second run finishes the job with
// the same bytes.
func Build(ctx context.Context, opts BuildOptions) error {
	plan, err := Plan(opts)
	if err != nil {
		return err
	}
	need, err := EstimateMemory(opts)
	if err != nil {
		return err
	}
	if opts.MemLimit > 0 && need > opts.MemLimit {
		return fmt.Errorf("%w: about %s estimated, %s allowed", ErrMemory, units.BytesSize(float64(need)), units.BytesSize(float64(opts.MemLimit)))
	}
	if err := os.MkdirAll(opts.Out, 0o755); err != nil {
		return err
	}
	logf := opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	for _, pr := range pairs(plan) {
		complete := true
		for _, m := range pr {
			ok, err := Verified(opts.Out, m)
			if err != nil {
				return err
			}
			complete = complete && ok
		}
		if complete {
			for _, m := range pr {
				logf("%s: complete and verified, skipped", m.FileName())
			}
			continue
		}
		if need := pairMemory(opts, pr); opts.MemLimit > 0 && need > opts.MemLimit {
			return fmt.Errorf("%w: %v needs about %s, %s allowed", ErrMemory, pr, units.BytesSize(float64(need)), units.BytesSize(float64(opts.MemLimit)))
		}
		build := buildPair
		if partitioned(opts, pr) {
			build = buildPairParts
		}
		if err := build(ctx, opts, pr, logf); err != nil {
			return err
		}
		// The pair's tables are garbage now: give their memory back before
		// the next pair asks for more.
		debug.FreeOSMemory()
	}
	return nil
}

// buildPair solves, checks and writes one pair, reading the tables it
// captures into from opts.Out.
func buildPair(ctx context.Context, opts BuildOptions, pr []geistertb.Material, logf func(string, ...any)) error {
	// On the heap are the pair's values and the tables it captures into;
	// its working state is outside it (allocWords).
	var heap int64
	for _, m := range pr {
		heap += int64(m.Entries())
	}
	for _, d := range Dependencies(pr[0]) {
		heap += int64(d.Entries())
	}
	restore := heapLimit(heap + heapSlack)
	defer restore()
	var tabs Tables
	for _, d := range Dependencies(pr[0]) {
		v, err := readTable(opts.Out, d)
		if err != nil {
			return err
		}
		if err := tabs.Set(d, v); err != nil {
			return err
		}
	}
	if err := Solve(ctx, &tabs, pr[0], Options{Workers: opts.Workers, Progress: opts.Progress}); err != nil {
		return err
	}
	if opts.Check {
		for _, m := range pr {
			if err := Check(ctx, &tabs, m, opts.Workers); err != nil {
				return fmt.Errorf("geister: self-check of %v failed: %w", m, err)
			}
			logf("%s: every entry checked against its children", m.FileName())
		}
	}
	for _, d := range Dependencies(pr[0]) {
		tabs.Drop(d)
	}
	sums := make([][sha256.Size]byte, len(pr))
	for i, m := range pr {
		v, _ := tabs.Get(m)
		var err error
		if sums[i], err = writeRaw(opts.Out, m, v); err != nil {
			return err
		}
		tabs.Drop(m)
	}
	restore()
	// Compressing needs only the raw files: the values' memory goes back
	// first, for the encoders. Their frames are garbage a moment after
	// they are made; the soft limit has them collected long before the
	// heap doubles, as it would by default.
	debug.FreeOSMemory()
	enc := zstdEncoders(opts.Workers, pr)
	defer heapLimit(int64(enc)*zstdMemory + heapSlack)()
	for i, m := range pr {
		if err := compressTable(ctx, opts.Out, m, sums[i], enc); err != nil {
			return err
		}
		logf("%s: written", m.FileName())
	}
	return nil
}

// readTable reads the raw table of m, built earlier, from dir.
func readTable(dir string, m geistertb.Material) ([]byte, error) {
	f, err := os.Open(filepath.Join(dir, m.FileName()))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMissingTable, err)
	}
	defer f.Close()
	v := make([]byte, m.Entries())
	if _, err := io.ReadFull(f, v); err != nil {
		return nil, fmt.Errorf("geister: reading %s: %w", m.FileName(), err)
	}
	if n, _ := f.Read(make([]byte, 1)); n != 0 {
		return nil, fmt.Errorf("geister: %s is longer than the material's %d entries", m.FileName(), m.Entries())
	}
	return v, nil
}

// sidecarName is the name of the file recording the sha256 of m's two
// table files, in the format of sha256sum(1).
func sidecarName(m geistertb.Material) string { return m.FileName() + ".sha256" }

// writeRaw writes m's raw file and frame manifest and returns the raw
// file's sha256. Once it has, the values are no longer needed in memory:
// compressTable reads them back from the raw file.
func writeRaw(dir string, m geistertb.Material, values []byte) ([sha256.Size]byte, error) {
	raw := m.FileName()
	rawSum := sha256.Sum256(values)
	if err := writeAtomic(dir, raw, func(w io.Writer) error {
		_, err := w.Write(values)
		return err
	}); err != nil {
		return rawSum, err
	}
	// The frame manifest lets a reader check the table chunk by chunk as
	// it reads instead of hashing it whole on open.
	mf, err := geistertb.ManifestOf(m, values)
	if err != nil {
		return rawSum, err
	}
	return rawSum, writeAtomic(dir, raw+geistertb.ManifestSuffix, func(w io.Writer) error {
		_, err := w.Write(mf)
		return err
	})
}

// compressTable writes m's seekable-zstd file from its raw file, checking
// that the raw file still has rawSum, and then the sidecar, which makes the
// material complete.
func compressTable(ctx context.Context, dir string, m geistertb.Material, rawSum [sha256.Size]byte, workers int) error {
	raw := m.FileName()
	f, err := os.Open(filepath.Join(dir, raw))
	if err != nil {
		return err
	}
	defer f.Close()
	// The raw file is read once, for the compressor and for its sha256,
	// so a change made to it since it was written is not compressed
	// unnoticed.
	readSum := sha256.New()
	h := sha256.New()
	if err := writeAtomic(dir, raw+".zst", func(w io.Writer) error {
		return WriteSeekableZstd(ctx, io.MultiWriter(w, h), io.TeeReader(bufio.NewReaderSize(f, 1<<20), readSum), workers)
	}); err != nil {
		return err
	}
	if !bytes.Equal(readSum.Sum(nil), rawSum[:]) {
		os.Remove(filepath.Join(dir, raw+".zst"))
		return fmt.Errorf("geister: %s changed while it was compressed", raw)
	}
	side := fmt.Sprintf("%s  %s\n%s  %s\n", hex.EncodeToString(rawSum[:]), raw, hex.EncodeToString(h.Sum(nil)), raw+".zst")
	return writeAtomic(dir, sidecarName(m), func(w io.Writer) error {
		_, err := io.WriteString(w, side)
		return err
	})
}

// writeAtomic writes name in dir through a temporary file and a rename.
func writeAtomic(dir, name string, fill func(io.Writer) error) error {
	f, err := os.CreateTemp(dir, "."+name+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := fill(bw); err != nil {
		f.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	// CreateTemp makes the file private; tables are for everyone to read.
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), filepath.Join(dir, name))
}

// Verified reports whether m's raw and compressed files in dir exist, the
// raw file has the material's size, and both match the sha256 sums in the
// sidecar. A missing file or sidecar is not an error, just not verified.
func Verified(dir string, m geistertb.Material) (bool, error) {
	side, err := os.ReadFile(filepath.Join(dir, sidecarName(m)))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	want := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(side)), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		if !ok {
			return false, nil
		}
		want[name] = sum
	}
	raw := m.FileName()
	for _, name := range []string{raw, raw + ".zst"} {
		sum, ok := want[name]
		if !ok {
			return false, nil
		}
		f, err := os.Open(filepath.Join(dir, name))
		if errors.Is(err, os.ErrNotExist) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		h := sha256.New()
		n, err := io.Copy(h, f)
		f.Close()
		if err != nil {
			return false, err
		}
		if name == raw && uint64(n) != m.Entries() {
			return false, nil
		}
		if !bytes.Equal([]byte(hex.EncodeToString(h.Sum(nil))), []byte(sum)) {
			return false, nil
		}
	}
	return true, nil
}
