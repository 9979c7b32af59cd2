// Package autoindex reads the directory index pages web servers generate
// for a folder without an index file (nginx's autoindex, Apache httpd's
// mod_autoindex in its plain and fancy forms, lighttpd's mod_dirlisting)
// as the list of the names in that folder, so a plain HTTP mirror can be
// listed without a listing file of its own.
//
// A page counts as an index of the folder asked for only when its title is
// "Index of PATH" (what all three servers write) and PATH is the folder's
// path as the server sees it: the folder's own URL path, or its tail, for a
// mirror behind a proxy that mounts it under a prefix. Any other page (an
// index.html of the site's own, an error page) is ErrNotIndex, since
// reading its links as the folder's contents would make the folder's real
// files look missing.
//
// The names are the links of the page that lead to a direct child of the
// folder, as they resolve against the folder's URL: percent-encoding is
// undone element by element (so "%2F" never splits a name), HTML entities
// by the HTML tokenizer; links to the parent, to the folder itself, sort
// links (any link with a query), fragments, other hosts and deeper paths
// are not names. Sizes and dates are left alone: most formats round them
// ("1.2M"), and the object's size is what a ranged GET says.
package autoindex

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"sort"
	"strings"

	"golang.org/x/net/html"

	"github.com/tbfs/tbfs/source"
)

// ErrNotIndex means a page is not a directory index of the folder it was
// served for.
var ErrNotIndex = errors.New("not a directory index page")

// maxToken bounds the bytes one HTML token may take, so a hostile page
// cannot make the tokenizer buffer without limit.
const maxToken = 1 << 20

// Entry is one name an index page lists.
type Entry struct {
	// Name is one element of an object name: never empty, ".", ".." and
	// never holding a slash.
	Name string
	// Dir reports a folder (its link ends in a slash).
	Dir bool
}

// Parse reads page, served for the folder at dir (whose path ends in a
// slash), and returns the folder's entries sorted by name. A page that is
// not an index of that folder is ErrNotIndex; a link that does not parse as
// a URL, a name listed both as a file and as a folder, or a page that sets
// its own base URL is an error, since the names it gives cannot be trusted
// to be the folder's.
func Parse(page io.Reader, dir *url.URL) ([]Entry, error) {
	if !strings.HasSuffix(dir.Path, "/") {
		return nil, fmt.Errorf("autoindex: folder URL %q does not end in a slash", dir.Redacted())
	}
	title, hrefs, err := scan(page)
	if err != nil {
		return nil, err
	}
	if err := checkTitle(title, dir); err != nil {
		return nil, err
	}
	dirElems, err := elements(dir.EscapedPath())
	if err != nil {
		return nil, fmt.Errorf("autoindex: folder URL: %w", err)
	}
	seen := map[string]bool{} // name -> is a folder
	var out []Entry
	for _, href := range hrefs {
		e, ok, err := child(dir, dirElems, href)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if isDir, dup := seen[e.Name]; dup {
			if isDir != e.Dir {
				return nil, fmt.Errorf("autoindex: %q is listed both as a file and as a folder", e.Name)
			}
			continue
		}
		seen[e.Name] = e.Dir
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// scan tokenizes the page and returns the text of its first title and
// every link target, entities decoded.
func scan(page io.Reader) (title string, hrefs []string, err error) {
	z := html.NewTokenizer(page)
	z.SetMaxBuf(maxToken)
	var b strings.Builder
	inTitle, titled := false, false
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			if err := z.Err(); err != io.EOF {
				return "", nil, fmt.Errorf("autoindex: reading the page: %w", err)
			}
			return b.String(), hrefs, nil
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			switch string(name) {
			case "title":
				inTitle = tt == html.StartTagToken && !titled
			case "base":
				return "", nil, errors.New("autoindex: the page sets a base URL of its own")
			case "a":
				for hasAttr {
					var key, val []byte
					key, val, hasAttr = z.TagAttr()
					if string(key) == "href" {
						hrefs = append(hrefs, string(val))
						break
					}
				}
			}
		case html.EndTagToken:
			if name, _ := z.TagName(); string(name) == "title" && inTitle {
				inTitle, titled = false, true
			}
		case html.TextToken:
			if inTitle {
				b.Write(z.Text())
			}
		}
	}
}

// checkTitle accepts a title "Index of PATH" whose PATH names dir: its
// elements are dir's path elements, or their tail.
func checkTitle(title string, dir *url.URL) error {
	path, ok := strings.CutPrefix(strings.TrimSpace(title), "Index of ")
	if !ok {
		return fmt.Errorf("%w: its title is %q", ErrNotIndex, truncate(title))
	}
	var got []string
	for e := range strings.SplitSeq(path, "/") {
		if e != "" {
			got = append(got, e)
		}
	}
	want, err := elements(dir.EscapedPath())
	if err != nil {
		return fmt.Errorf("autoindex: folder URL: %w", err)
	}
	if len(got) > len(want) {
		return fmt.Errorf("%w: it is the index of %q, not of %q", ErrNotIndex, truncate(path), dir.Path)
	}
	for i, e := range got {
		if want[len(want)-len(got)+i] != e {
			return fmt.Errorf("%w: it is the index of %q, not of %q", ErrNotIndex, truncate(path), dir.Path)
		}
	}
	return nil
}

// elements splits an escaped URL path into its unescaped elements, leaving
// out the empty ones at either end.
func elements(escaped string) ([]string, error) {
	parts := strings.Split(strings.Trim(escaped, "/"), "/")
	if len(parts) == 1 && parts[0] == "" {
		return nil, nil
	}
	out := make([]string, len(parts))
	for i, p := range parts {
		e, err := url.PathUnescape(p)
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

// child resolves one link against the folder and reports the entry it
// names, with ok false for a link that names no direct child.
func child(dir *url.URL, dirElems []string, href string) (Entry, bool, error) {
	ref, err := url.Parse(strings.TrimSpace(href))
	if err != nil {
		return Entry{}, false, fmt.Errorf("autoindex: link %q: %w", truncate(href), err)
	}
	if ref.RawQuery != "" || ref.ForceQuery || ref.Fragment != "" || ref.Opaque != "" {
		return Entry{}, false, nil // sort links, anchors, mailto: and the like
	}
	abs := dir.ResolveReference(ref)
	if !strings.EqualFold(abs.Scheme, dir.Scheme) || !strings.EqualFold(abs.Host, dir.Host) {
		return Entry{}, false, nil
	}
	escaped := abs.EscapedPath()
	isDir := strings.HasSuffix(escaped, "/")
	elems, err := elements(escaped)
	if err != nil {
		return Entry{}, false, fmt.Errorf("autoindex: link %q: %w", truncate(href), err)
	}
	if len(elems) != len(dirElems)+1 {
		return Entry{}, false, nil // the folder itself, its parent, or deeper
	}
	for i, e := range dirElems {
		if elems[i] != e {
			return Entry{}, false, nil
		}
	}
	name := elems[len(dirElems)]
	if strings.Contains(name, "/") || source.CheckName(name) != nil {
		// No file can have this name, so no object is missed by
		// leaving it out.
		return Entry{}, false, nil
	}
	return Entry{Name: name, Dir: isDir}, true, nil
}

// truncate shortens s for an error message.
func truncate(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
