package syzygy

import (
	"errors"
	"fmt"
)

var (
	// ErrNoTable means no source holds a table the probe needs, for the
	// position's own material or for one a capture or promotion reaches.
	ErrNoTable = errors.New("syzygy: table not found")
	// ErrCorrupt means a table file is malformed: a bad magic number, a
	// header that does not fit the material, an index or block that points
	// outside the file, a block that does not decode, or a checksum that
	// does not match. The error names the file.
	ErrCorrupt = errors.New("syzygy: corrupt table")
	// ErrBadPosition means the position lies outside the tables' domain:
	// castling rights, or more men than any table holds.
	ErrBadPosition = errors.New("syzygy: position outside the tables' domain")
	// ErrClosed means the Tablebase was used after Close.
	ErrClosed = errors.New("syzygy: tablebase closed")
)

// FileError locates a failure in one table file.
type FileError struct {
	File string // object name within its source, e.g. "KQvK.rtbw"
	Err  error  // wraps ErrCorrupt or a transport error
}

// Error formats the failure as "file: cause".
func (e *FileError) Error() string { return e.File + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *FileError) Unwrap() error { return e.Err }

// corruptf builds an error matching ErrCorrupt.
func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}
