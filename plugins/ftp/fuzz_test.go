package ftp

import (
	"net/url"
	"path"
	"strings"
	"testing"
)

// FuzzNewSource: whatever URL is given, an accepted one yields an absolute,
// clean root without control characters, and every valid object name maps
// to a path strictly under that root. The arbiter is path.Clean: a path it
// would change could step outside the root.
func FuzzNewSource(f *testing.F) {
	for _, s := range []string{
		"ftp://host/", "ftp://u:p@host:2121/pub/tables/", "ftp://host/../../etc",
		"ftp://host/a%2F..%2F..", "ftp://host/%0d%0aDELE x", "ftp://u%0a:p@host/",
		"ftp://[::1]:21/x", "ftp://host/a/./b//c", "ftp:opaque", "ftp://:21/",
	} {
		f.Add(s)
	}
	names := []string{"a", "dir/b.bin", "with space", "x..y", "é"}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		s, err := newSource(u)
		if err != nil {
			return
		}
		if s.root != "" && (!strings.HasPrefix(s.root, "/") || path.Clean(s.root) != s.root) {
			t.Fatalf("root %q from %q is not absolute and clean", s.root, raw)
		}
		if strings.ContainsAny(s.root+s.user+s.pass, "\r\n\x00") {
			t.Fatalf("control character survived in %q", raw)
		}
		if s.addr == "" {
			t.Fatalf("no address from %q", raw)
		}
		for _, n := range names {
			p := s.path(n)
			if path.Clean(p) != p || !strings.HasPrefix(p, s.root+"/") {
				t.Fatalf("name %q maps to %q, not under root %q", n, p, s.root)
			}
		}
	})
}
