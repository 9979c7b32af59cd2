package httprange

import "testing"

// TestParse: rows from the Content-Range grammar of RFC 9110, section 14.4.
func TestParse(t *testing.T) {
	cases := []struct {
		h                  string
		first, last, total int64
		bad                bool
	}{
		{h: "bytes 0-0/1", first: 0, last: 0, total: 1},
		{h: "bytes 42-1233/1234", first: 42, last: 1233, total: 1234},
		{h: "bytes 5-9/*", first: 5, last: 9, total: -1},
		{h: "bytes */1234", bad: true},
		{h: "bytes 9-5/10", bad: true},
		{h: "bytes 0-9/9", bad: true},
		{h: "bytes -1-5/10", bad: true},
		{h: "bytes +1-5/10", bad: true},
		{h: "bytes 1-+5/10", bad: true},
		{h: "items 0-1/2", bad: true},
		{h: "bytes 0-1", bad: true},
		{h: "", bad: true},
		{h: "bytes 0-99999999999999999999/1", bad: true},
	}
	for _, c := range cases {
		f, l, tot, err := Parse(c.h)
		if c.bad {
			if err == nil {
				t.Errorf("Parse(%q) accepted it", c.h)
			}
			continue
		}
		if err != nil || f != c.first || l != c.last || tot != c.total {
			t.Errorf("Parse(%q) = %d, %d, %d, %v; want %d, %d, %d", c.h, f, l, tot, err, c.first, c.last, c.total)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"bytes 0-0/1", "bytes 5-9/*", "bytes */0", "bytes 1-2/3x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		first, last, total, err := Parse(h)
		if err != nil {
			return
		}
		if first < 0 || last < first || (total != -1 && total <= last) {
			t.Errorf("Parse(%q) accepted an impossible range %d-%d/%d", h, first, last, total)
		}
	})
}
