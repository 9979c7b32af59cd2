package http

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/http/autoindex"
)

// This file lists a mirror without a manifest from the directory index
// pages its server generates (package autoindex): one GET a folder, each
// folder's subfolders asked for as soon as its page is in.

const (
	// maxIndexBytes bounds one index page, as the manifest is bounded.
	maxIndexBytes = 64 << 20
	// maxIndexFolders and maxIndexDepth bound one listing, so folders
	// that link in a loop (a symbolic link to a parent, which servers
	// follow) end in an error after a bounded number of requests; table
	// sets keep their thousands of files in a few folders.
	maxIndexFolders = 1024
	maxIndexDepth   = 16
	// indexFetches is how many index pages are asked for at once.
	indexFetches = 8
)

// errNoManifest means the mirror publishes no manifest.
var errNoManifest = errors.New("no manifest")

// listAll returns every object of the mirror, sorted by name: the
// manifest's entries when the mirror publishes one, else those its
// directory index pages show. The manifest and the first index page are
// asked for together, so a mirror without a manifest pays no round trip for
// looking; the folders below are read only once the manifest is known to
// be missing, so a mirror with one pays a single request for the index.
func (s *Source) listAll(ctx context.Context) ([]source.Entry, error) {
	ictx, cancel := context.WithCancel(ctx)
	defer cancel()
	type page struct {
		entries []autoindex.Entry
		err     error
	}
	root := make(chan page, 1)
	go func() {
		e, err := s.fetchIndex(ictx, "")
		root <- page{e, err}
	}()
	entries, err := s.loadManifest(ctx)
	if !errors.Is(err, errNoManifest) {
		cancel()
		<-root
		return entries, err
	}
	p := <-root
	if p.err != nil {
		if errors.Is(p.err, source.ErrUnsupported) {
			return nil, fmt.Errorf("the mirror publishes no %s, and %w", s.manifest, p.err)
		}
		return nil, p.err
	}
	return s.walkIndex(ctx, p.entries)
}

// walkIndex lists every object below the root, whose index page gave
// first, reading the page of every folder found.
func (s *Source) walkIndex(ctx context.Context, first []autoindex.Entry) ([]source.Entry, error) {
	g, gctx := errgroup.WithContext(ctx)
	sem := make(chan struct{}, indexFetches)
	var mu sync.Mutex
	var out []source.Entry
	folders := 1
	var add func(dir string, depth int, entries []autoindex.Entry) error
	add = func(dir string, depth int, entries []autoindex.Entry) error {
		mu.Lock()
		defer mu.Unlock()
		for _, e := range entries {
			name := dir + e.Name
			if !e.Dir {
				if name != s.manifest {
					out = append(out, source.Entry{Name: name, Size: -1})
				}
				continue
			}
			if depth+1 > maxIndexDepth || folders >= maxIndexFolders {
				return fmt.Errorf("%w: the index pages go deeper than %d folders or hold more than %d (%s); a folder may link to its parent",
					source.ErrUnsupported, maxIndexDepth, maxIndexFolders, name+"/")
			}
			folders++
			sub := name + "/"
			g.Go(func() error {
				select {
				case sem <- struct{}{}:
				case <-gctx.Done():
					return gctx.Err()
				}
				entries, err := s.fetchIndex(gctx, sub)
				<-sem
				if err != nil {
					return err
				}
				return add(sub, depth+1, entries)
			})
		}
		return nil
	}
	if err := add("", 0, first); err != nil {
		g.Wait()
		return nil, err
	}
	if err := g.Wait(); err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr
		}
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	if out == nil {
		out = []source.Entry{}
	}
	return out, nil
}

// folderURL is the URL of folder dir ("" for the mirror's root, else a
// path ending in a slash), ending in a slash as servers want it.
func (s *Source) folderURL(dir string) *url.URL {
	var elems []string
	for e := range strings.SplitSeq(strings.TrimSuffix(dir, "/"), "/") {
		if e != "" {
			elems = append(elems, url.PathEscape(e))
		}
	}
	u := s.base.JoinPath(elems...)
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
		if u.RawPath != "" {
			u.RawPath += "/"
		}
	}
	return u
}

// fetchIndex asks for the index page of folder dir and returns what it
// lists. A folder the server shows no index of (none generated, another
// page in its place, a redirect elsewhere) is source.ErrUnsupported: the
// mirror then cannot be listed, and lookups ask for each name.
func (s *Source) fetchIndex(ctx context.Context, dir string) ([]autoindex.Entry, error) {
	u := s.folderURL(dir)
	where := "/"
	if dir != "" {
		where = dir
	}
	noIndex := func(why string, a ...any) error {
		return fmt.Errorf("%w: the server shows no index of folder %s: %s", source.ErrUnsupported, where, fmt.Sprintf(why, a...))
	}
	rctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, source.Invalid("cannot build request: %v", err)
	}
	req.Header.Set("Accept", "text/html")
	req.Header.Set("Accept-Encoding", "identity")
	answered := source.ObserveRequest(ctx)
	resp, err := s.client.Do(req)
	answered()
	if err != nil {
		return nil, s.netErr(ctx, err)
	}
	defer drain(resp.Body)
	switch c := resp.StatusCode; {
	case c == http.StatusOK:
	case c == http.StatusRequestTimeout || c == http.StatusTooEarly || c == http.StatusTooManyRequests || c >= 500:
		return nil, statusErr(resp) // may answer when asked again
	default:
		// Refused (403 where indexes are off), missing, or not a page
		// at all: there is no index to read.
		return nil, noIndex("it answered %s", resp.Status)
	}
	if resp.Request != nil && resp.Request.URL.Path != u.Path {
		return nil, noIndex("it sent %s instead", source.Redact(resp.Request.URL))
	}
	if ce := resp.Header.Get("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
		return nil, noIndex("it sent the page with Content-Encoding %q", ce)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxIndexBytes+1))
	if err != nil {
		return nil, s.netErr(ctx, err)
	}
	if len(body) > maxIndexBytes {
		return nil, noIndex("its page is larger than %d bytes", maxIndexBytes)
	}
	if resp.ContentLength >= 0 && int64(len(body)) != resp.ContentLength {
		return nil, source.Transient(fmt.Errorf("index of %s: body ended early: %w", where, io.ErrUnexpectedEOF))
	}
	entries, err := autoindex.Parse(bytes.NewReader(body), u)
	if err != nil {
		return nil, noIndex("%v", err)
	}
	return entries, nil
}
