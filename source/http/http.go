// Package http serves the files of an HTTP(S) mirror as a source. It
// registers itself for the "http" and "https" schemes; the URL is the base
// under which object names are appended as path elements. A query in the
// base URL (an access token, say) is sent with every request and redacted
// from errors.
//
// Each read is one ranged GET. Open itself is one ranged GET of the object's
// first Options.OpenRead bytes: its Content-Range gives the size and its
// validators the version, and its body is kept to answer the first read, so
// opening an object and reading its header costs one round trip, not a HEAD
// and then a GET. Where that answer gives no size, a HEAD decides. A
// server that ignores Range and answers 200 with the whole body is detected:
// the wanted range is cut out of the body when it lies within the first
// Options.MaxIgnoredRange bytes, and otherwise the read fails with
// source.ErrPermanent — the bytes of another range are never returned. A body
// shorter than announced is a transient error.
//
// An object is pinned to the version Open saw: its strong ETag is sent as
// If-Match with every read (a weak one, or a Last-Modified date when there is
// no ETag, is sent as the matching precondition where HTTP allows it), and
// the validator of every answer is compared with the pinned one. A read of a
// replaced object fails with source.ErrChanged rather than mixing bytes of two
// versions of a table. A server that sends neither validator cannot be
// checked this way; only a change of size is noticed then.
//
// Errors are classified for the retry wrapper (source/retry), which is where
// retrying happens: 5xx, 408, 429, timeouts and connection failures are
// source.ErrTransient; 404 and 410 are source.ErrNotFound; the rest are
// source.ErrPermanent. source/stack wraps every remote source in that retry
// wrapper, so front ends get bounded retries with backoff.
//
// # Listing and the manifest
//
// HTTP has no listing, so a mirror may publish one: a text file named
// MANIFEST (Options.Manifest) beside the objects. It is UTF-8, one object per
// line, written as the size in decimal bytes, one space, and the object name
// (which may itself contain spaces):
//
//	# comment lines and blank lines are ignored
//	1048576 chess/KQvK.tbw
//	0 empty file
//
// Names must be valid object names (source.CheckName) and appear at most
// once. WriteManifest produces such a file ("tbprobe publish" writes one
// for a folder of tables). The manifest itself is not listed.
//
// A mirror without a manifest is listed from the directory index pages its
// server generates (nginx's autoindex, Apache httpd's mod_autoindex,
// lighttpd's mod_dirlisting; package autoindex reads them): one GET a
// folder, subfolders as they are found. The manifest and the root's index
// page are asked for together, and the manifest wins when there is one.
// Index pages give no exact sizes, so their entries have Size -1 and an
// object's size is always the one its ranged GET reports. Names a server
// leaves out of its pages (nginx and, by Debian's default IndexIgnore,
// Apache hide names beginning with a dot) are not listed. When neither a
// manifest nor an index of every folder can be read, List fails with
// source.ErrUnsupported and Open still works by asking for each name.
package http

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/internal/httprange"
	"github.com/tbfs/tbfs/source/internal/prefix"
)

func init() {
	open := func(ctx context.Context, u *url.URL) (source.Source, error) {
		return New(u.String(), Options{})
	}
	source.Register("http", open)
	source.Register("https", open)
}

// DefaultManifest is the name of the listing file a mirror may publish.
const DefaultManifest = "MANIFEST"

// Options tune a Source; the zero value is usable.
type Options struct {
	// Client makes the requests. Nil means a client of this package's own,
	// with transparent compression disabled so byte ranges stay raw.
	Client *http.Client
	// Timeout bounds each request, body included. Zero means 30 seconds.
	Timeout time.Duration
	// MaxIgnoredRange is how many bytes a read may download and discard
	// when the server ignores Range and sends the whole object. Zero means
	// 4 MiB; a negative value refuses such servers outright.
	MaxIgnoredRange int64
	// Manifest names the listing file. Empty means DefaultManifest.
	Manifest string
	// OpenRead is how many bytes from the start of an object Open asks for
	// with the GET that tells it the size and version; they answer the
	// first read without another request. Zero means DefaultOpenRead; a
	// negative value makes Open send a HEAD and keep no bytes.
	OpenRead int
}

// DefaultOpenRead is the part of an object Open fetches: one block of the
// source cache, which holds the header and block index of most tables.
const DefaultOpenRead = 64 << 10

