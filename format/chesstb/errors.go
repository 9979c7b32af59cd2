package chesstb

import (
	"errors"
	"fmt"
)

var (
	// ErrNoTable means no source holds the table a probe needs (for the
	// position's own material or for one reached through a capture or a
	// promotion while rebuilding a dropped frame).
	ErrNoTable = errors.New("chesstb: table not found")
	// ErrCorrupt means a table file is malformed: bad magic, a truncated
	// header, offsets past the end, a block that does not decode to its
	// length, a rank outside the table. The error names the file and block.
	ErrCorrupt = errors.New("chesstb: corrupt table")
	// ErrUnsupported means the table uses a form this reader recognises but
	// the format gives no values for (a relaxed distance frame, a loss-only
	// WDL frame), or that RecountWDL was asked for a count it cannot make (a
	// frame that holds bounds or is not stored, opposing-pawn-pair
	// material). It is never answered with a guess.
	ErrUnsupported = errors.New("chesstb: unsupported table form")
	// ErrBadPosition means the position lies outside every table's domain:
	// castling rights, a pawn on a back rank, or too many men.
	ErrBadPosition = errors.New("chesstb: position outside the tables' domain")
	// ErrUnresolved means a dropped frame could not be rebuilt because a
	// child position's value is unknown (a sub-table is missing or the
	// rebuild would recurse too deep). It wraps the cause when there is one.
	ErrUnresolved = errors.New("chesstb: value could not be derived")
	// ErrClosed means the Tablebase was used after Close.
	ErrClosed = errors.New("chesstb: tablebase closed")
)

// FileError locates a failure inside one table file. Block is -1 when the
// failure is not tied to a block.
type FileError struct {
	File  string // object name within its source, e.g. "dtz/KQK.lzdtz"
	Block int64
	Err   error // wraps ErrCorrupt, ErrUnsupported or a transport error
}

// Error formats the failure as "file [block n]: cause".
func (e *FileError) Error() string {
	if e.Block >= 0 {
		return fmt.Sprintf("%s block %d: %v", e.File, e.Block, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.File, e.Err)
}

// Unwrap returns the cause.
func (e *FileError) Unwrap() error { return e.Err }

// corruptf builds the cause of a FileError for malformed data.
func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

var (
	// errInvariant marks an answer that breaks one of the format's
	// invariants (a win at distance 0, an even mate distance for a win,
	// packs that disagree): the tables behind it are damaged.
	errInvariant = errors.New("answer breaks a table invariant")
	// errBlockHash marks a block whose bytes differ from the integrity
	// manifest's hash of them.
	errBlockHash = errors.New("block differs from the integrity manifest")
	// errChecksum marks a file whose bytes do not hash to the XXH64 the
	// file stores at its end.
	errChecksum = errors.New("checksum mismatch")
)
