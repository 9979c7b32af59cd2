// Package ftp is a source for tables on FTP mirrors, shipped as the plugin
// binary tbfs-source-ftp (cmd/tbfs-source-ftp), which serves ftp:// URLs.
//
// A URL ftp://[user[:password]@]host[:port]/dir serves the files under dir;
// without a user the login is anonymous. Sizes come from SIZE (with MLST,
// or CWD where MLST is missing, to tell files from directories), ranged
// reads from REST followed by RETR: the transfer is cut off once the range
// has arrived, and the read returns then, while the server's answer to the
// cut is awaited in the background before the connection is used again.
// Listings come from a walk of the directory tree. At most DefaultMaxConns
// control connections are open, and all are kept for reuse.
package ftp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"net/url"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	jftp "github.com/jlaffaye/ftp"

	"github.com/tbfs/tbfs/source"
)

// Scheme is the URL scheme this transport serves.
const Scheme = "ftp"

// Defaults of a Source.
const (
	// DefaultTimeout bounds one FTP operation: a dial with its login, a
	// SIZE, or one ranged read.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxConns bounds the control connections open at once. Public
	// mirrors often refuse more than a few connections per client.
	DefaultMaxConns = 4
	// shutTimeout bounds the wait for the server's answer after a
	// transfer; a server that does not answer loses the connection.
	shutTimeout = 5 * time.Second
	// maxIdle is how many idle connections are kept for reuse: all of
	// them, so a steady load never redials.
	maxIdle = DefaultMaxConns
)

// Source serves the files of one directory of an FTP server.
type Source struct {
	addr, user, pass string
	root             string // absolute directory on the server, no trailing slash
	red              string // the URL without credentials

	timeout time.Duration
	slots   chan struct{} // one per open connection

	mu     sync.Mutex
	idle   []*conn
	closed bool
	wg     sync.WaitGroup
}

var (
	_ source.Source = (*Source)(nil)
	_ source.Lister = (*Source)(nil)
)

// Open opens the FTP source u names; it has the signature of a
// source.Opener. It connects once to check the address and the login.
func Open(ctx context.Context, u *url.URL) (source.Source, error) {
	red := source.Redact(u)
	fail := func(err error) (source.Source, error) {
		return nil, &source.Error{Op: "open source", URL: red, Err: err}
	}
	s, err := newSource(u)
	if err != nil {
		return fail(err)
	}
	c, err := s.get(ctx, true)
	if err != nil {
		return fail(err)
	}
	s.put(c, nil)
	return s, nil
}

// newSource checks an ftp URL and makes the Source for it, not connected.
func newSource(u *url.URL) (*Source, error) {
	if u.Scheme != Scheme {
		return nil, source.Invalid("scheme %q is not ftp", u.Scheme)
	}
	if u.Host == "" || u.Hostname() == "" {
		return nil, source.Invalid("ftp URL has no host")
	}
	if u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return nil, source.Invalid("ftp URL takes no query, fragment or opaque part")
	}
	root := path.Clean("/" + u.Path)
	if strings.ContainsFunc(root, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return nil, source.Invalid("ftp URL path has a control character")
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "21")
	}
	s := &Source{
		addr:    addr,
		user:    "anonymous",
		pass:    "anonymous",
		root:    strings.TrimSuffix(root, "/"),
		red:     source.Redact(u),
		timeout: DefaultTimeout,
		slots:   make(chan struct{}, DefaultMaxConns),
	}
	if u.User != nil {
		s.user = u.User.Username()
		s.pass, _ = u.User.Password()
		if strings.ContainsAny(s.user+s.pass, "\r\n") {
			return nil, source.Invalid("ftp URL credentials contain a line break")
		}
	}
	return s, nil
}

// conn is one logged-in control connection.
type conn struct {
	sc   *jftp.ServerConn
	ctrl net.Conn // the control connection's socket, for deadlines
	used bool     // came from the idle pool
}

