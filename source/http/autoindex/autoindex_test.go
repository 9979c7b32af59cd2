package autoindex_test

import (
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/source/http/autoindex"
)

// TestParse: which pages are indexes of the folder asked for, and which
// links are its names. Arbiters: RFC 3986 (reference resolution, percent-
// encoding, "%2F" is no separator), the HTML tokenizer's entity decoding,
// and the package's rule that a page is an index only when its title says
// it is one of this folder.
func TestParse(t *testing.T) {
	const head = "<html><head><title>Index of /t/d/</title></head><body>"
	file := func(n string) autoindex.Entry { return autoindex.Entry{Name: n} }
	folder := func(n string) autoindex.Entry { return autoindex.Entry{Name: n, Dir: true} }
	cases := []struct {
		name    string
		dir     string
		page    string
		want    []autoindex.Entry
		wantErr error // nil: any error at all when wantAny
		wantAny bool
	}{
		{"names and folders", "http://h/t/d/", head + `<a href="b.rtbw">b</a><a href="a/">a/</a>`,
			[]autoindex.Entry{folder("a"), file("b.rtbw")}, nil, false},
		{"parent, self, sort, fragment, other host, deeper, mailto", "http://h/t/d/",
			head + `<a href="../">..</a><a href="/t/">up</a><a href="./">.</a><a href="">self</a><a href="?C=N;O=D">Name</a>` +
				`<a href="#top">top</a><a href="x#y">x</a><a href="http://other/t/d/z">z</a><a href="sub/deeper">d</a><a href="mailto:a@b">m</a>`,
			nil, nil, false},
		{"absolute link to a child counts", "http://h/t/d/", head + `<a href="/t/d/KQvK.rtbw">k</a><a href="http://H/t/d/c">c</a>`,
			[]autoindex.Entry{file("KQvK.rtbw"), file("c")}, nil, false},
		{"entities and percent-encoding undone once", "http://h/t/d/", head + `<a href="a%20b&amp;c%2541">x</a>`,
			[]autoindex.Entry{file("a b&c%41")}, nil, false},
		{"an escaped slash is no separator, and no file can be named with it", "http://h/t/d/", head + `<a href="a%2Fb">x</a>`,
			nil, nil, false},
		{"dot segments resolve", "http://h/t/d/", head + `<a href="./:colon">x</a><a href="../d/y">y</a>`,
			[]autoindex.Entry{file(":colon"), file("y")}, nil, false},
		{"duplicates kept once", "http://h/t/d/", head + `<a href="a">a</a><a href="a">icon</a>`,
			[]autoindex.Entry{file("a")}, nil, false},
		{"a title naming the tail of the path (a proxy's prefix)", "http://h/mirror/t/d/", head + `<a href="a">a</a>`,
			[]autoindex.Entry{file("a")}, nil, false},
		{"title without the trailing slash (Apache)", "http://h/t/d/", `<title>Index of /t/d</title><a href="a">a</a>`,
			[]autoindex.Entry{file("a")}, nil, false},
		{"the root", "http://h/", `<title>Index of /</title><a href="a">a</a>`,
			[]autoindex.Entry{file("a")}, nil, false},
		{"title names an escaped folder by its name", "http://h/sub%20dir/", `<title>Index of /sub dir/</title><a href="a">a</a>`,
			[]autoindex.Entry{file("a")}, nil, false},
		{"a page of the site's own", "http://h/t/d/", `<title>Our tables</title><a href="a">a</a>`, nil, autoindex.ErrNotIndex, false},
		{"no title", "http://h/t/d/", `<a href="a">a</a>`, nil, autoindex.ErrNotIndex, false},
		{"the index of another folder", "http://h/t/d/", `<title>Index of /t/e/</title><a href="a">a</a>`, nil, autoindex.ErrNotIndex, false},
		{"the index of a deeper folder", "http://h/d/", `<title>Index of /t/d/</title><a href="a">a</a>`, nil, autoindex.ErrNotIndex, false},
		{"a base URL of its own", "http://h/t/d/", head + `<base href="http://h/x/"><a href="a">a</a>`, nil, nil, true},
		{"a link that is no URL", "http://h/t/d/", head + `<a href="a%zz">a</a>`, nil, nil, true},
		{"a name both a file and a folder", "http://h/t/d/", head + `<a href="a">a</a><a href="a/">a/</a>`, nil, nil, true},
		{"links inside a script are no links", "http://h/t/d/", head + `<script>var s = '<a href="x">x</a>';</script><a href="a">a</a>`,
			[]autoindex.Entry{file("a")}, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, err := url.Parse(c.dir)
			if err != nil {
				t.Fatal(err)
			}
			got, err := autoindex.Parse(strings.NewReader(c.page), dir)
			switch {
			case c.wantErr != nil:
				if !errors.Is(err, c.wantErr) {
					t.Errorf("err = %v, want %v", err, c.wantErr)
				}
			case c.wantAny:
				if err == nil {
					t.Errorf("got %+v, want an error", got)
				}
			case err != nil:
				t.Errorf("err = %v", err)
			case !slices.Equal(got, c.want):
				t.Errorf("got %+v, want %+v", got, c.want)
			}
		})
	}
	if _, err := autoindex.Parse(strings.NewReader(""), &url.URL{Scheme: "http", Host: "h", Path: "/d"}); err == nil {
		t.Error("a folder URL without a trailing slash was accepted")
	}
}
