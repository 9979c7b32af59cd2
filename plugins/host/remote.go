package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/tbfs/tbfs/plugins"
	pluginpb "github.com/tbfs/tbfs/plugins/proto"
	"github.com/tbfs/tbfs/source"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// conn is what a remote source needs from the plugin process that serves
// it. It is an interface so the contract can be tested in-process.
type conn interface {
	// client returns a client for the running plugin process, starting
	// it if needed, with the generation of that process: handles from
	// another generation are stale.
	client(ctx context.Context) (*plugins.Client, uint64, error)
	// running is client without starting a process: ok is false when
	// none runs.
	running() (cl *plugins.Client, gen uint64, ok bool)
	// failed reports that a call to generation gen failed without an
	// answer. It returns when the process is known to be healthy or has
	// been stopped, so that the next use starts a fresh one.
	failed(gen uint64, timedOut bool)
	// timeout is the deadline of one call.
	timeout() time.Duration
	// countCall counts one call and whether it failed.
	countCall(failed bool)
}

// errStale is returned for a call that would have sent a handle of one
// plugin process to another: handles are only numbers, and the same number
// may mean another object in the new process.
var errStale = source.Transient(fmt.Errorf("%w: plugin restarted during the call", source.ErrRestarted))

// answer is what every plugin response has: an optional error the plugin
// reports instead of a result.
type answer interface{ GetError() *pluginpb.Error }

// call runs one RPC under the per-call deadline (WithCallTimeout's, else
// the conn's) on the process of generation gen (any, when gen is 0).
// Failures of the call itself (the plugin died, hung or broke the
// connection) become transient errors and are reported to the conn; a
// caller's own cancellation is returned as the context's error.
func call[T answer](ctx context.Context, c conn, gen uint64, fn func(context.Context, *plugins.Client) (T, error)) (T, uint64, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, 0, err
	}
	cl, got, err := c.client(ctx)
	if err != nil {
		c.countCall(true)
		return zero, 0, err
	}
	if gen != 0 && got != gen {
		return zero, got, errStale
	}
	gen = got
	d := callTimeout(ctx, c.timeout())
	cctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	deadline, _ := cctx.Deadline()
	res, err := fn(cctx, cl)
	// The deadline travels to the plugin, whose copy may end the call
	// before our own timer has run: the plugin then answers "transient"
	// or gRPC reports DeadlineExceeded. Either way, once the deadline has
	// passed by the clock the call is one that timed out.
	expired := cctx.Err() != nil || !time.Now().Before(deadline)
	if err == nil {
		if !expired || !transientAnswer(res) {
			c.countCall(false)
			return res, gen, nil
		}
	}
	c.countCall(true)
	if ctx.Err() != nil {
		return zero, gen, ctx.Err()
	}
	timedOut := expired || status.Code(err) == codes.DeadlineExceeded
	c.failed(gen, timedOut)
	if timedOut {
		return zero, gen, source.Transient(fmt.Errorf("plugin did not answer within %v", d))
	}
	// The connection broke: the process is gone and the next call starts
	// another, so this failure is the plugin's, not the source's.
	return zero, gen, source.Transient(fmt.Errorf("%w: plugin call failed: %w", source.ErrRestarted, err))
}

// transientAnswer reports whether a plugin answered a transient failure,
// for the whole call or, in a read, for any of its ranges.
func transientAnswer(res answer) bool {
	if e := res.GetError(); e != nil {
		return e.Code == pluginpb.ErrorCode_TRANSIENT
	}
	if rr, ok := any(res).(*pluginpb.ReadResponse); ok {
		for _, ch := range rr.GetChunks() {
			if ch.GetError().GetCode() == pluginpb.ErrorCode_TRANSIENT {
				return true
			}
		}
	}
	return false
}

// callError is the error a plugin answered for a whole call. The end of an
// object is an answer only for a range; anywhere else it breaks the
// protocol.
func callError(e *pluginpb.Error) error {
	err := plugins.FromError(e)
	if err == io.EOF {
		return source.Permanent(errors.New("plugin answered end-of-object where no range was read"))
	}
	return err
}

// remoteSource is the host's view of a source served by a plugin. Its
// handle in the plugin is opened again, lazily, after a plugin restart.
type remoteSource struct {
	c   conn
	url string // sent to the plugin; may hold credentials
	red string // for messages

	mu     sync.Mutex
	gen    uint64
	id     uint64
	closed bool
}

var (
	_ source.Source = (*remoteSource)(nil)
	_ source.Lister = (*remoteSource)(nil)
)

