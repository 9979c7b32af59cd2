package host

import (
	"context"
	"errors"
	"io"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/tbfs/tbfs/plugins"
	pluginpb "github.com/tbfs/tbfs/plugins/proto"
	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/mmap"
	"github.com/tbfs/tbfs/source/sourcetest"
)

// fixedConn is a conn to one in-process plugin connection that never
// restarts.
type fixedConn struct{ cl *plugins.Client }

func (c fixedConn) client(context.Context) (*plugins.Client, uint64, error) { return c.cl, 1, nil }
func (c fixedConn) running() (*plugins.Client, uint64, bool)                { return c.cl, 1, true }
func (c fixedConn) failed(uint64, bool)                                     {}
func (c fixedConn) timeout() time.Duration                                  { return 30 * time.Second }
func (c fixedConn) countCall(bool)                                          {}

// testPlugin serves any SourceServer, so hostile servers can be plugged in.
type testPlugin struct {
	plugins.Plugin
	impl pluginpb.SourceServer
}

func (p *testPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	pluginpb.RegisterSourceServer(s, p.impl)
	return nil
}

// inProcess connects to impl over go-plugin's in-process gRPC test
// connection.
func inProcess(t *testing.T, impl pluginpb.SourceServer) conn {
	t.Helper()
	client, _ := plugin.TestPluginGRPCConn(t, false, map[string]plugin.Plugin{
		plugins.PluginName: &testPlugin{impl: impl},
	})
	t.Cleanup(func() { client.Close() })
	raw, err := client.Dispense(plugins.PluginName)
	if err != nil {
		t.Fatal(err)
	}
	return fixedConn{cl: raw.(*plugins.Client)}
}

func openDir(_ context.Context, u *url.URL) (source.Source, error) { return mmap.New(u.Path) }

// TestContractConformance runs the transport suite through the protocol
// in-process: the host's remote source talking to the plugin-side server
// that serves the mmap transport. The arbiter is the suite's fixtures.
func TestContractConformance(t *testing.T) {
	sourcetest.Run(t, func(t *testing.T, dir string) source.Source {
		c := inProcess(t, plugins.NewServer([]string{"file"}, openDir))
		src, err := openRemote(context.Background(), c, "file://"+dir, "file://"+dir)
		if err != nil {
			t.Fatal(err)
		}
		return src
	})
}

// TestReadRangesBatch reads several ranges in one call and checks each
// against the fixture bytes, including one that crosses the end and one
// with a bad offset, which fail on their own without spoiling the others.
func TestReadRangesBatch(t *testing.T) {
	dir := t.TempDir()
	sourcetest.WriteFixtures(t, dir)
	var data []byte
	for _, f := range sourcetest.Fixtures() {
		if f.Name == "big/blob.bin" {
			data = f.Data
		}
	}
	srv := &countingServer{Server: plugins.NewServer([]string{"file"}, openDir)}
	c := inProcess(t, srv)
	src, err := openRemote(context.Background(), c, "file://"+dir, "")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	obj, err := src.Open(context.Background(), "big/blob.bin")
	if err != nil {
		t.Fatal(err)
	}
	size := int64(len(data))
	rs := []Range{
		{Off: 0, Buf: make([]byte, 64)},
		{Off: 4096, Buf: make([]byte, 4096)},
		{Off: size - 10, Buf: make([]byte, 100)},
		{Off: size + 1, Buf: make([]byte, 8)},
		{Off: 1 << 20, Buf: make([]byte, 65536)},
	}
	if err := obj.(*remoteObject).ReadRanges(context.Background(), rs, source.HintData); err != nil {
		t.Fatal(err)
	}
	if got := srv.reads(); got != 1 {
		t.Errorf("batch of %d ranges took %d Read calls, want 1", len(rs), got)
	}
	for i, r := range rs {
		switch {
		case r.Off > size:
			if !errors.Is(r.Err, source.ErrInvalid) || r.N != 0 {
				t.Errorf("range %d past the end: n=%d err=%v, want 0, ErrInvalid", i, r.N, r.Err)
			}
			continue
		case r.Off+int64(len(r.Buf)) > size:
			if r.Err != io.EOF {
				t.Errorf("range %d crossing the end: err=%v, want io.EOF", i, r.Err)
			}
		default:
			if r.Err != nil {
				t.Errorf("range %d: %v", i, r.Err)
			}
		}
		end := min(r.Off+int64(len(r.Buf)), size)
		if r.N != int(end-r.Off) || !slices.Equal(r.Buf[:r.N], data[r.Off:end]) {
			t.Errorf("range %d: %d bytes, wrong content or length (want %d)", i, r.N, end-r.Off)
		}
	}
}

