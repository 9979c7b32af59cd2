package dataset

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/tbfs/tbfs/battery"
	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/chessprobe"
	"github.com/tbfs/tbfs/format/chesstb"
	"github.com/tbfs/tbfs/render"
	"github.com/tbfs/tbfs/source"
)

// Tables are opened tables with the sources under them, in search order;
// the sources are read to hash the table files a row names.
type Tables struct {
	TB      *chesstb.Tablebase
	Sources []source.Source
}

// kinds are the table kinds a material's provenance lists.
var kinds = []chesstb.Kind{chesstb.KindWDL, chesstb.KindDTZ, chesstb.KindDTC, chesstb.KindDTM, chesstb.KindDTM50}

// Labeler labels positions from one set of tables. It caches table file
// hashes, so a file is read in full once per run. Safe for concurrent use.
type Labeler struct {
	tables  Tables
	version string

	mu     sync.Mutex
	byMat  map[string][]TableFile // material -> its table files
	hashes map[string]string      // file name -> SHA-256
}

// NewLabeler returns a labeler over t that stamps rows with version (the
// tbfs build that made them).
func NewLabeler(t Tables, version string) *Labeler {
	return &Labeler{tables: t, version: version, byMat: map[string][]TableFile{}, hashes: map[string]string{}}
}

// Label labels the position fen. A position outside the tables' domain
// gives a rejected row; err is only for failures that make any label
// untrustworthy (a transport error, a corrupt table, a cancelled context),
// which must stop the run rather than become a row.
func (l *Labeler) Label(ctx context.Context, fen string) (Row, error) {
	row := Row{FEN: fen, Provenance: Provenance{TBFS: l.version, Tables: []TableFile{}}}
	reject := func(arbiter, reason string) (Row, error) {
		row.Label, row.Reason, row.Provenance.Arbiter = LabelRejected, reason, arbiter
		row.Category, row.Values, row.KeepingMoves, row.BestMoves = "", nil, nil, nil
		row.Provenance.Tables = []TableFile{}
		return row, nil
	}
	pos, err := chess.ParseFEN(fen)
	if err != nil {
		return reject(ArbiterRules, err.Error())
	}
	row.FEN = pos.FEN()
	row.Clock = pos.HalfmoveClock()
	if pos.Castling() != 0 {
		return reject(ArbiterRules, "castling rights "+pos.Castling().String()+": the tables hold no castling")
	}
	res, err := l.tables.TB.Probe(ctx, &pos)
	row.Material = res.Material
	if err != nil {
		if domainError(err) {
			return reject(ArbiterTable, err.Error())
		}
		return Row{}, fmt.Errorf("dataset: %s: %w", fen, err)
	}
	probed := chessprobe.Result{Result: res}
	v, _ := render.FromMoveResult(&probed, row.Clock, -1)
	cat := render.CategoryAt(&probed, row.Clock, -1)
	if cat == "" {
		return reject(ArbiterTable, "no table metric prices the half-move clock")
	}
	row.Label, row.Category = LabelExact, string(cat)
	row.Values = &Values{WDL: v.WDL, DTZ: v.DTZ, DTM: v.DTM, DTM50: v.DTM50, Checkmate: v.Checkmate, Stalemate: v.Stalemate}
	if v.DTC != nil {
		row.Values.DTC = &DTC{Pushes: v.DTC.Pushes, Plies: v.DTC.Plies}
	}
	outcomes, err := battery.MoveOutcomes(ctx, l.tables.TB, &pos)
	if err != nil {
		if domainError(err) || errors.Is(err, chesstb.ErrUnresolved) {
			return reject(ArbiterTable, "a move's result is not in the tables: "+err.Error())
		}
		return Row{}, fmt.Errorf("dataset: %s: %w", fen, err)
	}
	row.KeepingMoves, _ = battery.KeepingMoves(outcomes)
	ranked, err := l.tables.TB.RankMoves(ctx, &pos, chesstb.RankOptions{Ranker: chesstb.RankDTZ, Rule50: true})
	if err != nil {
		if domainError(err) || errors.Is(err, chesstb.ErrUnresolved) {
			return reject(ArbiterTable, "the moves cannot be ranked: "+err.Error())
		}
		return Row{}, fmt.Errorf("dataset: %s: %w", fen, err)
	}
	mats := []string{}
	for _, rm := range ranked {
		if rm.Best {
			row.BestMoves = append(row.BestMoves, rm.Move.UCI())
		}
		mats = append(mats, rm.After.Material)
	}
	slices.Sort(row.BestMoves)
	if res.Checkmate || res.Stalemate || bareKings(&pos) {
		// The board settles the root; the children (if any) are bare kings
		// or are read from tables below.
		row.Provenance.Arbiter = ArbiterRules
	} else {
		row.Provenance.Arbiter = ArbiterTable
		mats = append(mats, res.Material)
	}
	files, err := l.provenance(ctx, mats)
	if err != nil {
		return Row{}, fmt.Errorf("dataset: %s: %w", fen, err)
	}
	row.Provenance.Tables = files
	if len(files) > 0 {
		row.Provenance.Arbiter = ArbiterTable
	}
	return row, nil
}