// openRemote opens the source at rawURL in the plugin behind c.
func openRemote(ctx context.Context, c conn, rawURL, redacted string) (*remoteSource, error) {
	s := &remoteSource{c: c, url: rawURL, red: redacted}
	if _, _, err := s.handle(ctx); err != nil {
		return nil, &source.Error{Op: "open source", URL: redacted, Err: err}
	}
	return s, nil
}

// handle returns the source's handle in the current plugin process,
// opening it there when the process is new.
func (s *remoteSource) handle(ctx context.Context) (uint64, uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, 0, source.ErrClosed
	}
	_, gen, err := s.c.client(ctx)
	if err != nil {
		return 0, 0, err
	}
	if s.id != 0 && s.gen == gen {
		return s.id, gen, nil
	}
	resp, gen, err := call(ctx, s.c, gen, func(ctx context.Context, cl *plugins.Client) (*pluginpb.OpenSourceResponse, error) {
		return cl.OpenSource(ctx, &pluginpb.OpenSourceRequest{Url: s.url})
	})
	if err != nil {
		return 0, 0, err
	}
	if err := callError(resp.GetError()); err != nil {
		return 0, 0, err
	}
	s.id, s.gen = resp.GetSource(), gen
	return s.id, gen, nil
}

// Open opens a named object; the name is checked here, before anything
// crosses to the plugin.
func (s *remoteSource) Open(ctx context.Context, name string) (source.Object, error) {
	if err := source.CheckName(name); err != nil {
		return nil, &source.Error{Op: "open", Name: name, URL: s.red, Err: err}
	}
	o := &remoteObject{s: s, name: name, size: -1}
	if _, _, err := o.handle(ctx); err != nil {
		return nil, &source.Error{Op: "open", Name: name, URL: s.red, Err: err}
	}
	return o, nil
}

// List lists the plugin source's objects under prefix and checks the
// answer: every name valid, under the prefix, sorted and unique.
func (s *remoteSource) List(ctx context.Context, prefix string) ([]source.Entry, error) {
	fail := func(err error) ([]source.Entry, error) {
		return nil, &source.Error{Op: "list", Name: prefix, URL: s.red, Err: err}
	}
	if err := source.CheckPrefix(prefix); err != nil {
		return fail(err)
	}
	id, gen, err := s.handle(ctx)
	if err != nil {
		return fail(err)
	}
	resp, _, err := call(ctx, s.c, gen, func(ctx context.Context, cl *plugins.Client) (*pluginpb.ListResponse, error) {
		return cl.List(ctx, &pluginpb.ListRequest{Source: id, Prefix: prefix})
	})
	if err != nil {
		return fail(err)
	}
	if err := callError(resp.GetError()); err != nil {
		return fail(err)
	}
	out := make([]source.Entry, len(resp.GetEntries()))
	for i, e := range resp.GetEntries() {
		if err := source.CheckName(e.GetName()); err != nil {
			return fail(source.Permanent(fmt.Errorf("plugin listed a bad name: %w", err)))
		}
		if !strings.HasPrefix(e.GetName(), prefix) {
			return fail(source.Permanent(fmt.Errorf("plugin listed %q, not under prefix %q", e.GetName(), prefix)))
		}
		if i > 0 && e.GetName() <= out[i-1].Name {
			return fail(source.Permanent(fmt.Errorf("plugin listing not sorted: %q after %q", e.GetName(), out[i-1].Name)))
		}
		if e.GetSize() < -1 {
			return fail(source.Permanent(fmt.Errorf("plugin listed %q with size %d", e.GetName(), e.GetSize())))
		}
		out[i] = source.Entry{Name: e.GetName(), Size: e.GetSize()}
	}
	return out, nil
}

// Close closes the source in the plugin, if its process still runs.
func (s *remoteSource) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	id, gen := s.id, s.gen
	s.mu.Unlock()
	if id == 0 {
		return nil
	}
	if _, now, ok := s.c.running(); !ok || now != gen {
		// The process that held the handle is gone, and the handle with it.
		return nil
	}
	resp, _, err := call(context.Background(), s.c, gen, func(ctx context.Context, cl *plugins.Client) (*pluginpb.CloseSourceResponse, error) {
		return cl.CloseSource(ctx, &pluginpb.CloseSourceRequest{Source: id})
	})
	if err != nil {
		// The process that held the handle is gone, and the handle with it.
		return nil
	}
	if err := callError(resp.GetError()); err != nil && !errors.Is(err, source.ErrClosed) {
		return &source.Error{Op: "close", URL: s.red, Err: err}
	}
	return nil
}

