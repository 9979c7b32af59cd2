// Package source is the one seam between table readers and the places tables
// are stored. A Source is a read-only store of named objects; an Object is one
// of them, read by byte range. Nothing above this package knows whether the
// bytes come from a local file, an S3 bucket, an HTTP mirror or a plugin.
//
// Cross-cutting behaviour (caching, retry, counters) is provided by sources
// that wrap a source, never by flags on the readers.
package source

import (
	"context"
	"io"
	"io/fs"
)

// Hint is an advisory tag that says what a read is for. A transport may use it
// to keep the hot parts of large tables (headers and block indexes) on faster
// storage or in a pinned cache; it must never change what a read returns.
type Hint uint8

const (
	// HintData marks a read of table payload, typically one compressed block.
	HintData Hint = iota
	// HintHeader marks a read of a file header, read once per open table.
	HintHeader
	// HintIndex marks a read of a block-offset table or similar index.
	HintIndex
)

// String returns the hint's lower-case name.
func (h Hint) String() string {
	switch h {
	case HintData:
		return "data"
	case HintHeader:
		return "header"
	case HintIndex:
		return "index"
	}
	return "unknown"
}

// Source is a read-only store of named objects.
//
// Names are slash-separated paths relative to the source's root, as accepted
// by CheckName; a source must reject every other name with ErrInvalid and must
// never read outside its root. Implementations are safe for concurrent use.
type Source interface {
	// Open returns the named object. It fails with an error matching
	// ErrNotFound when no such object exists, ErrInvalid for a bad name,
	// and ErrTransient or ErrPermanent when the transport fails.
	Open(ctx context.Context, name string) (Object, error)

	// Close releases the source. Objects opened from it must not be used
	// afterwards; a Close that races with reads in flight either waits for
	// them or makes them fail cleanly, never crash.
	Close() error
}

// Object is one named object of a Source. Its size does not change while it
// is open. Implementations are safe for concurrent use.
type Object interface {
	// Size is the object's length in bytes.
	Size() int64

	// ReadAt reads len(p) bytes starting at byte off, with the contract of
	// io.ReaderAt: when it returns n < len(p) it also returns a non-nil
	// error; a read that reaches the end of the object returns the bytes
	// that exist and io.EOF; parallel calls are allowed. An offset below 0
	// or above Size fails with ErrInvalid and reads nothing. ReadAt honours
	// ctx cancellation. A read never returns bytes from any other range
	// than the one asked for.
	ReadAt(ctx context.Context, p []byte, off int64, hint Hint) (n int, err error)

	// Close releases the object. Reads in flight finish or fail cleanly.
	Close() error
}

// Versioned is implemented by objects that can name the version of the
// content they serve (an ETag, say). The name changes whenever the content
// does, so a cache that outlives the object, such as one on disk, can tell
// blocks of a replaced object from current ones.
type Versioned interface {
	// Version names the version Open saw; "" when the transport cannot
	// tell.
	Version() string
}

// VersionOf returns obj's version, or "" when it has none.
func VersionOf(obj Object) string {
	if v, ok := obj.(Versioned); ok {
		return v.Version()
	}
	return ""
}

// Prefixed is implemented by objects whose Open fetched their first bytes
// along with the size and version (the remote transports do, so opening a
// table and reading its header is one request). Counters use it to tell
// reads that cost a request from reads answered by those bytes.
type Prefixed interface {
	// PrefixLen is how many bytes Open fetched.
	PrefixLen() int64
	// Holds reports whether a read of n bytes at off would be answered
	// from bytes the object holds, with no request.
	Holds(off int64, n int) bool
}

// Prefetcher is implemented by objects that can fetch a range ahead of the
// reads that will want it, such as a cache: a reader that knows it will soon
// read several ranges asks for all of them at once, so their requests travel
// together instead of one after another. Prefetching never changes what a
// read returns.
type Prefetcher interface {
	// Prefetch fetches the n bytes at off (clipped to the object) into
	// wherever later reads look first, and returns once they are there or
	// the fetch failed.
	Prefetch(ctx context.Context, off int64, n int, hint Hint) error
}

// Prefetch asks obj to fetch a range ahead of its reads; it does nothing for
// an object that cannot (a memory-mapped file needs no such help).
func Prefetch(ctx context.Context, obj Object, off int64, n int, hint Hint) error {
	if p, ok := obj.(Prefetcher); ok {
		return p.Prefetch(ctx, off, n, hint)
	}
	return nil
}

// Entry describes one object found by a Lister.
type Entry struct {
	// Name is the object's name, usable with Source.Open.
	Name string
	// Size is the object's length in bytes, or -1 when the listing does
	// not say.
	Size int64
	// Mode holds the object's permission bits where the source has them
	// (a local file), and is 0 where it does not: a front end that shows
	// the object never grants more than these.
	Mode fs.FileMode
}

// Lister is implemented by sources that can enumerate their objects.
type Lister interface {
	// List returns the objects whose names start with prefix, sorted by
	// name. An empty prefix lists everything. A prefix that matches no
	// object gives an empty list, not an error.
	List(ctx context.Context, prefix string) ([]Entry, error)
}

// List enumerates src's objects under prefix, failing with ErrUnsupported
// when the source cannot list.
func List(ctx context.Context, src Source, prefix string) ([]Entry, error) {
	l, ok := src.(Lister)
	if !ok {
		return nil, &Error{Op: "list", Name: prefix, Err: ErrUnsupported}
	}
	return l.List(ctx, prefix)
}

// ReadAll reads the whole object; meant for small objects such as manifests.
func ReadAll(ctx context.Context, obj Object, hint Hint) ([]byte, error) {
	buf := make([]byte, obj.Size())
	n, err := obj.ReadAt(ctx, buf, 0, hint)
	if err == io.EOF && n == len(buf) {
		err = nil
	}
	return buf[:n], err
}
