package chesstboracle_test

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/internal/testkit/chesstboracle"
)

func ip(v int) *int { return &v }

// TestParse checks the parser against hand-written rows shaped as
// /work/shared/chesstb/README.md describes the columns: its printed example
// (KPK at clock 80: wdl=WIN dtz=19 dtc=WIN/5/19 dtm=51 dtm50=WIN/51), the
// fixed answer for a move leaving bare kings (DRAW 0 DRAW/0/0 0 DRAW/0),
// a checkmated side to move (LOSE, dtz 0, LOSE/0/0, dtm 0, LOSE/0), and a
// decisive KNNKP row with no dtm/dtm50 printed. Apart from the README
// example the FENs are placeholders: only the columns are under test.
func TestParse(t *testing.T) {
	const probeHeader = "fen\twdl\tdtz\tdtc\tdtm\tdtm50\tforms\n"
	const childHeader = "fen\tmove\twdl\tdtz\tdtc\tdtm\tdtm50\tforms\n"
	type want struct {
		wdl      int
		dtz, dtm *int
		dtc      *[2]int
		dtm50    *int
		move     string
		forms    []string
		notForms []string
		where    string
	}
	tests := []struct {
		name     string
		text     string
		children bool
		want     want
	}{{
		name: "README example, win",
		text: probeHeader + "8/8/8/k7/8/8/K4P2/8 w - - 80 1\tWIN\t19\tWIN/5/19\t51\tWIN/51\tshipped,full\n",
		want: want{wdl: 2, dtz: ip(19), dtm: ip(51), dtc: &[2]int{5, 19}, dtm50: ip(51),
			forms: []string{"shipped", "full"}, notForms: []string{"lossonly", "ship"}, where: "probe.tsv:2"},
	}, {
		name: "loss signs every distance",
		text: probeHeader + "x b - - 0 1\tLOSE\t19\tLOSE/5/19\t50\tLOSE/50\tshipped\n",
		want: want{wdl: -2, dtz: ip(-19), dtm: ip(-50), dtc: &[2]int{5, -19}, dtm50: ip(-50),
			forms: []string{"shipped"}, notForms: []string{"full"}, where: "probe.tsv:2"},
	}, {
		name: "blessed loss: negative dtz and dtm, clock-aware classes DRAW",
		text: probeHeader + "x w - - 0 1\tBLESSED_LOSS\t104\tDRAW/0/0\t120\tDRAW/0\tshipped\n",
		want: want{wdl: -1, dtz: ip(-104), dtm: ip(-120), dtc: &[2]int{0, 0}, dtm50: ip(0),
			forms: []string{"shipped"}, where: "probe.tsv:2"},
	}, {
		name: "cursed win",
		text: probeHeader + "x w - - 0 1\tCURSED_WIN\t103\tDRAW/0/0\t119\tDRAW/0\tshipped\n",
		want: want{wdl: 1, dtz: ip(103), dtm: ip(119), dtc: &[2]int{0, 0}, dtm50: ip(0),
			forms: []string{"shipped"}, where: "probe.tsv:2"},
	}, {
		name: "KNNKP decisive: no dtm or dtm50 printed",
		text: probeHeader + "x w - - 0 1\tWIN\t21\tWIN/1/3\t\t\tshipped\n",
		want: want{wdl: 2, dtz: ip(21), dtc: &[2]int{1, 3}, forms: []string{"shipped"}, where: "probe.tsv:2"},
	}, {
		name:     "children: bare kings answer",
		text:     childHeader + "x w - - 5 1\ta1b1\tDRAW\t0\tDRAW/0/0\t0\tDRAW/0\tshipped,full\n",
		children: true,
		want: want{wdl: 0, dtz: ip(0), dtm: ip(0), dtc: &[2]int{0, 0}, dtm50: ip(0), move: "a1b1",
			forms: []string{"shipped", "full"}, where: "children.tsv:2"},
	}, {
		name:     "children: checkmated side to move",
		text:     childHeader + "x w - - 5 1\tg7g8q\tLOSE\t0\tLOSE/0/0\t0\tLOSE/0\tshipped\n",
		children: true,
		want: want{wdl: -2, dtz: ip(0), dtm: ip(0), dtc: &[2]int{0, 0}, dtm50: ip(0), move: "g7g8q",
			forms: []string{"shipped"}, where: "children.tsv:2"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := "probe.tsv"
			if tt.children {
				name = "children.tsv"
			}
			rows, err := chesstboracle.Parse(strings.NewReader(tt.text), name, tt.children)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 1 {
				t.Fatalf("%d rows, want 1", len(rows))
			}
			r := rows[0]
			if r.Where != tt.want.where || r.Line != 2 || r.Move != tt.want.move {
				t.Errorf("where %q line %d move %q, want %q 2 %q", r.Where, r.Line, r.Move, tt.want.where, tt.want.move)
			}
			wdl, dtz, dtm := r.Want(t)
			dtc, dtm50 := r.WantDTC(t)
			got := want{wdl: wdl, dtz: dtz, dtm: dtm, dtc: dtc, dtm50: dtm50, move: r.Move,
				forms: tt.want.forms, notForms: tt.want.notForms, where: r.Where}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			if class, plies, ok, err := r.DTM50Class(); err != nil {
				t.Error(err)
			} else if ok != (tt.want.dtm50 != nil) || (ok && (r.DTM50 != class+"/"+strconv.Itoa(plies) || plies != max(*tt.want.dtm50, -*tt.want.dtm50))) {
				t.Errorf("DTM50Class = %q %d %v, column %q", class, plies, ok, r.DTM50)
			}
			for _, f := range tt.want.forms {
				if !r.HasForm(f) {
					t.Errorf("HasForm(%q) false", f)
				}
			}
			for _, f := range tt.want.notForms {
				if r.HasForm(f) {
					t.Errorf("HasForm(%q) true", f)
				}
			}
		})
	}
}