// Source is an HTTP mirror.
type Source struct {
	base     *url.URL
	redacted string
	client   *http.Client
	timeout  time.Duration
	maxSkip  int64
	manifest string
	openRead int

	mu     sync.Mutex
	closed bool
}

var (
	_ source.Source   = (*Source)(nil)
	_ source.Lister   = (*Source)(nil)
	_ source.Prefixed = (*object)(nil)
)

// New serves the mirror at base, an http or https URL. Nothing is fetched
// until the first Open or List.
func New(base string, opts Options) (*Source, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, &source.Error{Op: "open source", Err: source.Invalid("bad URL: %v", err)}
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, &source.Error{Op: "open source", URL: source.Redact(u), Err: source.Invalid("scheme %q is not http or https", u.Scheme)}
	}
	if u.Host == "" {
		return nil, &source.Error{Op: "open source", URL: source.Redact(u), Err: source.Invalid("URL has no host")}
	}
	u.Fragment, u.RawFragment = "", ""
	s := &Source{
		base:     u,
		redacted: source.Redact(u),
		client:   opts.Client,
		timeout:  opts.Timeout,
		maxSkip:  opts.MaxIgnoredRange,
		manifest: opts.Manifest,
		openRead: opts.OpenRead,
	}
	if s.client == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.DisableCompression = true
		tr.MaxIdleConnsPerHost = 32
		s.client = &http.Client{Transport: tr}
	}
	if s.timeout <= 0 {
		s.timeout = 30 * time.Second
	}
	if s.maxSkip == 0 {
		s.maxSkip = 4 << 20
	}
	if s.manifest == "" {
		s.manifest = DefaultManifest
	}
	if s.openRead == 0 {
		s.openRead = DefaultOpenRead
	}
	if err := source.CheckName(s.manifest); err != nil {
		return nil, &source.Error{Op: "open source", URL: s.redacted, Err: err}
	}
	return s, nil
}

// String is the mirror's URL without credentials.
func (s *Source) String() string { return s.redacted }

func (s *Source) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// objectURL appends the name's elements to the base URL. JoinPath takes
// escaped elements, so each is escaped first: a name holding "%41" means
// those three characters, not "A".
func (s *Source) objectURL(name string) string {
	elems := strings.Split(name, "/")
	for i, e := range elems {
		elems[i] = url.PathEscape(e)
	}
	return s.base.JoinPath(elems...).String()
}

// do sends one request bounded by the per-request timeout. The returned
// cancel function must be called once the body has been read.
func (s *Source) do(ctx context.Context, method, name string, header http.Header) (*http.Response, context.CancelFunc, error) {
	rctx, cancel := context.WithTimeout(ctx, s.timeout)
	req, err := http.NewRequestWithContext(rctx, method, s.objectURL(name), nil)
	if err != nil {
		cancel()
		return nil, nil, source.Invalid("cannot build request: %v", err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Accept-Encoding", "identity")
	answered := source.ObserveRequest(ctx)
	resp, err := s.client.Do(req)
	answered()
	if err != nil {
		cancel()
		return nil, nil, s.netErr(ctx, err)
	}
	// Object names never end in a slash, so a redirect to one is a server
	// showing a directory listing, not an object.
	if resp.Request != nil && strings.HasSuffix(resp.Request.URL.Path, "/") {
		drain(resp.Body)
		cancel()
		return nil, nil, fmt.Errorf("%w: %s is a directory on the server", source.ErrNotFound, name)
	}
	// Lengths and ranges count the bytes of the object itself; a body the
	// server compressed anyway (despite "Accept-Encoding: identity") would
	// hand back other bytes.
	if ce := resp.Header.Get("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") && resp.StatusCode < 300 {
		drain(resp.Body)
		cancel()
		return nil, nil, source.Permanent(fmt.Errorf("server sent the object with Content-Encoding %q", ce))
	}
	return resp, cancel, nil
}

// netErr classifies a failure to talk to the server: the caller's own
// cancellation is passed through as is, everything else (our timeout, a
// refused or reset connection) may work when tried again.
func (s *Source) netErr(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err // the URL is already part of source.Error
	}
	var nerr net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &nerr) && nerr.Timeout()) {
		return source.Transient(fmt.Errorf("no complete answer within %v: %w", s.timeout, err))
	}
	return source.Transient(err)
}

