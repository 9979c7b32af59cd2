package gat

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"time"
)

// ErrTimeout is matched by the error of a read or write that missed its
// deadline.
var ErrTimeout = errors.New("gat: timed out")

// ErrClosed is matched by the error of a read from a peer that closed the
// connection.
var ErrClosed = errors.New("gat: connection closed by peer")

// Conn exchanges protocol lines over a network connection. Every read and
// write has a deadline, so a silent peer cannot hang the caller, and a
// cancelled context interrupts a read in progress.
type Conn struct {
	c net.Conn
	r *bufio.Reader
	// Timeout bounds each ReadLine and WriteLine.
	Timeout time.Duration
}

// DefaultTimeout is the deadline NewConn sets when given none.
const DefaultTimeout = 60 * time.Second

// NewConn wraps c. A timeout of 0 means DefaultTimeout.
func NewConn(c net.Conn, timeout time.Duration) *Conn {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &Conn{c: c, r: bufio.NewReaderSize(c, 512), Timeout: timeout}
}

// Close closes the connection.
func (c *Conn) Close() error { return c.c.Close() }

// RemoteAddr returns the peer's address.
func (c *Conn) RemoteAddr() net.Addr { return c.c.RemoteAddr() }

// ReadLine reads one line, without its line end. A line longer than
// MaxLine, end of stream, a missed deadline or ctx's end give an error
// (matching ErrSyntax, ErrClosed, ErrTimeout or ctx.Err()).
func (c *Conn) ReadLine(ctx context.Context) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	c.c.SetReadDeadline(time.Now().Add(c.Timeout))
	stop := context.AfterFunc(ctx, func() { c.c.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()
	var line []byte
	for {
		frag, err := c.r.ReadSlice('\n')
		line = append(line, frag...)
		if len(line) > MaxLine+2 {
			return "", fmt.Errorf("%w line: longer than %d bytes", ErrSyntax, MaxLine)
		}
		if err == nil {
			return string(line), nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", c.wrap("read", err, len(line))
	}
}

// WriteLine sends s followed by CRLF.
func (c *Conn) WriteLine(ctx context.Context, s string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.c.SetWriteDeadline(time.Now().Add(c.Timeout))
	_, err := io.WriteString(c.c, s+"\r\n")
	if err != nil {
		return c.wrap("write", err, 0)
	}
	return nil
}

// wrap names what went wrong with the connection.
func (c *Conn) wrap(op string, err error, partial int) error {
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Errorf("%w: %s from %s: nothing for %v", ErrTimeout, op, c.c.RemoteAddr(), c.Timeout)
	case errors.Is(err, io.EOF) && partial > 0:
		return fmt.Errorf("%w: %s from %s: connection closed in the middle of a line", ErrClosed, op, c.c.RemoteAddr())
	case errors.Is(err, io.EOF), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return fmt.Errorf("%w: %s from %s", ErrClosed, op, c.c.RemoteAddr())
	}
	return fmt.Errorf("gat: %s %s: %w", op, c.c.RemoteAddr(), err)
}