// remoteObject is one object of a remote source. Its size is fixed when it
// is first opened; a plugin restart that finds another size is an error.
type remoteObject struct {
	s    *remoteSource
	name string

	mu      sync.Mutex
	size    int64
	version string // set with size, at the first open
	gen     uint64
	id      uint64
	closed  bool
}

var (
	_ source.Object    = (*remoteObject)(nil)
	_ source.Versioned = (*remoteObject)(nil)
)

// handle returns the object's handle in the current plugin process.
func (o *remoteObject) handle(ctx context.Context) (uint64, uint64, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return 0, 0, source.ErrClosed
	}
	sid, gen, err := o.s.handle(ctx)
	if err != nil {
		return 0, 0, err
	}
	if o.id != 0 && o.gen == gen {
		return o.id, gen, nil
	}
	resp, _, err := call(ctx, o.s.c, gen, func(ctx context.Context, cl *plugins.Client) (*pluginpb.OpenObjectResponse, error) {
		return cl.OpenObject(ctx, &pluginpb.OpenObjectRequest{Source: sid, Name: o.name})
	})
	if err != nil {
		return 0, 0, err
	}
	if err := callError(resp.GetError()); err != nil {
		return 0, 0, err
	}
	size := resp.GetSize()
	if size < 0 {
		return 0, 0, source.Permanent(fmt.Errorf("plugin reported size %d", size))
	}
	if o.size >= 0 && size != o.size {
		return 0, 0, source.Changed("size %d bytes after a plugin restart, opened as %d", size, o.size)
	}
	if o.size >= 0 && resp.GetVersion() != o.version {
		return 0, 0, source.Changed("version %q after a plugin restart, opened as %q", resp.GetVersion(), o.version)
	}
	if o.size < 0 {
		o.size, o.version = size, resp.GetVersion()
	}
	o.id, o.gen = resp.GetObject(), gen
	return o.id, gen, nil
}

// Size is the object's length, as the plugin reported it at open. It is
// set once, before Open returns the object, and never changes (a reopen
// that finds another size fails instead), so it is read without the lock
// that a reopen in progress holds.
func (o *remoteObject) Size() int64 { return o.size }

// Version is the version the plugin's transport named at open, fixed like
// Size.
func (o *remoteObject) Version() string { return o.version }

// Range is one range of a batched read: Buf is filled from offset Off, N
// says how many bytes were, and Err why fewer than len(Buf) were (io.EOF at
// the end of the object).
type Range struct {
	Off int64
	Buf []byte
	N   int
	Err error
}

// ReadAt reads len(p) bytes at off with the io.ReaderAt contract, in as
// few plugin calls as the batch limit allows.
func (o *remoteObject) ReadAt(ctx context.Context, p []byte, off int64, hint source.Hint) (int, error) {
	rs := []Range{{Off: off, Buf: p}}
	if err := o.ReadRanges(ctx, rs, hint); err != nil {
		return 0, err
	}
	return rs[0].N, rs[0].Err
}