// statusErr maps an unexpected HTTP status to an error kind.
func statusErr(resp *http.Response) error {
	err := fmt.Errorf("server answered %s", resp.Status)
	switch c := resp.StatusCode; {
	case c == http.StatusNotFound || c == http.StatusGone:
		return fmt.Errorf("%w: %w", source.ErrNotFound, err)
	case c == http.StatusRequestTimeout || c == http.StatusTooEarly || c == http.StatusTooManyRequests || c >= 500:
		d, _ := retryAfter(resp.Header.Get("Retry-After"), time.Now())
		return source.WithRetryAfter(source.Transient(err), d)
	}
	return source.Permanent(err)
}

// retryAfter reads a Retry-After header (RFC 9110 §10.2.3): delay seconds
// or an HTTP date, which is measured from now.
func retryAfter(h string, now time.Time) (time.Duration, bool) {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(h, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		return time.Duration(min(secs, 1<<31)) * time.Second, true
	}
	if t, err := http.ParseTime(h); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// drain discards a little of an unwanted body so the connection can be
// reused, then closes it.
func drain(body io.ReadCloser) {
	io.CopyN(io.Discard, body, 4096)
	body.Close()
}

// Open learns the object's size and version from a ranged GET of its first
// bytes (or HEAD, when Options.OpenRead is negative), and keeps those bytes
// for the first read.
func (s *Source) Open(ctx context.Context, name string) (source.Object, error) {
	fail := func(err error) error { return &source.Error{Op: "open", Name: name, URL: s.redacted, Err: err} }
	if err := source.CheckName(name); err != nil {
		return nil, fail(err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fail(err)
	}
	if s.isClosed() {
		return nil, fail(source.ErrClosed)
	}
	if s.openRead < 0 {
		size, ver, err := s.head(ctx, name)
		if err != nil {
			return nil, fail(err)
		}
		return &object{src: s, name: name, size: size, ver: ver}, nil
	}
	size, ver, first, err := s.openGet(ctx, name)
	if errors.Is(err, errNoLength) {
		// The answer named no size; HEAD (or its fallback) does.
		size, ver, err = s.head(ctx, name)
		first = nil
	}
	if err != nil {
		return nil, fail(err)
	}
	return &object{src: s, name: name, size: size, ver: ver, first: prefix.New(first)}, nil
}

// openGet asks for the first s.openRead bytes of name and returns the size,
// the version and the bytes, which are the object's from offset 0 (fewer
// than asked for when the object is shorter). errNoLength means the answer
// does not say how long the object is.
func (s *Source) openGet(ctx context.Context, name string) (int64, version, []byte, error) {
	h := http.Header{"Range": {fmt.Sprintf("bytes=0-%d", s.openRead-1)}}
	resp, cancel, err := s.do(ctx, http.MethodGet, name, h)
	if err != nil {
		return 0, version{}, nil, err
	}
	defer cancel()
	defer drain(resp.Body)
	ver := versionOf(resp.Header)
	var size, want int64
	switch resp.StatusCode {
	case http.StatusPartialContent:
		first, last, total, err := httprange.Parse(resp.Header.Get("Content-Range"))
		if err != nil {
			return 0, version{}, nil, source.Permanent(err)
		}
		if total < 0 {
			return 0, version{}, nil, errNoLength
		}
		if first != 0 || last != min(int64(s.openRead), total)-1 {
			return 0, version{}, nil, source.Permanent(fmt.Errorf("asked for bytes 0-%d, server sent %d-%d", s.openRead-1, first, last))
		}
		size, want = total, last+1
	case http.StatusRequestedRangeNotSatisfiable:
		// Only an empty object has no byte 0; the server says so with
		// "bytes */0".
		if cr := resp.Header.Get("Content-Range"); cr == "bytes */0" {
			return 0, ver, nil, nil
		}
		return 0, version{}, nil, source.Permanent(fmt.Errorf("server refused byte 0 (%s)", resp.Status))
	case http.StatusOK:
		// The server ignores Range: the body is the whole object, of
		// which the first bytes are kept and the rest left unread.
		if resp.ContentLength < 0 {
			return 0, version{}, nil, errNoLength
		}
		size, want = resp.ContentLength, min(resp.ContentLength, int64(s.openRead))
	default:
		return 0, version{}, nil, statusErr(resp)
	}
	buf := make([]byte, want)
	if _, err := io.ReadFull(resp.Body, buf); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return 0, version{}, nil, source.Transient(fmt.Errorf("body ended early: %w", io.ErrUnexpectedEOF))
		}
		return 0, version{}, nil, s.netErr(ctx, err)
	}
	return size, ver, buf, nil
}

