package source

import (
	"context"
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
		return nil, &Error{Op: "open source", Err: Invalid("bad source URL: %v", err)}
	}
	if u.Scheme == "" {
		return nil, &Error{Op: "open source", Err: Invalid("source URL %q has no scheme", rawURL)}
	}
	u.Scheme = strings.ToLower(u.Scheme)
	return u, nil
}

// Redact returns u as text with any password or secret query parameters
// replaced, fit for error messages and logs.
func Redact(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := *u
	if c.User != nil {
		c.User = url.User(c.User.Username())
	}
	q := c.Query()
	changed := false
	for k := range q {
		lk := strings.ToLower(k)
		if strings.Contains(lk, "secret") || strings.Contains(lk, "token") ||
			strings.Contains(lk, "password") || strings.Contains(lk, "key") ||
			strings.Contains(lk, "signature") || strings.Contains(lk, "credential") {
			q.Set(k, "REDACTED")
			changed = true
		}
	}
	if changed {
		c.RawQuery = q.Encode()
	}
	return c.String()
}
