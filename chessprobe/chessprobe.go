// Package chessprobe answers chess positions from whichever table formats a
// location holds: chesstb tables (WDL, DTZ, DTM, DTC, DTM50) and Syzygy
// tables (WDL, DTZ50″), opened on the same sources. Every front end (the
// CLI, the mount, the lichess API) probes through one Prober, so the
// choice of format is made in one place.
//
// DTM, DTC and DTM50 only chesstb holds. WDL and DTZ come from whichever
// format has the material; where both do, both are read and must agree
// (see Agree), and a disagreement is an error naming both values, never a
// silent choice of one.
package chessprobe

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/format/chesstb"
)

// Format is a set of table formats.
type Format uint8

// The formats.
const (
	Chesstb Format = 1 << iota
	Syzygy
)

// Names lists the formats of the set, chesstb first, as they appear in
// answers ("chesstb", "syzygy").
func (f Format) Names() []string {
	var out []string
	if f&Chesstb != 0 {
		out = append(out, "chesstb")
	}
	if f&Syzygy != 0 {
		out = append(out, "syzygy")
	}
	return out
}

// String joins the names with "+", "" for the empty set.
func (f Format) String() string { return strings.Join(f.Names(), "+") }

// ChesstbTables is what the Prober needs from chesstb tables;
// *chesstb.Tablebase is one.
type ChesstbTables interface {
	Probe(ctx context.Context, pos *chess.Position) (chesstb.Result, error)
	RankMoves(ctx context.Context, pos *chess.Position, opts chesstb.RankOptions) ([]chesstb.RootMove, error)
}

// Result is what the tables say of one position. The embedded
// chesstb.Result carries every metric in chesstb's conventions (its DTZ a
// plain distance with no cursed band), filled from Syzygy where chesstb has
// no table and the Syzygy value converts exactly. Syzygy carries the Syzygy
// answer as the tables give it.
type Result struct {
	chesstb.Result
	// Formats are the formats whose tables answered the position's WDL
	// (and DTZ where they hold it); empty for a position the board alone
	// settles (checkmate, stalemate, bare kings).
	Formats Format
	// Syzygy is the Syzygy tables' answer, nil when none holds the
	// material.
	Syzygy *SyzygyAnswer
}

// SyzygyAnswer is a Syzygy probe as the tables give it.
type SyzygyAnswer struct {
	// WDL is the tables' class for the side to move, -2..2, blind to the
	// half-move clock.
	WDL int
	// DTZ is DTZ50″ in plies, signed for the side to move: beyond ±100
	// for a cursed win or blessed loss, 0 for a draw. HasDTZ is false
	// when no DTZ table holds the material.
	DTZ    int
	HasDTZ bool
	// Precise is false where the value may be rounded, one ply short of
	// the truth: a table that stores moves rather than plies (DTZ n can
	// then mean n or n+1 plies), or a value derived from a child's that may
	// be (syzygy.Tablebase.DTZWithRounding). It is lila-tablebase's
	// precise_dtz but for ties among such children, where lila's
	// shakmaty-syzygy follows the first child in move order.
	Precise bool
}

// Prober answers positions from chesstb and Syzygy tables; either may be
// nil. It is safe for concurrent use when its tables are.
type Prober struct {
	ctb ChesstbTables
	syz SyzygyTables
}

// New returns a prober over the given tables; pass nil for a format that
// is not opened.
func New(ctb ChesstbTables, syz SyzygyTables) *Prober {
	return &Prober{ctb: ctb, syz: syz}
}

// Probe returns every metric the tables answer for pos. As
// chesstb.Tablebase.Probe, it fails when the WDL class itself cannot be
// found (with chesstb.ErrNoTable when no format holds the material); it
// also fails, with ErrDisagree, when the two formats disagree.
func (p *Prober) Probe(ctx context.Context, pos *chess.Position) (Result, error) {
	return p.probe(ctx, pos, false)
}

