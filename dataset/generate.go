package dataset

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/format/chesstb"
	"github.com/tbfs/tbfs/source"
)

// ManifestName is the manifest's file name in an artifact directory.
const ManifestName = "manifest.json"

// DefaultShardRows is how many rows a shard holds unless told otherwise.
const DefaultShardRows = 1000

// Categories are the rule-true categories a row may carry, best first.
var Categories = []string{"win", "cursed-win", "draw", "blessed-loss", "loss"}

// GenerateOptions say which positions a dataset holds.
type GenerateOptions struct {
	// Count is the number of rows; with FENs, at most this many (0: all).
	Count int
	// Seed seeds the random positions.
	Seed uint64
	// Materials are the materials to draw from ("KQKR": the first side's
	// pieces, then the other's, each starting with its king); empty means
	// every material with a WDL table. Either colour may hold either side.
	Materials []string
	// ClockMin and ClockMax bound the half-move clock of random positions.
	ClockMin, ClockMax int
	// Categories, when set, keep only exact rows of these categories.
	Categories []string
	// FENs, when not nil, is a FEN file's text (one per line, blank lines
	// and lines starting with # skipped): its positions are labelled in
	// order instead of random ones, clocks as the FENs give them.
	FENs []byte
	// ShardRows is the number of rows per shard file (0: DefaultShardRows).
	ShardRows int
	// Workers label positions at once (0: GOMAXPROCS); the rows do not
	// depend on it.
	Workers int
}

// maxTriesPerRow bounds the random draws spent on one row: a material with
// few positions of a wanted category must end in an error, not a hang.
const maxTriesPerRow = 10000

// Generate labels the positions opts selects with l and writes the shards
// and the manifest into dir, which must be empty or absent. It returns the
// manifest written.
func Generate(ctx context.Context, l *Labeler, opts GenerateOptions, dir string) (*Manifest, error) {
	if opts.ShardRows == 0 {
		opts.ShardRows = DefaultShardRows
	}
	if err := checkOptions(&opts); err != nil {
		return nil, err
	}
	if err := emptyDir(dir); err != nil {
		return nil, err
	}
	params := Params{Count: opts.Count, Seed: opts.Seed, ClockMin: opts.ClockMin, ClockMax: opts.ClockMax,
		Categories: append([]string{}, opts.Categories...), ShardRows: opts.ShardRows, Materials: []string{}}
	wanted := map[string]bool{}
	for _, c := range opts.Categories {
		wanted[c] = true
	}
	keep := func(r *Row) bool { return len(wanted) == 0 || r.Label != LabelExact || wanted[r.Category] }
	var draw func() (string, bool, error) // the next candidate FEN; false when none is left
	if opts.FENs != nil {
		// The FEN file alone says which positions and clocks: the random
		// selectors are recorded as unused.
		params.Seed, params.ClockMin, params.ClockMax = 0, 0, 0
		sum := sha256.Sum256(opts.FENs)
		params.FENsSHA256 = hex.EncodeToString(sum[:])
		var fens []string
		sc := bufio.NewScanner(bytes.NewReader(opts.FENs))
		for sc.Scan() {
			if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
				fens = append(fens, line)
			}
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("dataset: FEN file: %w", err)
		}
		draw = func() (string, bool, error) {
			if len(fens) == 0 {
				return "", false, nil
			}
			f := fens[0]
			fens = fens[1:]
			return f, true, nil
		}
	} else {
		mats := opts.Materials
		if len(mats) == 0 {
			var err error
			if mats, err = TableMaterials(ctx, l.tables.Sources); err != nil {
				return nil, err
			}
		}
		params.Materials = append(params.Materials, mats...)
		rng := rand.New(rand.NewPCG(opts.Seed, 0x7462667364617461)) // "tbfsdata"
		draw = func() (string, bool, error) {
			fen, err := randomFEN(rng, mats, opts.ClockMin, opts.ClockMax)
			return fen, err == nil, err
		}
	}
	rows, err := collect(ctx, l, opts, draw, keep)
	if err != nil {
		return nil, err
	}
	return write(dir, params, rows, l.version)
}