// TestParseErrors checks that malformed rows are errors naming the row.
func TestParseErrors(t *testing.T) {
	const header = "fen\twdl\tdtz\tdtc\tdtm\tdtm50\tforms\n"
	tests := []struct {
		name     string
		text     string
		children bool
		parse    bool // the error comes from Parse itself
		errHas   string
	}{
		{"too few columns", header + "x w - - 0 1\tWIN\t1\tWIN/0/1\t1\tWIN/1\n", false, true, "probe.tsv:2: 6 columns, want 7"},
		{"probe row read as children", header + "x w - - 0 1\tWIN\t1\tWIN/0/1\t1\tWIN/1\tshipped\n", true, true, "7 columns, want 8"},
		{"unknown class", header + "x w - - 0 1\tILLEGAL\t0\tDRAW/0/0\t0\tDRAW/0\tshipped\n", false, false, `class "ILLEGAL"`},
		{"bad dtz", header + "x w - - 0 1\tWIN\tx\tWIN/0/1\t1\tWIN/1\tshipped\n", false, false, `number "x"`},
		{"bad dtc class", header + "x w - - 0 1\tWIN\t1\tCURSED_WIN/0/1\t1\tWIN/1\tshipped\n", false, false, "dtc"},
		{"dtc two fields", header + "x w - - 0 1\tWIN\t1\tWIN/1\t1\tWIN/1\tshipped\n", false, false, "dtc"},
		{"dtm50 three fields", header + "x w - - 0 1\tWIN\t1\tWIN/0/1\t1\tWIN/0/1\tshipped\n", false, false, "dtm50"},
		{"dtm50 no slash", header + "x w - - 0 1\tWIN\t1\tWIN/0/1\t1\t1\tshipped\n", false, false, "dtm50"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := "probe.tsv"
			rows, err := chesstboracle.Parse(strings.NewReader(tt.text), name, tt.children)
			if !tt.parse {
				if err != nil {
					t.Fatal(err)
				}
				_, _, _, err = rows[0].Distances()
				if err == nil {
					_, _, err = rows[0].ClockDistances()
				}
				if err == nil {
					_, _, _, err = rows[0].DTM50Class()
				}
			}
			if err == nil || !strings.Contains(err.Error(), tt.errHas) {
				t.Fatalf("error %v, want one containing %q", err, tt.errHas)
			}
		})
	}
}