type countingServer struct {
	*plugins.Server
	mu sync.Mutex
	n  int
}

func (s *countingServer) Read(ctx context.Context, req *pluginpb.ReadRequest) (*pluginpb.ReadResponse, error) {
	s.mu.Lock()
	s.n++
	s.mu.Unlock()
	return s.Server.Read(ctx, req)
}

func (s *countingServer) reads() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// hostile is a plugin that answers with whatever a test row plants, and
// records every name it was sent.
type hostile struct {
	pluginpb.UnimplementedSourceServer
	size    int64
	openErr *pluginpb.Error
	read    func(req *pluginpb.ReadRequest) *pluginpb.ReadResponse
	entries []*pluginpb.Entry

	mu    sync.Mutex
	names []string
}

func (h *hostile) OpenSource(context.Context, *pluginpb.OpenSourceRequest) (*pluginpb.OpenSourceResponse, error) {
	return &pluginpb.OpenSourceResponse{Source: 1}, nil
}

func (h *hostile) OpenObject(_ context.Context, req *pluginpb.OpenObjectRequest) (*pluginpb.OpenObjectResponse, error) {
	h.mu.Lock()
	h.names = append(h.names, req.GetName())
	h.mu.Unlock()
	return &pluginpb.OpenObjectResponse{Object: 7, Size: h.size, Error: h.openErr}, nil
}

func (h *hostile) Read(_ context.Context, req *pluginpb.ReadRequest) (*pluginpb.ReadResponse, error) {
	return h.read(req), nil
}

func (h *hostile) List(context.Context, *pluginpb.ListRequest) (*pluginpb.ListResponse, error) {
	return &pluginpb.ListResponse{Entries: h.entries}, nil
}

// chunk answers every range with n(length) bytes of 0xEE and code.
func chunk(n func(int64) int64, code pluginpb.ErrorCode) func(*pluginpb.ReadRequest) *pluginpb.ReadResponse {
	return func(req *pluginpb.ReadRequest) *pluginpb.ReadResponse {
		resp := &pluginpb.ReadResponse{}
		for _, r := range req.GetRanges() {
			c := &pluginpb.Chunk{Data: make([]byte, n(r.GetLength()))}
			for i := range c.Data {
				c.Data[i] = 0xEE
			}
			if code != pluginpb.ErrorCode_OK {
				c.Error = &pluginpb.Error{Code: code, Message: "planted"}
			}
			resp.Chunks = append(resp.Chunks, c)
		}
		return resp
	}
}

// TestHostileReads: a plugin's answer is checked against the request, the
// arbiter being the protocol's rule that a range's answer holds exactly the
// bytes asked for (fewer only at the end of the object). Every violation is
// a permanent error and no planted byte reaches the caller's buffer.
func TestHostileReads(t *testing.T) {
	cases := []struct {
		what string
		size int64
		read func(*pluginpb.ReadRequest) *pluginpb.ReadResponse
	}{
		{"more bytes than asked", 100, chunk(func(n int64) int64 { return n + 1 }, pluginpb.ErrorCode_OK)},
		{"far more bytes than asked", 100, chunk(func(n int64) int64 { return n + 1<<20 }, pluginpb.ErrorCode_OK)},
		{"fewer bytes, no error", 100, chunk(func(n int64) int64 { return n - 1 }, pluginpb.ErrorCode_OK)},
		{"end of object inside its size", 100, chunk(func(n int64) int64 { return n - 1 }, pluginpb.ErrorCode_END_OF_OBJECT)},
		{"more bytes with end of object", 100, chunk(func(n int64) int64 { return n + 5 }, pluginpb.ErrorCode_END_OF_OBJECT)},
		{"two chunks for one range", 100, func(req *pluginpb.ReadRequest) *pluginpb.ReadResponse {
			r := chunk(func(n int64) int64 { return n }, pluginpb.ErrorCode_OK)(req)
			r.Chunks = append(r.Chunks, r.Chunks[0])
			return r
		}},
		{"no chunk", 100, func(*pluginpb.ReadRequest) *pluginpb.ReadResponse { return &pluginpb.ReadResponse{} }},
		{"unknown error code", 100, chunk(func(int64) int64 { return 0 }, pluginpb.ErrorCode(99))},
	}
	for _, c := range cases {
		t.Run(c.what, func(t *testing.T) {
			h := &hostile{size: c.size, read: c.read}
			src, err := openRemote(context.Background(), inProcess(t, h), "x://", "x://")
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			obj, err := src.Open(context.Background(), "t")
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 40)
			n, err := obj.ReadAt(context.Background(), buf, 10, source.HintData)
			if !errors.Is(err, source.ErrPermanent) {
				t.Errorf("err = %v, want ErrPermanent", err)
			}
			if n != 0 || slices.Contains(buf, 0xEE) {
				t.Errorf("read returned %d bytes / planted bytes in the buffer", n)
			}
		})
	}
}