// collect labels candidates from draw on every worker and keeps, in draw
// order, the first opts.Count (0: all) that keep accepts. Candidates are
// drawn on one goroutine and accepted in order, so the rows do not depend
// on the number of workers or their timing.
func collect(ctx context.Context, l *Labeler, opts GenerateOptions, draw func() (string, bool, error), keep func(*Row) bool) ([]Row, error) {
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	batch := workers * 16
	var rows []Row
	misses := 0
	for opts.Count == 0 || len(rows) < opts.Count {
		var fens []string
		for len(fens) < batch {
			fen, ok, err := draw()
			if err != nil {
				return nil, err
			}
			if !ok {
				break
			}
			fens = append(fens, fen)
		}
		if len(fens) == 0 {
			break
		}
		labelled, err := labelAll(ctx, l, fens, workers)
		if err != nil {
			return nil, err
		}
		for i := range labelled {
			if opts.Count != 0 && len(rows) == opts.Count {
				break
			}
			r := &labelled[i]
			if !keep(r) {
				if misses++; opts.FENs == nil && misses == maxTriesPerRow {
					return nil, fmt.Errorf("dataset: no position of categories %s found in %d draws for row %d", strings.Join(opts.Categories, ","), maxTriesPerRow, len(rows))
				}
				continue
			}
			misses = 0
			r.Row = len(rows)
			rows = append(rows, *r)
		}
	}
	return rows, nil
}

// labelAll labels fens on workers goroutines; the rows are in fens' order.
func labelAll(ctx context.Context, l *Labeler, fens []string, workers int) ([]Row, error) {
	out := make([]Row, len(fens))
	errs := make([]error, len(fens))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, len(fens)) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(fens) || ctx.Err() != nil {
					return
				}
				out[i], errs[i] = l.Label(ctx, fens[i])
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// checkOptions rejects options that cannot give a dataset.
func checkOptions(o *GenerateOptions) error {
	if o.Count < 0 || o.ShardRows < 0 {
		return errors.New("dataset: --count and --shard-rows must not be negative")
	}
	if o.FENs == nil && o.Count == 0 {
		return errors.New("dataset: --count must be positive for random positions")
	}
	if o.ClockMin < 0 || o.ClockMax < o.ClockMin || o.ClockMax > 1000 {
		return fmt.Errorf("dataset: clock range %d-%d: want 0 <= a <= b <= 1000", o.ClockMin, o.ClockMax)
	}
	for _, c := range o.Categories {
		if !slices.Contains(Categories, c) {
			return fmt.Errorf("dataset: category %q: want one of %s", c, strings.Join(Categories, ", "))
		}
	}
	for _, m := range o.Materials {
		if _, _, err := splitMaterial(m); err != nil {
			return err
		}
	}
	return nil
}

// emptyDir makes dir, or checks that it exists and is empty: a leftover
// shard of an earlier run must not sit beside a new manifest.
func emptyDir(dir string) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return err
	}
	if len(ents) > 0 {
		return fmt.Errorf("dataset: output directory %s is not empty", dir)
	}
	return nil
}

// write writes rows in shards and the manifest over them.
func write(dir string, params Params, rows []Row, version string) (*Manifest, error) {
	m := &Manifest{Schema: SchemaVersion, TBFS: version, Params: params, Tables: []TableFile{}, Files: []FileEntry{}, Rows: len(rows)}
	tables := map[string]string{}
	for start := 0; start < len(rows) || start == 0; start += params.ShardRows {
		end := min(start+params.ShardRows, len(rows))
		var buf bytes.Buffer
		for i := start; i < end; i++ {
			r := &rows[i]
			if r.Label == LabelExact {
				m.Exact++
			} else {
				m.Rejected++
			}
			for _, t := range r.Provenance.Tables {
				tables[t.File] = t.SHA256
			}
			b, err := json.Marshal(r)
			if err != nil {
				return nil, err
			}
			buf.Write(b)
			buf.WriteByte('\n')
		}
		name := fmt.Sprintf("rows-%05d.jsonl", start/params.ShardRows)
		if err := os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644); err != nil {
			return nil, err
		}
		sum := sha256.Sum256(buf.Bytes())
		m.Files = append(m.Files, FileEntry{Name: name, Bytes: int64(buf.Len()), SHA256: hex.EncodeToString(sum[:]), Rows: end - start})
		if len(rows) == 0 {
			break
		}
	}
	for _, name := range slices.Sorted(maps.Keys(tables)) {
		m.Tables = append(m.Tables, TableFile{File: name, SHA256: tables[name]})
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, ManifestName), append(b, '\n'), 0o644); err != nil {
		return nil, err
	}
	return m, nil
}