// ProbeWDL is Probe for a caller that wants the WDL class alone: it reads
// only WDL tables (chesstb's where its tables can, as *chesstb.Tablebase
// can, and Syzygy's) and fails as Probe does for the class, two formats'
// classes that disagree included. The distances are missing.
func (p *Prober) ProbeWDL(ctx context.Context, pos *chess.Position) (Result, error) {
	return p.probe(ctx, pos, true)
}

// chesstbWDL is chesstb tables that can read the class alone.
type chesstbWDL interface {
	ProbeWDL(ctx context.Context, pos *chess.Position) (chesstb.Result, error)
}

// probe is Probe, or with wdlOnly ProbeWDL.
func (p *Prober) probe(ctx context.Context, pos *chess.Position, wdlOnly bool) (Result, error) {
	var res Result
	var ctbErr error
	if p.ctb != nil {
		if w, ok := p.ctb.(chesstbWDL); ok && wdlOnly {
			res.Result, ctbErr = w.ProbeWDL(ctx, pos)
		} else {
			res.Result, ctbErr = p.ctb.Probe(ctx, pos)
		}
		switch {
		case ctbErr == nil && boardDecided(pos, &res.Result):
			// The rules answer it; no table was read.
			return res, nil
		case ctbErr == nil:
			res.Formats = Chesstb
		case !unanswered(ctbErr):
			return res, ctbErr
		}
	} else if r, ok := boardResult(pos); ok {
		res.Result = r
		return res, nil
	}
	if res.Material == "" {
		res.Material = pos.MaterialKey()
	}
	if p.syz == nil {
		if ctbErr != nil {
			return res, ctbErr
		}
		return res, nil
	}
	syz, err := p.probeSyzygy(ctx, pos, wdlOnly)
	notSyzygys := errors.Is(err, chesstb.ErrNoTable) || errors.Is(err, chesstb.ErrBadPosition)
	switch {
	case err != nil && ctbErr != nil && notSyzygys:
		// Neither format holds it: chesstb's reason first, then Syzygy's.
		return res, fmt.Errorf("%w; %v", ctbErr, err)
	case err != nil && ctbErr == nil && notSyzygys:
		return res, nil // chesstb alone
	case err != nil:
		// A Syzygy table that fails to read fails the probe even where
		// chesstb answers: it may be the one that is right.
		return res, err
	}
	if ctbErr != nil {
		// Only Syzygy answers: the chesstb probe left the material; the
		// metrics only chesstb holds are missing for chesstb's reason.
		res.Result = chesstb.Result{Material: res.Material}
		for _, m := range []chesstb.Metric{chesstb.MetricDTM, chesstb.MetricDTC, chesstb.MetricDTM50} {
			res.setUnavailable(m, fmt.Errorf("%w (Syzygy tables hold no %s)", ctbErr, m))
		}
	}
	if err := res.merge(pos, syz); err != nil {
		return res, err
	}
	return res, nil
}

// unanswered reports a chesstb error that leaves the position to Syzygy:
// no table, a table form or derivation chesstb cannot answer from, or a
// position outside chesstb's domain (more men than its tables hold; Syzygy
// refuses castling rights itself).
func unanswered(err error) bool {
	return errors.Is(err, chesstb.ErrNoTable) || errors.Is(err, chesstb.ErrUnresolved) ||
		errors.Is(err, chesstb.ErrUnsupported) || errors.Is(err, chesstb.ErrBadPosition)
}