// version identifies the version of an object a server is sending, by the
// validators HTTP defines for that.
type version struct {
	etag    string // as sent, quotes and any W/ prefix included
	lastMod string // Last-Modified, as sent
}

func versionOf(h http.Header) version {
	return version{etag: h.Get("ETag"), lastMod: h.Get("Last-Modified")}
}

// strong reports whether the ETag may be used with If-Match, which
// compares ETags strongly.
func (v version) strong() bool { return v.etag != "" && !strings.HasPrefix(v.etag, "W/") }

// preconditions are the request headers that make a server refuse (412)
// to send any other version than v.
func (v version) preconditions(h http.Header) {
	switch {
	case v.strong():
		h.Set("If-Match", v.etag)
	case v.etag == "" && v.lastMod != "":
		h.Set("If-Unmodified-Since", v.lastMod)
	}
}

// check compares the validators of an answer with the pinned ones. A
// validator the answer leaves out is not a change: some servers send them
// with full answers only. ETags are compared weakly (RFC 9110 §8.8.3.2:
// the same tag, either of them weak, is the same version), as Apache sends
// W/"tag" for a file modified within the last second and "tag" once that
// second has passed.
func (v version) check(got version) error {
	if v.etag != "" && got.etag != "" && strings.TrimPrefix(got.etag, "W/") != strings.TrimPrefix(v.etag, "W/") {
		return source.Changed("ETag %s, opened as %s", got.etag, v.etag)
	}
	if v.etag == "" && v.lastMod != "" && got.lastMod != "" && got.lastMod != v.lastMod {
		return source.Changed("Last-Modified %s, opened as %s", got.lastMod, v.lastMod)
	}
	return nil
}

// errNoLength means HEAD gave no usable answer and the GET probe must decide.
var errNoLength = errors.New("no length from HEAD")

// head learns an object's size and version.
func (s *Source) head(ctx context.Context, name string) (int64, version, error) {
	size, ver, err := s.headOnly(ctx, name)
	if err != errNoLength {
		return size, ver, err
	}
	return s.probe(ctx, name)
}

func (s *Source) headOnly(ctx context.Context, name string) (int64, version, error) {
	resp, cancel, err := s.do(ctx, http.MethodHead, name, nil)
	if err != nil {
		return 0, version{}, err
	}
	defer cancel()
	resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusOK:
		if resp.ContentLength < 0 {
			return 0, version{}, errNoLength
		}
		return resp.ContentLength, versionOf(resp.Header), nil
	case resp.StatusCode == http.StatusMethodNotAllowed || resp.StatusCode == http.StatusNotImplemented ||
		resp.StatusCode == http.StatusForbidden:
		// Some servers (pre-signed URLs among them) allow only GET.
		return 0, version{}, errNoLength
	}
	return 0, version{}, statusErr(resp)
}

// probe learns the size from the Content-Range of a one-byte ranged GET.
func (s *Source) probe(ctx context.Context, name string) (int64, version, error) {
	resp, cancel, err := s.do(ctx, http.MethodGet, name, http.Header{"Range": {"bytes=0-0"}})
	if err != nil {
		return 0, version{}, err
	}
	defer cancel()
	defer drain(resp.Body)
	ver := versionOf(resp.Header)
	switch resp.StatusCode {
	case http.StatusPartialContent:
		_, _, total, err := httprange.Parse(resp.Header.Get("Content-Range"))
		if err != nil {
			return 0, version{}, source.Permanent(err)
		}
		if total < 0 {
			return 0, version{}, source.Permanent(errors.New("server does not say how long the object is"))
		}
		return total, ver, nil
	case http.StatusRequestedRangeNotSatisfiable:
		// Only an empty object has no byte 0; the server says so with
		// "bytes */0".
		if cr := resp.Header.Get("Content-Range"); cr == "bytes */0" {
			return 0, ver, nil
		}
		return 0, version{}, source.Permanent(fmt.Errorf("server refused byte 0 (%s)", resp.Status))
	case http.StatusOK:
		if resp.ContentLength < 0 {
			return 0, version{}, source.Permanent(errors.New("server gives neither Content-Range nor Content-Length"))
		}
		return resp.ContentLength, ver, nil
	}
	return 0, version{}, statusErr(resp)
}

