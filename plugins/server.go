package plugins

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	pluginpb "github.com/tbfs/tbfs/plugins/proto"
	"github.com/tbfs/tbfs/source"
)

// Server is the plugin side of the protocol: it serves the sources an
// Opener makes, handing out numbered handles for sources and objects.
type Server struct {
	pluginpb.UnimplementedSourceServer

	schemes []string
	open    source.Opener

	mu      sync.Mutex
	next    uint64
	sources map[uint64]*openSource
	objects map[uint64]*openObject
}

type openSource struct {
	src     source.Source
	objects map[uint64]bool
}

type openObject struct {
	source uint64
	obj    source.Object
}

var _ pluginpb.SourceServer = (*Server)(nil)

// NewServer returns a Server for the sources open makes for URLs of the
// given schemes (compared in lower case).
func NewServer(schemes []string, open source.Opener) *Server {
	low := make([]string, len(schemes))
	for i, s := range schemes {
		low[i] = strings.ToLower(s)
	}
	return &Server{
		schemes: low,
		open:    open,
		sources: map[uint64]*openSource{},
		objects: map[uint64]*openObject{},
	}
}

// Schemes answers the host's discovery handshake.
func (s *Server) Schemes(context.Context, *pluginpb.SchemesRequest) (*pluginpb.SchemesResponse, error) {
	return &pluginpb.SchemesResponse{Schemes: s.schemes}, nil
}

// OpenSource opens the source a URL names.
func (s *Server) OpenSource(ctx context.Context, req *pluginpb.OpenSourceRequest) (*pluginpb.OpenSourceResponse, error) {
	u, err := parseURL(req.GetUrl(), s.schemes)
	if err != nil {
		return &pluginpb.OpenSourceResponse{Error: ToError(err)}, nil
	}
	src, err := s.open(ctx, u)
	if err != nil {
		return &pluginpb.OpenSourceResponse{Error: ToError(err)}, nil
	}
	s.mu.Lock()
	s.next++
	id := s.next
	s.sources[id] = &openSource{src: src, objects: map[uint64]bool{}}
	s.mu.Unlock()
	return &pluginpb.OpenSourceResponse{Source: id}, nil
}

// CloseSource closes a source and the objects still open from it.
func (s *Server) CloseSource(_ context.Context, req *pluginpb.CloseSourceRequest) (*pluginpb.CloseSourceResponse, error) {
	s.mu.Lock()
	os, ok := s.sources[req.GetSource()]
	var objs []source.Object
	if ok {
		delete(s.sources, req.GetSource())
		for id := range os.objects {
			objs = append(objs, s.objects[id].obj)
			delete(s.objects, id)
		}
	}
	s.mu.Unlock()
	if !ok {
		return &pluginpb.CloseSourceResponse{Error: ToError(badHandle("source", req.GetSource()))}, nil
	}
	for _, o := range objs {
		_ = o.Close()
	}
	return &pluginpb.CloseSourceResponse{Error: ToError(os.src.Close())}, nil
}

// OpenObject opens one object of an open source.
func (s *Server) OpenObject(ctx context.Context, req *pluginpb.OpenObjectRequest) (*pluginpb.OpenObjectResponse, error) {
	if err := source.CheckName(req.GetName()); err != nil {
		return &pluginpb.OpenObjectResponse{Error: ToError(err)}, nil
	}
	s.mu.Lock()
	os, ok := s.sources[req.GetSource()]
	s.mu.Unlock()
	if !ok {
		return &pluginpb.OpenObjectResponse{Error: ToError(badHandle("source", req.GetSource()))}, nil
	}
	obj, err := os.src.Open(ctx, req.GetName())
	if err != nil {
		return &pluginpb.OpenObjectResponse{Error: ToError(err)}, nil
	}
	s.mu.Lock()
	if _, still := s.sources[req.GetSource()]; !still {
		s.mu.Unlock()
		_ = obj.Close()
		return &pluginpb.OpenObjectResponse{Error: ToError(source.ErrClosed)}, nil
	}
	s.next++
	id := s.next
	s.objects[id] = &openObject{source: req.GetSource(), obj: obj}
	os.objects[id] = true
	s.mu.Unlock()
	return &pluginpb.OpenObjectResponse{Object: id, Size: obj.Size(), Version: source.VersionOf(obj)}, nil
}