// TableMaterials lists the materials that have a WDL table in srcs, sorted.
func TableMaterials(ctx context.Context, srcs []source.Source) ([]string, error) {
	seen := map[string]bool{}
	for _, src := range srcs {
		ents, err := source.List(ctx, src, "")
		if err != nil {
			return nil, fmt.Errorf("dataset: listing the tables (give --materials): %w", err)
		}
		for _, e := range ents {
			if k, mat, ok := chesstb.ParseTableName(e.Name); ok && k == chesstb.KindWDL {
				seen[mat] = true
			}
		}
	}
	if len(seen) == 0 {
		return nil, errors.New("dataset: the tables hold no WDL table")
	}
	out := make([]string, 0, len(seen))
	for m := range seen {
		out = append(out, m)
	}
	slices.Sort(out)
	return out, nil
}

// pieceTypes maps material letters to piece types.
var pieceTypes = map[byte]chess.PieceType{'P': chess.Pawn, 'N': chess.Knight, 'B': chess.Bishop, 'R': chess.Rook, 'Q': chess.Queen, 'K': chess.King}

// splitMaterial splits "KQKR" (or "KQvKR") into the two sides' pieces.
func splitMaterial(m string) (a, b []chess.PieceType, err error) {
	s := strings.ToUpper(strings.ReplaceAll(m, "v", ""))
	bad := fmt.Errorf("dataset: material %q: want two sides each starting with K, e.g. KQKR or KQvKR", m)
	if len(s) < 2 || s[0] != 'K' {
		return nil, nil, bad
	}
	second := strings.IndexByte(s[1:], 'K') + 1
	if second == 0 || len(s) > 7 {
		return nil, nil, bad
	}
	for i := range len(s) {
		pt, ok := pieceTypes[s[i]]
		if !ok || (pt == chess.King && i != 0 && i != second) {
			return nil, nil, bad
		}
		if i < second {
			a = append(a, pt)
		} else {
			b = append(b, pt)
		}
	}
	return a, b, nil
}

// RandomPosition makes one draw of a position of material m ("KQKR" or
// "KQvKR"): the first side is White or Black with equal chance, each piece
// is placed uniformly on an empty square (pawns off the back ranks), either
// side is to move, the half-move clock is uniform in [lo, hi], no castling
// or en passant. ok is false when the draw gives a board the rules reject
// (the side not to move in check, adjacent kings); the caller draws again.
// The sequence of draws from rng is part of the dataset format: the same
// seed must give the same positions.
func RandomPosition(rng *rand.Rand, m string, lo, hi int) (pos chess.Position, ok bool, err error) {
	a, b, err := splitMaterial(m)
	if err != nil {
		return pos, false, err
	}
	first := chess.Color(rng.IntN(2))
	var board [64]chess.Piece
	for side, pts := range [][]chess.PieceType{a, b} {
		c := first
		if side == 1 {
			c = 1 - first
		}
		for _, pt := range pts {
			placed := false
			for range 1000 {
				sq := rng.IntN(64)
				if board[sq] != chess.NoPiece || (pt == chess.Pawn && (sq < 8 || sq >= 56)) {
					continue
				}
				board[sq] = chess.MakePiece(c, pt)
				placed = true
				break
			}
			if !placed {
				return pos, false, nil
			}
		}
	}
	side := chess.Color(rng.IntN(2))
	pos, err = chess.FromBoard(board, side, 0, chess.NoSquare, lo+rng.IntN(hi-lo+1), 1)
	return pos, err == nil, nil
}

// maxDraws bounds the draws for one random position: tables whose
// materials have almost no legal placement must fail, not hang.
const maxDraws = 100000

// randomFEN draws positions, each of a material chosen uniformly from
// mats, until one is legal.
func randomFEN(rng *rand.Rand, mats []string, lo, hi int) (string, error) {
	for range maxDraws {
		pos, ok, err := RandomPosition(rng, mats[rng.IntN(len(mats))], lo, hi)
		if err != nil {
			return "", err
		}
		if ok {
			return pos.FEN(), nil
		}
	}
	return "", fmt.Errorf("dataset: no legal position of %s in %d draws", strings.Join(mats, ","), maxDraws)
}