// ReadRanges reads several ranges of the object, batching them into as
// few plugin calls as possible: this is how a caller pays the cost of the
// process boundary once per batch. It fills each Range's N and Err, and
// returns an error only when the request as a whole is bad or the object is
// closed (ErrClosed). The plugin's answer is checked against the request: a plugin can
// never deliver more bytes than asked, nor bytes for a range it was not
// asked for, nor a short range that does not end at the object's end.
func (o *remoteObject) ReadRanges(ctx context.Context, rs []Range, hint source.Hint) error {
	o.mu.Lock()
	closed := o.closed
	o.mu.Unlock()
	size := o.size
	if closed {
		return &source.Error{Op: "read", Name: o.name, URL: o.s.red, Err: source.ErrClosed}
	}
	// Each wire range is one piece of one caller range.
	type piece struct {
		r    int // index into rs
		at   int // offset into rs[r].Buf
		off  int64
		want int
	}
	var pieces []piece
	for i := range rs {
		r := &rs[i]
		r.N, r.Err = 0, nil
		if err := source.CheckRange(r.Off, len(r.Buf), size); err != nil {
			r.Err = &source.Error{Op: "read", Name: o.name, URL: o.s.red, Err: err}
			continue
		}
		want := len(r.Buf)
		if rest := size - r.Off; int64(want) > rest {
			want = int(rest)
		}
		for at := 0; at < want; {
			n := min(want-at, plugins.MaxRangeLength)
			pieces = append(pieces, piece{r: i, at: at, off: r.Off + int64(at), want: n})
			at += n
		}
	}
	fail := func(i int, err error) {
		if rs[i].Err == nil {
			rs[i].Err = &source.Error{Op: "read", Name: o.name, URL: o.s.red, Err: err}
		}
	}
	for len(pieces) > 0 {
		// Take as many pieces as fit in one call.
		n, total := 0, 0
		for n < len(pieces) && (n == 0 || total+pieces[n].want <= plugins.MaxBatchBytes) {
			total += pieces[n].want
			n++
		}
		batch := pieces[:n]
		pieces = pieces[n:]
		req := &pluginpb.ReadRequest{Hint: plugins.HintToWire(hint)}
		for _, pc := range batch {
			req.Ranges = append(req.Ranges, &pluginpb.Range{Offset: pc.off, Length: int64(pc.want)})
		}
		id, gen, err := o.handle(ctx)
		var resp *pluginpb.ReadResponse
		if err == nil {
			req.Object = id
			resp, _, err = call(ctx, o.s.c, gen, func(ctx context.Context, cl *plugins.Client) (*pluginpb.ReadResponse, error) {
				return cl.Read(ctx, req)
			})
		}
		if err == nil {
			err = callError(resp.GetError())
		}
		if err == nil && len(resp.GetChunks()) != len(batch) {
			err = source.Permanent(fmt.Errorf("plugin answered %d ranges for %d asked", len(resp.GetChunks()), len(batch)))
		}
		if err != nil {
			// The call failed as a whole: the ranges not yet read fail
			// with it rather than each waiting for its own failure.
			for _, pc := range batch {
				fail(pc.r, err)
			}
			for _, pc := range pieces {
				fail(pc.r, err)
			}
			break
		}
		for k, pc := range batch {
			r := &rs[pc.r]
			if r.Err != nil || r.N != pc.at {
				// An earlier piece of this range failed; later bytes
				// cannot be counted.
				continue
			}
			ch := resp.GetChunks()[k]
			n, cerr := checkChunk(pc.want, pc.off, size, ch.GetData(), plugins.FromError(ch.GetError()))
			copy(r.Buf[pc.at:pc.at+n], ch.GetData())
			r.N += n
			if cerr != nil {
				fail(pc.r, cerr)
			}
		}
	}
	for i := range rs {
		r := &rs[i]
		if r.Err == nil && r.N < len(r.Buf) {
			r.Err = io.EOF
		}
	}
	return nil
}

// checkChunk judges a plugin's answer to one wire range: want bytes at off,
// a range that lies wholly inside the object's size. It returns how many of
// data the caller may take and the range's error. A plugin may answer with
// exactly want bytes, or with fewer and an error of its own; any other
// answer breaks the protocol and is refused whole as ErrPermanent, so a
// plugin can never deliver more bytes than asked, nor a short range
// without saying why.
func checkChunk(want int, off, size int64, data []byte, perr error) (int, error) {
	switch {
	case len(data) > want:
		return 0, source.Permanent(fmt.Errorf("plugin returned %d bytes for a read of %d at offset %d", len(data), want, off))
	case perr == nil && len(data) != want:
		return 0, source.Permanent(fmt.Errorf("plugin returned %d bytes for a read of %d at offset %d without an error", len(data), want, off))
	case perr == io.EOF && len(data) < want:
		// Every wire range lies inside the size the plugin reported, so
		// an early end means the object changed or the plugin is wrong.
		return 0, source.Permanent(fmt.Errorf("plugin reported the end of the object at %d, inside its size %d", off+int64(len(data)), size))
	case perr == io.EOF:
		return want, nil
	}
	return len(data), perr
}

// Close closes the object in the plugin, if its process still runs.
func (o *remoteObject) Close() error {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return nil
	}
	o.closed = true
	id, gen := o.id, o.gen
	o.mu.Unlock()
	if id == 0 {
		return nil
	}
	if _, now, ok := o.s.c.running(); !ok || now != gen {
		return nil
	}
	resp, _, err := call(context.Background(), o.s.c, gen, func(ctx context.Context, cl *plugins.Client) (*pluginpb.CloseObjectResponse, error) {
		return cl.CloseObject(ctx, &pluginpb.CloseObjectRequest{Object: id})
	})
	if err != nil {
		return nil
	}
	if err := callError(resp.GetError()); err != nil && !errors.Is(err, source.ErrClosed) {
		return &source.Error{Op: "close", Name: o.name, URL: o.s.red, Err: err}
	}
	return nil
}