// CloseObject closes one object.
func (s *Server) CloseObject(_ context.Context, req *pluginpb.CloseObjectRequest) (*pluginpb.CloseObjectResponse, error) {
	s.mu.Lock()
	oo, ok := s.objects[req.GetObject()]
	if ok {
		delete(s.objects, req.GetObject())
		if os := s.sources[oo.source]; os != nil {
			delete(os.objects, req.GetObject())
		}
	}
	s.mu.Unlock()
	if !ok {
		return &pluginpb.CloseObjectResponse{Error: ToError(badHandle("object", req.GetObject()))}, nil
	}
	return &pluginpb.CloseObjectResponse{Error: ToError(oo.obj.Close())}, nil
}

// Read serves a batch of ranges of one object. Each range is answered on
// its own: a range past the end gets its bytes and END_OF_OBJECT, a failed
// range its error, and the others are unaffected.
func (s *Server) Read(ctx context.Context, req *pluginpb.ReadRequest) (*pluginpb.ReadResponse, error) {
	s.mu.Lock()
	oo, ok := s.objects[req.GetObject()]
	s.mu.Unlock()
	if !ok {
		return &pluginpb.ReadResponse{Error: ToError(badHandle("object", req.GetObject()))}, nil
	}
	var total int64
	for _, r := range req.GetRanges() {
		if r.GetLength() < 0 || r.GetLength() > MaxRangeLength {
			return &pluginpb.ReadResponse{Error: ToError(source.Invalid(
				"range length %d outside [0, %d]", r.GetLength(), MaxRangeLength))}, nil
		}
		total += r.GetLength()
	}
	if total > MaxBatchBytes {
		return &pluginpb.ReadResponse{Error: ToError(source.Invalid(
			"batch of %d bytes exceeds %d", total, MaxBatchBytes))}, nil
	}
	hint := HintFromWire(req.GetHint())
	chunks := make([]*pluginpb.Chunk, len(req.GetRanges()))
	for i, r := range req.GetRanges() {
		buf := make([]byte, r.GetLength())
		n, err := oo.obj.ReadAt(ctx, buf, r.GetOffset(), hint)
		if n < 0 || n > len(buf) {
			err = source.Permanent(fmt.Errorf("source returned %d bytes for a read of %d", n, len(buf)))
			n = 0
		}
		if n == len(buf) && err == io.EOF {
			// A read that ends exactly at the end may report io.EOF; the
			// range is complete all the same.
			err = nil
		}
		chunks[i] = &pluginpb.Chunk{Data: buf[:n], Error: ToError(err)}
	}
	return &pluginpb.ReadResponse{Chunks: chunks}, nil
}

// List lists an open source's objects under a prefix.
func (s *Server) List(ctx context.Context, req *pluginpb.ListRequest) (*pluginpb.ListResponse, error) {
	if err := source.CheckPrefix(req.GetPrefix()); err != nil {
		return &pluginpb.ListResponse{Error: ToError(err)}, nil
	}
	s.mu.Lock()
	os, ok := s.sources[req.GetSource()]
	s.mu.Unlock()
	if !ok {
		return &pluginpb.ListResponse{Error: ToError(badHandle("source", req.GetSource()))}, nil
	}
	entries, err := source.List(ctx, os.src, req.GetPrefix())
	if err != nil {
		return &pluginpb.ListResponse{Error: ToError(err)}, nil
	}
	out := make([]*pluginpb.Entry, len(entries))
	for i, e := range entries {
		out[i] = &pluginpb.Entry{Name: e.Name, Size: e.Size}
	}
	return &pluginpb.ListResponse{Entries: out}, nil
}

// Close closes every source still open; the plugin process calls it on the
// way out.
func (s *Server) Close() error {
	s.mu.Lock()
	objs, srcs := s.objects, s.sources
	s.objects, s.sources = map[uint64]*openObject{}, map[uint64]*openSource{}
	s.mu.Unlock()
	for _, o := range objs {
		_ = o.obj.Close()
	}
	for _, os := range srcs {
		_ = os.src.Close()
	}
	return nil
}

// badHandle reports a handle the plugin does not know: closed, or from a
// process that has since restarted. The host reopens on ErrClosed.
func badHandle(kind string, id uint64) error {
	return fmt.Errorf("unknown %s handle %d: %w", kind, id, source.ErrClosed)
}
