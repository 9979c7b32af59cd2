package geister_test

import (
	"errors"
	"testing"

	geistertb "github.com/tbfs/tbfs/format/geister"
	"github.com/tbfs/tbfs/geister"
)

func TestParseBoardErrors(t *testing.T) {
	tests := []struct {
		in   string
		want error
	}{
		{"", geister.ErrNotation},
		{"....../....../....../....../......", geister.ErrNotation},
		{"....../....../....../....../....../.......", geister.ErrNotation},
		{"....../....../....../....../....../.....x", geister.ErrNotation},
		{"BBBBB./....../....../....../....../......", geister.ErrInvalidPosition},
	}
	for _, tc := range tests {
		if _, err := geister.ParseBoard(tc.in); !errors.Is(err, tc.want) {
			t.Errorf("ParseBoard(%q) error %v, want %v", tc.in, err, tc.want)
		}
	}
}

func TestParseGATErrors(t *testing.T) {
	ok := "22B13R99b99b99b99r99r99r05b30r99b99b99b99r99r99r"
	if _, err := geister.ParseGAT(ok); err != nil {
		t.Fatalf("ParseGAT(%q): %v", ok, err)
	}
	tests := []struct {
		in   string
		want error
	}{
		{ok[:45], geister.ErrNotation},
		{"22B13R99b99b99b99r99r99r05u30r99b99b99b99r99r99r", geister.ErrNotation},        // unknown colour
		{"22B13R99b99b99b99r99r99r05b30r88b99b99b99r99r99r", geister.ErrNotation},        // escaped
		{"22B13R99b99b99b99r99r99r05b30r99b99b99b99r99r99x", geister.ErrNotation},        // colour letter
		{"22B13R99b99b99b99r99r99r65b30r99b99b99b99r99r99r", geister.ErrNotation},        // x = 6
		{"22B13R99b99b99b99r99r99r05b30r99r99b99b99r99r99r", geister.ErrNotation},        // five reds
		{"22B22R99b99b99b99r99r99r05b30r99b99b99b99r99r99r", geister.ErrInvalidPosition}, // two on a square
	}
	for _, tc := range tests {
		if _, err := geister.ParseGAT(tc.in); !errors.Is(err, tc.want) {
			t.Errorf("ParseGAT(%q) error %v, want %v", tc.in, err, tc.want)
		}
	}
}

func TestParseGATObservation(t *testing.T) {
	// Own blue C3, red B4; opponent pieces on A6 and D1 with colours
	// unknown; three blues and three reds of the opponent captured, so one
	// of the two is red.
	o, err := geister.ParseGATObservation("22B13R99b99b99b99r99r99r05u30u99b99b99b99r99r99r")
	if err != nil {
		t.Fatal(err)
	}
	p, _ := geister.ParseBoard("...r../....../..B.../.R..../....../b.....")
	if o.OwnBlue != p.OwnBlue || o.OwnRed != p.OwnRed || o.Opp != p.Opp() || o.OppRed != 1 {
		t.Errorf("observation %+v, want pieces of %s with one red", o, p)
	}
	if _, err := geister.ParseGATObservation("22B13R99b99b99b99r99r99r05u30u99b99b99b99b99b99r"); !errors.Is(err, geister.ErrNotation) {
		t.Errorf("five captured blues: error %v", err)
	}
}

func TestParseEitherForm(t *testing.T) {
	a, err := geister.Parse(" 22B13R99b99b99b99r99r99r05b30r99b99b99b99r99r99r ")
	if err != nil {
		t.Fatal(err)
	}
	b, err := geister.Parse("...r../....../..B.../.R..../....../b.....")
	if err != nil || a != b {
		t.Errorf("Parse of the two notations: %s and %s (%v)", a, b, err)
	}
}

func FuzzParseBoard(f *testing.F) {
	for _, s := range []string{"...r../....../..B.../.R..../....../b.....", "", "//////", "BBBBBB/RRRRRR/bbbbbb/rrrrrr/....../......",
		"22B13R99b99b99b99r99r99r05b30r99b99b99b99r99r99r", "22B13R99b99b99b99r99r99r05u30u99b99b99b99r99r99r"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := geister.Parse(s)
		if err == nil {
			if err := p.Validate(); err != nil {
				t.Fatalf("Parse(%q) accepted an invalid position: %v", s, err)
			}
			q, err := geister.ParseBoard(p.String())
			if err != nil || q != p {
				t.Fatalf("String round trip of %q: %s, %v", s, q, err)
			}
			if m := geistertb.MaterialOf(p); m.PB <= 4 && m.PR <= 4 && m.OB <= 4 && m.OR <= 4 {
				if q, err := geister.ParseGAT(p.GAT()); err != nil || q != p {
					t.Fatalf("GAT round trip of %q: %s, %v", s, q, err)
				}
			}
			if m := geistertb.MaterialOf(p); m.Valid() {
				if _, _, err := geistertb.Rank(p); err != nil {
					t.Fatalf("Rank(%s): %v", p, err)
				}
			}
		}
		if o, err := geister.ParseGATObservation(s); err == nil {
			if _, _, cols, err := geistertb.Colourings(o); err == nil {
				for _, c := range cols {
					if err := c.Validate(); err != nil {
						t.Fatalf("colouring %s of %q: %v", c, s, err)
					}
				}
			}
		}
	})
}