// domainError reports whether err says the position lies outside the
// tables' domain, as opposed to a failure reading them.
func domainError(err error) bool {
	return errors.Is(err, chesstb.ErrNoTable) || errors.Is(err, chesstb.ErrBadPosition) || errors.Is(err, chesstb.ErrUnsupported)
}

// bareKings reports whether only the two kings are on the board.
func bareKings(pos *chess.Position) bool {
	return pos.Occupied()&^(pos.Pieces(chess.White, chess.King)|pos.Pieces(chess.Black, chess.King)) == 0
}

// provenance lists the table files of the materials mats, sorted by name.
func (l *Labeler) provenance(ctx context.Context, mats []string) ([]TableFile, error) {
	seen := map[string]bool{}
	out := []TableFile{}
	for _, m := range mats {
		if m == "" || m == "KK" || seen[m] {
			continue
		}
		seen[m] = true
		fs, err := l.materialFiles(ctx, m)
		if err != nil {
			return nil, err
		}
		out = append(out, fs...)
	}
	slices.SortFunc(out, func(a, b TableFile) int {
		if a.File < b.File {
			return -1
		} else if a.File > b.File {
			return 1
		}
		return 0
	})
	return slices.CompactFunc(out, func(a, b TableFile) bool { return a.File == b.File }), nil
}

// materialFiles returns the table files the tables hold for material m,
// hashing each on first use.
func (l *Labeler) materialFiles(ctx context.Context, m string) ([]TableFile, error) {
	l.mu.Lock()
	fs, ok := l.byMat[m]
	l.mu.Unlock()
	if ok {
		return fs, nil
	}
	fs = []TableFile{}
	for _, k := range kinds {
		info, err := l.tables.TB.TableInfo(ctx, k, m)
		if errors.Is(err, chesstb.ErrNoTable) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("table %s %s: %w", k, m, err)
		}
		sum, err := l.hash(ctx, info.File)
		if err != nil {
			return nil, err
		}
		fs = append(fs, TableFile{File: info.File, SHA256: sum})
	}
	l.mu.Lock()
	l.byMat[m] = fs
	l.mu.Unlock()
	return fs, nil
}

// hash returns the SHA-256 of the table file name as the tables read it:
// from the first source that holds the name (the tablebase's search order).
func (l *Labeler) hash(ctx context.Context, name string) (string, error) {
	l.mu.Lock()
	sum, ok := l.hashes[name]
	l.mu.Unlock()
	if ok {
		return sum, nil
	}
	sum, err := HashTable(ctx, l.tables.Sources, name)
	if err != nil {
		return "", err
	}
	l.mu.Lock()
	l.hashes[name] = sum
	l.mu.Unlock()
	return sum, nil
}

// HashTable returns the SHA-256 of the object name in the first of srcs
// that holds it.
func HashTable(ctx context.Context, srcs []source.Source, name string) (string, error) {
	for _, src := range srcs {
		obj, err := src.Open(ctx, name)
		if errors.Is(err, source.ErrNotFound) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("table file %s: %w", name, err)
		}
		defer obj.Close()
		h := sha256.New()
		buf := make([]byte, 1<<20)
		for off := int64(0); off < obj.Size(); {
			n, err := obj.ReadAt(ctx, buf[:min(int64(len(buf)), obj.Size()-off)], off, source.HintData)
			h.Write(buf[:n])
			off += int64(n)
			if err != nil && !(errors.Is(err, io.EOF) && off == obj.Size()) {
				return "", fmt.Errorf("table file %s: %w", name, err)
			}
			if n == 0 && err == nil {
				return "", fmt.Errorf("table file %s: short read at %d", name, off)
			}
		}
		return hex.EncodeToString(h.Sum(nil)), nil
	}
	return "", fmt.Errorf("table file %s: %w", name, source.ErrNotFound)
}
