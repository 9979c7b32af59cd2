package http

import (
	"net/url"
	"testing"

	"github.com/tbfs/tbfs/source"
)

// FuzzObjectURL: for every valid name, the request URL parses back to the
// base path, one slash and exactly that name, so the server is asked for
// that object and no other.
func FuzzObjectURL(f *testing.F) {
	bases := []string{"http://h/", "http://h", "http://h/mirror/t", "http://h/m%20x/"}
	var srcs []*Source
	for _, b := range bases {
		src, err := New(b, Options{})
		if err != nil {
			f.Fatal(err)
		}
		srcs = append(srcs, src)
	}
	for i, s := range []string{"a", "dir/b.bin", "%41", "a?b#c", "with space", "é/+&=;", "a%2Fb", ".../x"} {
		f.Add(uint8(i), s)
	}
	f.Fuzz(func(t *testing.T, which uint8, name string) {
		if source.CheckName(name) != nil {
			return
		}
		src := srcs[int(which)%len(srcs)]
		u, err := url.Parse(src.objectURL(name))
		if err != nil {
			t.Fatalf("objectURL(%q) does not parse: %v", name, err)
		}
		want := src.base.Path
		if want == "" || want[len(want)-1] != '/' {
			want += "/"
		}
		if u.Path != want+name || u.RawQuery != "" || u.Fragment != "" {
			t.Fatalf("objectURL(%q) = %q: path %q, want %q", name, u, u.Path, want+name)
		}
	})
}