// get takes an idle connection (unless fresh is set) or dials a new one,
// waiting for a free slot.
func (s *Source) get(ctx context.Context, fresh bool) (*conn, error) {
	select {
	case s.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		<-s.slots
		return nil, source.ErrClosed
	}
	s.wg.Add(1)
	if n := len(s.idle); n > 0 && !fresh {
		c := s.idle[n-1]
		s.idle = s.idle[:n-1]
		s.mu.Unlock()
		c.used = true
		return c, nil
	}
	s.mu.Unlock()
	c, err := s.dial(ctx)
	if err != nil {
		s.wg.Done()
		<-s.slots
		return nil, err
	}
	return c, nil
}

// put returns a connection after use: to the idle pool when the operation
// left it in a known state, closed otherwise.
func (s *Source) put(c *conn, opErr error) {
	defer func() { <-s.slots; s.wg.Done() }()
	var tp *textproto.Error
	reusable := opErr == nil || errors.As(opErr, &tp) || errors.Is(opErr, source.ErrNotFound)
	if reusable {
		reusable = c.ctrl.SetDeadline(time.Time{}) == nil
	}
	s.mu.Lock()
	if reusable && !s.closed && len(s.idle) < maxIdle {
		s.idle = append(s.idle, c)
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	c.quit()
}

func (c *conn) quit() {
	_ = c.ctrl.SetDeadline(time.Now().Add(time.Second))
	_ = c.sc.Quit()
}

// dial opens and logs in a new control connection.
func (s *Source) dial(ctx context.Context) (*conn, error) {
	c := &conn{}
	var d net.Dialer
	first := true
	dialFn := func(network, address string) (net.Conn, error) {
		// The control connection is dialled under the caller's context;
		// data connections, dialled later by the library, under their own
		// deadline.
		base := context.Background()
		if first {
			base = ctx
		}
		dctx, cancel := context.WithTimeout(base, s.timeout)
		defer cancel()
		nc, err := d.DialContext(dctx, network, address)
		if err == nil && first {
			c.ctrl, first = nc, false
			_ = nc.SetDeadline(time.Now().Add(s.timeout))
		}
		return nc, err
	}
	sc, err := jftp.Dial(s.addr, jftp.DialWithDialFunc(dialFn), jftp.DialWithShutTimeout(shutTimeout))
	if err != nil {
		return nil, classify(err)
	}
	c.sc = sc
	stop := context.AfterFunc(ctx, func() { _ = c.ctrl.SetDeadline(time.Now()) })
	err = sc.Login(s.user, s.pass)
	stop()
	if err != nil {
		_ = c.ctrl.Close()
		return nil, classify(err)
	}
	return c, nil
}

// do runs op on a pooled connection under the operation deadline and ctx.
// An operation that failed on a reused idle connection because that
// connection had gone stale is tried once more on a fresh one; the other
// idle connections are dropped too, since a server that closes idle
// clients has usually closed them all.
func (s *Source) do(ctx context.Context, op func(c *conn) error) error {
	return s.doThen(ctx, func(c *conn) (func() error, error) { return nil, op(c) })
}

// doThen is do for an operation that has its result before the connection
// is ready for the next one: the returned finish (when op succeeded) runs
// in the background, and the connection goes back to the pool when it is
// done. A ranged read uses it to return its bytes without waiting for the
// server's answer to the transfer it cut short.
func (s *Source) doThen(ctx context.Context, op func(c *conn) (finish func() error, err error)) error {
	for attempt := 0; ; attempt++ {
		c, err := s.get(ctx, attempt > 0)
		if err != nil {
			return err
		}
		_ = c.ctrl.SetDeadline(time.Now().Add(s.timeout))
		stop := context.AfterFunc(ctx, func() { _ = c.ctrl.SetDeadline(time.Now()) })
		finish, err := op(c)
		stop()
		if err != nil && ctx.Err() != nil {
			s.put(c, ctx.Err())
			return ctx.Err()
		}
		if err == nil && finish != nil {
			go func() { s.put(c, finish()) }()
			return nil
		}
		stale := c.used && isConnFailure(err)
		s.put(c, err)
		if stale && attempt == 0 {
			s.dropIdle()
			continue
		}
		return err
	}
}

// dropIdle closes every idle connection.
func (s *Source) dropIdle() {
	s.mu.Lock()
	idle := s.idle
	s.idle = nil
	s.mu.Unlock()
	for _, c := range idle {
		c.quit()
	}
}

// isConnFailure reports whether err broke the connection itself rather
// than being an answer of the server or a judgement of ours.
func isConnFailure(err error) bool {
	if err == nil {
		return false
	}
	var tp *textproto.Error
	if errors.As(err, &tp) {
		return false
	}
	for _, kind := range []error{source.ErrNotFound, source.ErrInvalid, source.ErrPermanent, source.ErrTransient, source.ErrClosed} {
		if errors.Is(err, kind) {
			return false
		}
	}
	return true
}

// classify maps FTP and network failures onto the source error kinds.
func classify(err error) error {
	if err == nil {
		return nil
	}
	var tp *textproto.Error
	if errors.As(err, &tp) {
		switch {
		case tp.Code == 550 || tp.Code == 551 || tp.Code == 450:
			// File unavailable: missing, or not a plain file.
			return fmt.Errorf("%w: %w", source.ErrNotFound, err)
		case tp.Code >= 400 && tp.Code < 500:
			return source.Transient(err)
		case tp.Code == 530 || tp.Code == 532:
			return source.Permanent(fmt.Errorf("login refused: %w", err))
		}
		return source.Permanent(err)
	}
	for _, kind := range []error{source.ErrNotFound, source.ErrInvalid, source.ErrPermanent, source.ErrTransient, source.ErrClosed, context.Canceled} {
		if errors.Is(err, kind) {
			return err
		}
	}
	return source.Transient(err)
}

func (s *Source) path(name string) string { return s.root + "/" + name }

// Open returns the named file, with its size from SIZE.
func (s *Source) Open(ctx context.Context, name string) (source.Object, error) {
	fail := func(err error) (source.Object, error) {
		return nil, &source.Error{Op: "open", Name: name, URL: s.red, Err: err}
	}
	if err := source.CheckName(name); err != nil {
		return fail(err)
	}
	var size int64
	err := s.do(ctx, func(c *conn) error {
		var err error
		size, err = c.stat(s.path(name))
		return err
	})
	if err != nil {
		return fail(classify(err))
	}
	if size < 0 {
		return fail(source.Permanent(fmt.Errorf("server reported size %d", size)))
	}
	return &object{s: s, name: name, size: size}, nil
}

// List walks the directory tree under the prefix's directory and returns
// the files whose names start with prefix.
func (s *Source) List(ctx context.Context, prefix string) ([]source.Entry, error) {
	fail := func(err error) ([]source.Entry, error) {
		return nil, &source.Error{Op: "list", Name: prefix, URL: s.red, Err: err}
	}
	if err := source.CheckPrefix(prefix); err != nil {
		return fail(err)
	}
	start := s.root
	if start == "" {
		start = "/"
	}
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		start = s.path(prefix[:i])
	}
	var out []source.Entry
	err := s.do(ctx, func(c *conn) error {
		out = out[:0]
		// A listing of a file path lists that file; only directories are
		// walked, and a path that is not one holds nothing.
		if err := c.sc.ChangeDir(start); err != nil {
			var tp *textproto.Error
			if errors.As(err, &tp) && tp.Code >= 400 && tp.Code < 600 && tp.Code != 421 {
				return errNotFile
			}
			return err
		}
		w := c.sc.Walk(start)
		for w.Next() {
			e := w.Stat()
			if e.Type != jftp.EntryTypeFile {
				continue
			}
			rel, ok := strings.CutPrefix(w.Path(), s.root+"/")
			if !ok || source.CheckName(rel) != nil || !strings.HasPrefix(rel, prefix) {
				continue
			}
			out = append(out, source.Entry{Name: rel, Size: int64(e.Size)})
		}
		return w.Err()
	})
	if err != nil {
		err = classify(err)
		if errors.Is(err, source.ErrNotFound) {
			// The prefix names a directory that does not exist: nothing
			// is under it.
			return []source.Entry{}, nil
		}
		return fail(err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// errNotFile is returned for a path that exists but is not a plain file.
var errNotFile = fmt.Errorf("not a plain file: %w", source.ErrNotFound)

// stat returns the size of the plain file at p. Servers answer SIZE for a
// directory too, so the type is checked: with MLST where the server has it,
// else by whether CWD into the path succeeds. Paths are always absolute, so
// the working directory left behind does not matter.
func (c *conn) stat(p string) (int64, error) {
	e, err := c.sc.GetEntry(p)
	var tp *textproto.Error
	switch {
	case err == nil:
		if e.Type != jftp.EntryTypeFile {
			return 0, errNotFile
		}
		size, err := c.sc.FileSize(p)
		if err != nil {
			return 0, err
		}
		return size, nil
	case errors.As(err, &tp) && tp.Code == jftp.StatusNotImplemented,
		errors.As(err, &tp) && tp.Code == jftp.StatusBadCommand:
	default:
		return 0, err
	}
	size, err := c.sc.FileSize(p)
	if err != nil {
		return 0, err
	}
	if c.sc.ChangeDir(p) == nil {
		return 0, errNotFile
	}
	return size, nil
}

// Close closes the idle connections and makes later use fail with
// ErrClosed; operations in flight finish first.
func (s *Source) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	idle := s.idle
	s.idle = nil
	s.mu.Unlock()
	s.wg.Wait()
	for _, c := range idle {
		c.quit()
	}
	return nil
}

// object is one file of an FTP source.
type object struct {
	s    *Source
	name string
	size int64

	mu     sync.Mutex
	closed bool
}

func (o *object) Size() int64 { return o.size }

// ReadAt reads the range with REST+RETR and stops the transfer once the
// range has arrived.
func (o *object) ReadAt(ctx context.Context, p []byte, off int64, _ source.Hint) (int, error) {
	fail := func(n int, err error) (int, error) {
		return n, &source.Error{Op: "read", Name: o.name, URL: o.s.red, Err: err}
	}
	o.mu.Lock()
	closed := o.closed
	o.mu.Unlock()
	if closed {
		return fail(0, source.ErrClosed)
	}
	if err := source.CheckRange(off, len(p), o.size); err != nil {
		return fail(0, err)
	}
	want := len(p)
	if rest := o.size - off; int64(want) > rest {
		want = int(rest)
	}
	if want == 0 {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	var n int
	err := o.s.doThen(ctx, func(c *conn) (func() error, error) {
		n = 0
		resp, err := c.sc.RetrFrom(o.s.path(o.name), uint64(off))
		if err != nil {
			return nil, err
		}
		_ = resp.SetDeadline(time.Now().Add(o.s.timeout))
		stop := context.AfterFunc(ctx, func() { _ = resp.SetDeadline(time.Now()) })
		n, err = io.ReadFull(resp, p[:want])
		stop()
		if err != nil {
			_ = resp.Close()
			if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
				// The data connection closing is FTP's only end-of-file
				// signal, so a transfer cut short looks the same as a
				// file that shrank; like the HTTP transport's short body,
				// it is worth one more try, which the retry layer bounds.
				return nil, source.Transient(fmt.Errorf("transfer ended at %d, inside the file's size %d", off+int64(n), o.size))
			}
			return nil, err
		}
		// The range is here. Cutting the transfer short makes the server
		// answer on the control connection; that answer is awaited in
		// the background before the connection is reused.
		return func() error {
			cerr := resp.Close()
			var tp *textproto.Error
			if cerr != nil && errors.As(cerr, &tp) {
				// A 4xx/5xx answer to the cut is expected and leaves the
				// connection usable.
				return nil
			}
			return cerr
		}, nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return fail(0, ctx.Err())
		}
		return fail(0, classify(err))
	}
	if want < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Close marks the object closed; it holds no connection of its own.
func (o *object) Close() error {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
	return nil
}
