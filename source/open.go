package source

import (
	"context"
	"errors"
	"net/url"
	"sort"
	"strings"
	"sync"
)

// Opener makes a Source for a parsed URL of the scheme it was registered for.
type Opener func(ctx context.Context, u *url.URL) (Source, error)

var (
	registryMu sync.RWMutex
	registry   = map[string]Opener{}
)

// Register makes a transport available to Open under scheme (lower case,
// without "://"). Transports register themselves from init; plugins register
// the schemes they serve when they are discovered. Registering a scheme twice
// replaces the earlier opener.
func Register(scheme string, open Opener) {
	registryMu.Lock()
	defer registryMu.Unlock()
	registry[strings.ToLower(scheme)] = open
}

// Schemes lists the registered URL schemes, sorted.
func Schemes() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	out := make([]string, 0, len(registry))
	for s := range registry {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// Open returns the source that rawURL names. A plain path (absolute or
// relative) is a local directory and is served by the "file" transport;
// "file://", "s3://bucket/prefix", "http://" and "https://" pick their
// transports, and any other scheme the transport or plugin registered for it.
// An unknown scheme is an ErrInvalid error that lists the known ones.
func Open(ctx context.Context, rawURL string) (Source, error) {
	u, err := ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	registryMu.RLock()
	open, ok := registry[u.Scheme]
	registryMu.RUnlock()
	if !ok {
		return nil, &Error{Op: "open source", URL: Redact(u), Err: Invalid(
			"unknown scheme %q (known: %s)", u.Scheme, strings.Join(Schemes(), ", "))}
	}
	return open(ctx, u)
}

// ParseURL parses a source location. Strings without a scheme are local
// paths and come back as file URLs; Windows-style drive letters are not
// supported. The scheme is lower-cased.
func ParseURL(rawURL string) (*url.URL, error) {
	if rawURL == "" {
		return nil, &Error{Op: "open source", Err: Invalid("empty source URL")}
	}
	if strings.ContainsRune(rawURL, 0) {
		return nil, &Error{Op: "open source", Err: Invalid("source URL contains NUL")}
	}
	if !strings.Contains(rawURL, "://") {
		return &url.URL{Scheme: "file", Path: rawURL}, nil
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		// url.Parse quotes the whole URL in its error, credentials included;
		// keep only the reason.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, &Error{Op: "open source", URL: RedactURL(rawURL), Err: Invalid("bad source URL: %v", err)}
	}
	if u.Scheme == "" {
		return nil, &Error{Op: "open source", URL: Redact(u), Err: Invalid("source URL has no scheme")}
	}
	u.Scheme = strings.ToLower(u.Scheme)
	return u, nil
}
