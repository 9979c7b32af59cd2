package chesstb

import "fmt"

// Metric names one of the answers a probe can give.
type Metric uint8

// The metrics. DTC and DTM50 are answered by the pack readers.
const (
	MetricWDL Metric = iota
	MetricDTZ
	MetricDTM
	MetricDTC
	MetricDTM50
)

// String returns the metric's name.
func (m Metric) String() string {
	switch m {
	case MetricWDL:
		return "WDL"
	case MetricDTZ:
		return "DTZ"
	case MetricDTM:
		return "DTM"
	case MetricDTC:
		return "DTC"
	case MetricDTM50:
		return "DTM50"
	}
	return fmt.Sprintf("Metric(%d)", uint8(m))
}

// Category is the five-way WDL class of a position for the side to move.
type Category int

// The classes, valued like syzygy's WDL: +2 win, +1 win only past the
// 50-move limit, 0 draw, -1 loss the opponent can only force past the
// limit, -2 loss.
const (
	Loss        Category = -2
	BlessedLoss Category = -1
	Draw        Category = 0
	CursedWin   Category = 1
	Win         Category = 2
)

// String returns the class the way the reference prober prints it.
func (c Category) String() string {
	switch c {
	case Loss:
		return "LOSE"
	case BlessedLoss:
		return "BLESSED_LOSS"
	case Draw:
		return "DRAW"
	case CursedWin:
		return "CURSED_WIN"
	case Win:
		return "WIN"
	}
	return fmt.Sprintf("Category(%d)", int(c))
}

// Result is everything one probe learned about a position. Distances are
// signed from the side to move's point of view: positive when it wins,
// negative when it loses, 0 for a draw and for a side already checkmated.
type Result struct {
	// Material is the canonical material name of the table that answered
	// (stronger side first, e.g. "KQK" for a black queen too).
	Material string
	// Checkmate and Stalemate describe the board itself; both are answered
	// without reading a table.
	Checkmate, Stalemate bool

	WDL    int // -2..+2, see Category
	HasWDL bool
	// DTZ is the number of plies to the next zeroing move (capture, pawn
	// move or the mate itself) on the line the table stores, a plain
	// distance in every class.
	DTZ    int
	HasDTZ bool
	// DTM is the number of plies to mate, ignoring the 50-move rule.
	DTM    int
	HasDTM bool

	// DTM50 is the number of plies to mate under the 50-move rule with the
	// count starting at the position's half-move clock: 0 where the clock
	// has taken the win (a draw), and for cursed and blessed positions.
	DTM50    int
	HasDTM50 bool
	// DTC is the distance to conversion at the position's half-move clock
	// (pushes owed, signed plies to the next zeroing move); zero where no
	// push budget fits the clock.
	DTC    DTC
	HasDTC bool
	// DTM50Class and DTCClass are the verdicts those two metrics give at
	// the clock: Win, Loss or Draw (a side already checkmated is a Loss at
	// distance 0).
	DTM50Class, DTCClass Category

	// Unavailable says why a metric is missing: ErrNoTable when no source
	// holds its table, ErrUnsupported for a table form without values,
	// ErrUnresolved when a dropped frame could not be rebuilt.
	Unavailable map[Metric]error
}

// Category returns the WDL class.
func (r *Result) Category() Category { return Category(r.WDL) }

func (r *Result) unavailable(m Metric, err error) {
	if r.Unavailable == nil {
		r.Unavailable = make(map[Metric]error)
	}
	r.Unavailable[m] = err
}
