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
	"sort"
	"strings"

	model "github.com/tbfs/tbfs/format/geister"
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
	Materials []model.Material
	// MemLimit refuses to start when the estimated peak memory exceeds it
	// (bytes); 0 means no limit.
	MemLimit int64
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
func Plan(opts BuildOptions) ([]model.Material, error) {
	want := map[model.Material]bool{}
	var add func(m model.Material)
	add = func(m model.Material) {
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
				return nil, fmt.Errorf("%w: %v", model.ErrNoMaterial, m)
			}
			add(m)
		}
	} else {
		if opts.UptoTotal < 4 || opts.UptoTotal > 16 {
			return nil, fmt.Errorf("geister: total piece count %d outside 4..16", opts.UptoTotal)
		}
		for _, m := range model.Materials() {
			if m.Total() <= opts.UptoTotal {
				add(m)
			}
		}
	}
	var all []model.Material
	for m := range want {
		all = append(all, m)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].ID() < all[j].ID() })
	var out []model.Material
	done := map[model.Material]bool{}
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
func pairs(plan []model.Material) [][]model.Material {
	var out [][]model.Material
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

// zstdMemory is a generous allowance for the zstd encoders at the best
// level, per worker.
const zstdMemory = 96 << 20

// EstimateMemory returns the peak memory in bytes Build needs for opts:
// the largest pair's working state (3 bytes and a bit per entry) plus the
// tables held for later captures, plus the compressors.
func EstimateMemory(opts BuildOptions) (int64, error) {
	plan, err := Plan(opts)
	if err != nil {
		return 0, err
	}
	var peak int64
	for _, pr := range pairs(plan) {
		var work int64
		for _, m := range pr {
			work += int64(m.Entries())*3 + int64(m.Entries())/8
		}
		var held int64
		for _, m := range plan {
			if m.Total() == pr[0].Total()-1 {
				held += int64(m.Entries())
			}
		}
		peak = max(peak, work+held)
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = 2
	}
	return peak + int64(workers)*zstdMemory, nil
}

// Build makes the tables opts asks for, in dependency order. A material
// whose files are already in Out and match their ".sha256" sidecar is not
// built again; it is read back when a later material captures into it. Each
// file is written under a temporary name and renamed, and the sidecar last,
// so an interrupted build leaves only complete materials behind and a
// second run finishes the job with the same bytes.
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
	var tabs Tables
	// lastUse is the total piece count of the last material that captures
	// into each material: after that total its table may be dropped.
	lastUse := map[model.Material]int{}
	for _, m := range plan {
		for _, d := range Dependencies(m) {
			lastUse[d] = max(lastUse[d], m.Total())
		}
	}
	for _, pr := range pairs(plan) {
		for m := range lastUse {
			if lastUse[m] < pr[0].Total() {
				tabs.Drop(m)
			}
		}
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
				if lastUse[m] > 0 {
					v, err := os.ReadFile(filepath.Join(opts.Out, m.FileName()))
					if err != nil {
						return err
					}
					if err := tabs.Set(m, v); err != nil {
						return err
					}
				}
			}
			continue
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
		for _, m := range pr {
			v, _ := tabs.Get(m)
			if err := writeTable(ctx, opts.Out, m, v, opts.Workers); err != nil {
				return err
			}
			logf("%s: written", m.FileName())
			if lastUse[m] == 0 {
				tabs.Drop(m)
			}
		}
	}
	return nil
}

// sidecarName is the name of the file recording the sha256 of m's two
// table files, in the format of sha256sum(1).
func sidecarName(m model.Material) string { return m.FileName() + ".sha256" }

// writeTable writes m's raw and seekable-zstd files and then the sidecar.
func writeTable(ctx context.Context, dir string, m model.Material, values []byte, workers int) error {
	raw := m.FileName()
	rawSum := sha256.Sum256(values)
	if err := writeAtomic(dir, raw, func(w io.Writer) error {
		_, err := w.Write(values)
		return err
	}); err != nil {
		return err
	}
	h := sha256.New()
	if err := writeAtomic(dir, raw+".zst", func(w io.Writer) error {
		return WriteSeekableZstd(ctx, io.MultiWriter(w, h), values, workers)
	}); err != nil {
		return err
	}
	// The frame manifest lets a reader check the table chunk by chunk as
	// it reads instead of hashing it whole on open.
	mf, err := model.ManifestOf(m, values)
	if err != nil {
		return err
	}
	if err := writeAtomic(dir, raw+model.ManifestSuffix, func(w io.Writer) error {
		_, err := w.Write(mf)
		return err
	}); err != nil {
		return err
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
func Verified(dir string, m model.Material) (bool, error) {
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