// TestHostileOpen: a negative size is refused, and so is an end-of-object
// answer to an open.
func TestHostileOpen(t *testing.T) {
	h := &hostile{size: -5}
	src, err := openRemote(context.Background(), inProcess(t, h), "x://", "x://")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if _, err := src.Open(context.Background(), "t"); !errors.Is(err, source.ErrPermanent) {
		t.Errorf("Open with size -5: err = %v, want ErrPermanent", err)
	}
	h.openErr = &pluginpb.Error{Code: pluginpb.ErrorCode_END_OF_OBJECT}
	_, err = src.Open(context.Background(), "t")
	if !errors.Is(err, source.ErrPermanent) || errors.Is(err, io.EOF) {
		t.Errorf("Open answered with end-of-object: err = %v, want ErrPermanent only", err)
	}
}

// TestNamesCheckedBeforeSending: every name the suite's BadNames lists is
// refused by the host with ErrInvalid and never reaches the plugin.
func TestNamesCheckedBeforeSending(t *testing.T) {
	h := &hostile{size: 1}
	src, err := openRemote(context.Background(), inProcess(t, h), "x://", "x://")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	for _, name := range sourcetest.BadNames {
		if _, err := src.Open(context.Background(), name); !errors.Is(err, source.ErrInvalid) {
			t.Errorf("Open(%q): err = %v, want ErrInvalid", name, err)
		}
	}
	if len(h.names) != 0 {
		t.Errorf("the plugin was sent names %q", h.names)
	}
}

// TestHostileList: a listing is checked against the request: valid names,
// under the prefix, sorted without duplicates, sizes of -1 or more.
func TestHostileList(t *testing.T) {
	e := func(name string, size int64) *pluginpb.Entry { return &pluginpb.Entry{Name: name, Size: size} }
	cases := []struct {
		what    string
		prefix  string
		entries []*pluginpb.Entry
	}{
		{"escaping name", "", []*pluginpb.Entry{e("../etc/passwd", 1)}},
		{"absolute name", "", []*pluginpb.Entry{e("/etc/passwd", 1)}},
		{"NUL in name", "", []*pluginpb.Entry{e("a\x00b", 1)}},
		{"outside the prefix", "dir/", []*pluginpb.Entry{e("dir/a", 1), e("other/b", 1)}},
		{"unsorted", "", []*pluginpb.Entry{e("b", 1), e("a", 1)}},
		{"duplicate", "", []*pluginpb.Entry{e("a", 1), e("a", 1)}},
		{"size below -1", "", []*pluginpb.Entry{e("a", -2)}},
	}
	for _, c := range cases {
		t.Run(c.what, func(t *testing.T) {
			h := &hostile{entries: c.entries}
			src, err := openRemote(context.Background(), inProcess(t, h), "x://", "x://")
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			got, err := source.List(context.Background(), src, c.prefix)
			if !errors.Is(err, source.ErrPermanent) || got != nil {
				t.Errorf("List = %v, %v; want nil, ErrPermanent", got, err)
			}
		})
	}
}