// List reads the manifest, or else the index pages, and returns the
// entries under prefix. Each call reads them again, so tables added to the
// mirror show up; source/listcache keeps a listing for a time-to-live where
// that costs too much.
func (s *Source) List(ctx context.Context, prefix string) ([]source.Entry, error) {
	fail := func(err error) error { return &source.Error{Op: "list", Name: prefix, URL: s.redacted, Err: err} }
	if err := source.CheckPrefix(prefix); err != nil {
		return nil, fail(err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fail(err)
	}
	if s.isClosed() {
		return nil, fail(source.ErrClosed)
	}
	entries, err := s.listAll(ctx)
	if err != nil {
		return nil, fail(err)
	}
	var out []source.Entry
	i := sort.Search(len(entries), func(i int) bool { return entries[i].Name >= prefix })
	for ; i < len(entries) && strings.HasPrefix(entries[i].Name, prefix); i++ {
		out = append(out, entries[i])
	}
	return out, nil
}

func (s *Source) loadManifest(ctx context.Context) ([]source.Entry, error) {
	obj, err := s.Open(ctx, s.manifest)
	if errors.Is(err, source.ErrNotFound) {
		return nil, errNoManifest
	}
	if err != nil {
		return nil, err
	}
	defer obj.Close()
	if obj.Size() > 64<<20 {
		return nil, source.Permanent(fmt.Errorf("%s of %d bytes is implausibly large", s.manifest, obj.Size()))
	}
	data, err := source.ReadAll(ctx, obj, source.HintIndex)
	if err != nil {
		return nil, err
	}
	entries, err := ParseManifest(strings.NewReader(string(data)))
	if err != nil {
		return nil, source.Permanent(fmt.Errorf("%s: %w", s.manifest, err))
	}
	kept := entries[:0]
	for _, e := range entries {
		if e.Name != s.manifest {
			kept = append(kept, e)
		}
	}
	if kept == nil {
		kept = []source.Entry{}
	}
	return kept, nil
}

// ParseManifest reads a manifest in the format described in the package
// documentation and returns its entries sorted by name. Any malformed line,
// invalid name, negative size or duplicate name is an error naming the line.
func ParseManifest(r io.Reader) ([]source.Entry, error) {
	var out []source.Entry
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSuffix(sc.Text(), "\r")
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		sz, name, ok := strings.Cut(text, " ")
		if !ok {
			return nil, fmt.Errorf("line %d: want \"size name\", got %q", line, text)
		}
		size, err := strconv.ParseInt(sz, 10, 64)
		if err != nil || size < 0 || sz[0] == '+' {
			return nil, fmt.Errorf("line %d: bad size %q", line, sz)
		}
		if err := source.CheckName(name); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if seen[name] {
			return nil, fmt.Errorf("line %d: %q listed twice", line, name)
		}
		seen[name] = true
		out = append(out, source.Entry{Name: name, Size: size})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading manifest: %w", err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// WriteManifest writes entries in the manifest format, one per line.
func WriteManifest(w io.Writer, entries []source.Entry) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "# tbfs manifest: size in bytes, one space, object name")
	for _, e := range entries {
		if err := source.CheckName(e.Name); err != nil {
			return err
		}
		if e.Size < 0 {
			return fmt.Errorf("manifest entry %q has no size", e.Name)
		}
		fmt.Fprintf(bw, "%d %s\n", e.Size, e.Name)
	}
	return bw.Flush()
}

// Close marks the source closed and drops idle connections. Reads in flight
// finish; later calls fail with source.ErrClosed.
func (s *Source) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.client.CloseIdleConnections()
	return nil
}

type object struct {
	src   *Source
	name  string
	size  int64
	ver   version
	first *prefix.Bytes // the bytes Open fetched, until read

	mu     sync.Mutex
	closed bool
}

func (o *object) Size() int64 { return o.size }

// PrefixLen is how many bytes Open fetched.
func (o *object) PrefixLen() int64 { return o.first.Len() }

