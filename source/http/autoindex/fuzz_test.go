package autoindex_test

import (
	"fmt"
	"html"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/http/autoindex"
)

// FuzzParse: no page makes Parse panic, and what it returns for any page
// is a listing an object store could hold: names sorted, unique, each one
// valid element of an object name. The committed corpus
// (testdata/fuzz/FuzzParse) holds pages the real servers wrote for the
// fixture tree of servers_test.go.
//
//	go test ./source/http/autoindex -run '^$' -fuzz FuzzParse
func FuzzParse(f *testing.F) {
	f.Add(`<title>Index of /</title><a href="../">../</a><a href="a%20b">a b</a>`, "http://127.0.0.1:1/")
	f.Add(`<title>Index of /d</title><a href="?C=N;O=D">Name</a><a href="/">Parent Directory</a><a href="./:x">:x</a>`, "http://h/d/")
	f.Fuzz(func(t *testing.T, page, dir string) {
		u, err := url.Parse(dir)
		if err != nil || !strings.HasSuffix(u.Path, "/") {
			return
		}
		got, err := autoindex.Parse(strings.NewReader(page), u)
		if err != nil {
			return
		}
		for i, e := range got {
			if strings.Contains(e.Name, "/") || source.CheckName(e.Name) != nil {
				t.Errorf("entry %q is no element of an object name", e.Name)
			}
			if i > 0 && got[i-1].Name >= e.Name {
				t.Errorf("entries %q, %q are not sorted and unique", got[i-1].Name, e.Name)
			}
		}
		again, err := autoindex.Parse(strings.NewReader(page), u)
		if err != nil || !slices.Equal(again, got) {
			t.Errorf("a second parse gave %v, %v; the first %v", again, err, got)
		}
	})
}

// FuzzNames: any set of file names, written into an index page the way
// each server escapes them (links percent-encoded, RFC 3986, fully as nginx
// and lighttpd do or only where needed as Apache does; text HTML-escaped,
// by name or by number), parses back to exactly those names; a sort link,
// the parent link and a link to another host beside them change nothing.
func FuzzNames(f *testing.F) {
	f.Add("KQvK.rtbw\nwdl\x00/\na b&c<d>\"e%41.rtbw")
	f.Add(":colon\nit's #x?y;z\n\u00fcn\u00ef\n+plus+")
	f.Fuzz(func(t *testing.T, lines string) {
		want := map[string]bool{}
		for _, l := range strings.Split(lines, "\n") {
			name, dir := strings.CutSuffix(strings.ReplaceAll(l, "\x00", ""), "/")
			if name == "" || strings.Contains(name, "/") || source.CheckName(name) != nil {
				continue
			}
			if d, seen := want[name]; seen && d != dir {
				continue
			}
			want[name] = dir
		}
		var entries []autoindex.Entry
		for n, d := range want {
			entries = append(entries, autoindex.Entry{Name: n, Dir: d})
		}
		slices.SortFunc(entries, func(a, b autoindex.Entry) int { return strings.Compare(a.Name, b.Name) })
		dir, _ := url.Parse("http://127.0.0.1:8080/tables/sub%20dir/")
		for _, style := range []indexStyle{fullEscapes, apacheEscapes} {
			page := writeIndex(style, "/tables/sub dir/", entries)
			got, err := autoindex.Parse(strings.NewReader(page), dir)
			if err != nil {
				t.Fatalf("style %d: %v\n%s", style, err, page)
			}
			if !slices.Equal(got, entries) && !(len(got) == 0 && len(entries) == 0) {
				t.Fatalf("style %d: got %+v, want %+v\n%s", style, got, entries, page)
			}
		}
	})
}

type indexStyle int

const (
	// fullEscapes percent-encodes every byte outside RFC 3986's
	// unreserved set and writes HTML entities by number (lighttpd).
	fullEscapes indexStyle = iota
	// apacheEscapes encodes only what would change the link's meaning
	// and escapes & < > " by name (Apache's ap_escape_uri, ap_escape_html),
	// with "./" before a name holding a colon.
	apacheEscapes
)

// writeIndex writes an index page of entries in the given style.
func writeIndex(style indexStyle, path string, entries []autoindex.Entry) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<html><head><title>Index of %s</title></head><body><h1>Index of %s</h1>\n", html.EscapeString(path), html.EscapeString(path))
	b.WriteString(`<a href="?C=N;O=D">Name</a> <a href="../">Parent Directory</a> <a href="http://example.org/x">elsewhere</a>` + "\n")
	for _, e := range entries {
		href, text := escapeName(style, e.Name), e.Name
		if e.Dir {
			href, text = href+"/", text+"/"
		}
		fmt.Fprintf(&b, "<a href=\"%s\">%s</a> 2026-12-08 00:27 -\n", escapeHTML(style, href), escapeHTML(style, text))
	}
	b.WriteString("</body></html>\n")
	return b.String()
}

func escapeName(style indexStyle, name string) string {
	if style == fullEscapes {
		var b strings.Builder
		for i := 0; i < len(name); i++ {
			c := name[i]
			if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~", c) >= 0 {
				b.WriteByte(c)
			} else {
				fmt.Fprintf(&b, "%%%02X", c)
			}
		}
		return b.String()
	}
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`%?#"<>`, c) >= 0 {
			fmt.Fprintf(&b, "%%%02x", c)
		} else {
			b.WriteByte(c)
		}
	}
	if strings.Contains(name, ":") {
		return "./" + b.String()
	}
	return b.String()
}

func escapeHTML(style indexStyle, s string) string {
	if style == apacheEscapes {
		return html.EscapeString(s)
	}
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`&<>"'`, r) {
			fmt.Fprintf(&b, "&#x%X;", r)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}
