package cli

import (
	"io"
	"log/slog"
)

// NewLogger is the one log format of both binaries: log/slog's text
// handler (key=value, a time on every line) on w, at level and above.
// Program output (answers, "listening on", "mounted on") is not logged:
// it goes to standard output as before.
func NewLogger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}