// probeSyzygy reads the Syzygy WDL and, unless wdlOnly, where a DTZ table
// holds the material, DTZ of a position the board does not settle.
func (p *Prober) probeSyzygy(ctx context.Context, pos *chess.Position, wdlOnly bool) (*SyzygyAnswer, error) {
	wdl, err := p.syz.WDL(ctx, pos)
	if err != nil {
		return nil, syzygyErr(err)
	}
	a := &SyzygyAnswer{WDL: wdl}
	if wdlOnly {
		return a, nil
	}
	dtz, precise, err := p.syz.DTZ(ctx, pos)
	switch {
	case err == nil:
		a.DTZ, a.HasDTZ, a.Precise = dtz, true, precise
	case !errors.Is(syzygyErr(err), chesstb.ErrNoTable):
		return nil, syzygyErr(err)
	}
	if a.HasDTZ && !wdlMatchesDTZ(a.WDL, a.DTZ) {
		return nil, fmt.Errorf("%w: %s: Syzygy WDL %d but DTZ %d", ErrCorrupt, pos.FEN(), a.WDL, a.DTZ)
	}
	return a, nil
}

// wdlMatchesDTZ reports whether a Syzygy WDL class and DTZ50″ describe the
// same class: the sign, and the cursed band exactly for ±1.
func wdlMatchesDTZ(wdl, dtz int) bool {
	switch wdl {
	case 2:
		return dtz > 0 && dtz <= 100
	case 1:
		return dtz > 100
	case 0:
		return dtz == 0
	case -1:
		return dtz < -100
	case -2:
		return dtz < 0 && dtz >= -100
	}
	return false
}

// merge adds a Syzygy answer to res: checked against chesstb's values where
// they are there, else filling them.
func (res *Result) merge(pos *chess.Position, syz *SyzygyAnswer) error {
	res.Syzygy = syz
	res.Formats |= Syzygy
	if res.HasWDL {
		if err := Agree(&res.Result, syz); err != nil {
			return fmt.Errorf("%s: %w", pos.FEN(), err)
		}
	} else {
		res.WDL, res.HasWDL = syz.WDL, true
		delete(res.Unavailable, chesstb.MetricWDL)
	}
	if res.HasDTZ || !syz.HasDTZ {
		return nil
	}
	if d, ok := PlainDTZ(syz); ok {
		res.DTZ, res.HasDTZ = d, true
		delete(res.Unavailable, chesstb.MetricDTZ)
	} else {
		res.setUnavailable(chesstb.MetricDTZ, fmt.Errorf("%w: Syzygy DTZ %d does not give the plain distance exactly (%s)", chesstb.ErrUnresolved, syz.DTZ, inexact(syz)))
	}
	return nil
}

func inexact(syz *SyzygyAnswer) string {
	if !syz.Precise {
		return "the table stores it rounded, n meaning n or n+1 plies"
	}
	return "in the cursed band a zeroing move is n or n-100 plies away"
}

func (res *Result) setUnavailable(m chesstb.Metric, err error) {
	if res.Unavailable == nil {
		res.Unavailable = map[chesstb.Metric]error{}
	}
	res.Unavailable[m] = err
}

// boardDecided reports whether a chesstb answer came from the board alone:
// checkmate, stalemate or bare kings.
func boardDecided(pos *chess.Position, r *chesstb.Result) bool {
	return r.Checkmate || r.Stalemate || bareKings(pos)
}

func bareKings(pos *chess.Position) bool { return pos.Occupied().Count() == 2 }

// boardResult is the answer the rules give without any table, as chesstb
// gives it: a checkmated side has lost at distance 0, a stalemate and bare
// kings are draws.
func boardResult(pos *chess.Position) (chesstb.Result, bool) {
	r := chesstb.Result{Material: pos.MaterialKey()}
	stuck := pos.CountLegalMoves() == 0
	switch {
	case stuck && pos.InCheck():
		r.Checkmate, r.WDL = true, int(chesstb.Loss)
		r.DTM50Class, r.DTCClass = chesstb.Loss, chesstb.Loss
	case stuck:
		r.Stalemate = true
	case bareKings(pos):
	default:
		return r, false
	}
	r.HasWDL, r.HasDTZ, r.HasDTM, r.HasDTM50, r.HasDTC = true, true, true, true, true
	return r, true
}