// Holds reports whether a read of n bytes at off is answered by the bytes
// Open fetched.
func (o *object) Holds(off int64, n int) bool {
	return o.first.Holds(off, int(min(int64(n), o.size-off)))
}

// Version is the ETag Open saw, or its Last-Modified date without one.
func (o *object) Version() string {
	if o.ver.etag != "" {
		return o.ver.etag
	}
	return o.ver.lastMod
}

func (o *object) Close() error {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
	return nil
}

func (o *object) ReadAt(ctx context.Context, p []byte, off int64, hint source.Hint) (int, error) {
	fail := func(err error) error { return &source.Error{Op: "read", Name: o.name, URL: o.src.redacted, Err: err} }
	if err := source.CheckRange(off, len(p), o.size); err != nil {
		return 0, fail(err)
	}
	if err := ctx.Err(); err != nil {
		return 0, fail(err)
	}
	o.mu.Lock()
	closed := o.closed
	o.mu.Unlock()
	if closed || o.src.isClosed() {
		return 0, fail(source.ErrClosed)
	}
	want := min(int64(len(p)), o.size-off)
	if want == 0 {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	n := o.first.Read(p[:want], off)
	if int64(n) < want {
		m, err := o.fetch(ctx, p[n:want], off+int64(n))
		n += m
		if err != nil {
			return n, fail(err)
		}
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// fetch fills p with the bytes at off, all of which exist, in one GET.
func (o *object) fetch(ctx context.Context, p []byte, off int64) (int, error) {
	last := off + int64(len(p)) - 1
	h := http.Header{"Range": {fmt.Sprintf("bytes=%d-%d", off, last)}}
	o.ver.preconditions(h)
	resp, cancel, err := o.src.do(ctx, http.MethodGet, o.name, h)
	if err != nil {
		return 0, err
	}
	defer cancel()
	defer drain(resp.Body)
	if resp.StatusCode == http.StatusPreconditionFailed {
		return 0, source.Changed("the server refused the version opened (%s)", resp.Status)
	}
	if resp.StatusCode == http.StatusPartialContent || resp.StatusCode == http.StatusOK {
		if err := o.ver.check(versionOf(resp.Header)); err != nil {
			return 0, err
		}
	}
	switch resp.StatusCode {
	case http.StatusPartialContent:
		first, gotLast, total, err := httprange.Parse(resp.Header.Get("Content-Range"))
		if err != nil {
			return 0, source.Permanent(err)
		}
		if first != off || gotLast != last {
			return 0, source.Permanent(fmt.Errorf("asked for bytes %d-%d, server sent %d-%d", off, last, first, gotLast))
		}
		if total >= 0 && total != o.size {
			return 0, source.Changed("size %d bytes, opened as %d", total, o.size)
		}
		return o.readBody(ctx, resp.Body, p)
	case http.StatusOK:
		// The server ignored Range and is sending the whole object.
		if resp.ContentLength >= 0 && resp.ContentLength != o.size {
			return 0, source.Changed("size %d bytes, opened as %d", resp.ContentLength, o.size)
		}
		if o.src.maxSkip < 0 || last+1 > o.src.maxSkip {
			return 0, source.Permanent(fmt.Errorf(
				"server ignores Range requests; reading bytes %d-%d would mean downloading more than the %d allowed",
				off, last, max(o.src.maxSkip, 0)))
		}
		if _, err := io.CopyN(io.Discard, resp.Body, off); err != nil {
			return 0, o.bodyErr(ctx, err)
		}
		return o.readBody(ctx, resp.Body, p)
	case http.StatusRequestedRangeNotSatisfiable:
		return 0, source.Permanent(fmt.Errorf("server says bytes %d-%d do not exist in an object of %d bytes (%s)", off, last, o.size, resp.Status))
	}
	return 0, statusErr(resp)
}

func (o *object) readBody(ctx context.Context, body io.Reader, p []byte) (int, error) {
	n, err := io.ReadFull(body, p)
	if err != nil {
		return 0, o.bodyErr(ctx, err)
	}
	return n, nil
}

// bodyErr classifies a failure while reading a body: a body that ends early
// or stalls past the timeout may be whole when tried again.
func (o *object) bodyErr(ctx context.Context, err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return source.Transient(fmt.Errorf("body ended early: %w", io.ErrUnexpectedEOF))
	}
	return o.src.netErr(ctx, err)
}
