package fusefs

import (
	"strings"
	"testing"
)

// The rows' expected FENs follow from the FUSE view's path syntax: the
// ranks are the directories, the last component carries the first rank and
// the remaining fields separated by spaces or '_', missing fields are left
// for the chess package to default, and ".json" selects the JSON form in
// chess/ and moves/.
func TestParsePath(t *testing.T) {
	const board = "8/8/8/5k2/8/8/1Q6/K7"
	tests := []struct {
		path    string
		view    view
		fen     string
		json    bool
		wantErr string
	}{
		{path: "chess/" + board + " w - - 0 1", view: viewChess, fen: board + " w - - 0 1"},
		{path: "chess/" + board + "_w_-_-_0_1", view: viewChess, fen: board + " w - - 0 1"},
		{path: "chess/" + board + "_w_-_-_0_1.json", view: viewChess, fen: board + " w - - 0 1", json: true},
		{path: "chess/" + board + " b.json", view: viewChess, fen: board + " b", json: true},
		{path: "chess/" + board, view: viewChess, fen: board},
		{path: "chess/" + board + "__w  -_-", view: viewChess, fen: board + " w - -"},
		{path: "wdl/" + board + "_w", view: viewWDL, fen: board + " w"},
		{path: "dtz/" + board, view: viewDTZ, fen: board},
		{path: "dtm/" + board, view: viewDTM, fen: board},
		{path: "dtm50/" + board + "_w_-_-_80", view: viewDTM50, fen: board + " w - - 80"},
		{path: "dtc/" + board, view: viewDTC, fen: board},
		{path: "moves/" + board + "_b.json", view: viewMoves, fen: board + " b", json: true},
		// Only chess/ and moves/ have a JSON form; elsewhere the suffix is
		// part of the name and makes it a bad FEN field (the chess
		// package refuses it).
		{path: "wdl/" + board + ".json", wantErr: "neither"},
		{path: "wdl/" + board + "_w.json", view: viewWDL, fen: board + " w.json"},
		{path: "nope/" + board, wantErr: "not a position directory"},
		{path: "chess/8/8/8/8", wantErr: "8 components"},
		{path: "chess/" + board + "/8", wantErr: "8 components"},
		{path: "chess/8/8/8/5k2/8/8/1Q6/K7_w_-_-_0_1_x", wantErr: "at most 6"},
		{path: "chess/8/8/8/5k2/8/8/1Q6/_w", wantErr: "neither"},
		{path: "chess/8/8/8/5k2/8/8/1Q6/", wantErr: "no first rank"},
		{path: "chess/8/8/8/5k2/8/9/1Q6/K7", wantErr: "neither"},
		{path: "chess/8/8/8/5k3/8/8/1Q6/K7", wantErr: "more than 8"},
		{path: "chess/8/8/8/5k/8/8/1Q6/K7", wantErr: "covers 6"},
		{path: "chess/8/8//5k2/8/8/1Q6/K7", wantErr: "empty rank"},
		{path: "chess/8/8/8/5x2/8/8/1Q6/K7", wantErr: "neither"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			q, err := parsePath(tt.path)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parsePath(%q) = %+v, %v; want error containing %q", tt.path, q, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parsePath(%q): %v", tt.path, err)
			}
			if q.view != tt.view || q.fen != tt.fen || q.json != tt.json {
				t.Fatalf("parsePath(%q) = {%s %q %v}, want {%s %q %v}", tt.path, q.view.dir(), q.fen, q.json, tt.view.dir(), tt.fen, tt.json)
			}
		})
	}
}

// FuzzParsePath checks that no path makes the parser panic and that an
// accepted path always yields eight ranks of eight squares followed by at
// most five more fields, which is what the tree hands to the chess package.
func FuzzParsePath(f *testing.F) {
	for _, s := range []string{
		"chess/8/8/8/5k2/8/8/1Q6/K7 w - - 0 1",
		"chess/8/8/8/5k2/8/8/1Q6/K7_w_-_-_0_1.json",
		"moves/8/8/8/5k2/8/8/1Q6/K7_b.json",
		"wdl/8/8/8/8/8/8/8/8",
		"dtc/rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR_w_KQkq_-_0_1",
		"chess/8/8/8/5k2/8/8/1Q6/",
		"chess//////////",
		"tables/wdl/KQK.lzw",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		q, err := parsePath(p)
		if err != nil {
			return
		}
		fields := strings.Split(q.fen, " ")
		if len(fields) > 6 {
			t.Fatalf("parsePath(%q) gave %d fields: %q", p, len(fields), q.fen)
		}
		ranks := strings.Split(fields[0], "/")
		if len(ranks) != 8 {
			t.Fatalf("parsePath(%q) gave %d ranks: %q", p, len(ranks), q.fen)
		}
		for _, r := range ranks {
			if err := checkRank(r); err != nil {
				t.Fatalf("parsePath(%q) gave bad rank: %v", p, err)
			}
		}
		if q.json && !q.view.hasJSON() {
			t.Fatalf("parsePath(%q) asked JSON of %s/", p, q.view.dir())
		}
	})
}

// FuzzSplitFields checks splitFields against its definition: the fields
// strings.Fields finds once every '_' is a space (the standard library is
// the arbiter of what white space is), and their count.
func FuzzSplitFields(f *testing.F) {
	for _, s := range []string{"K7 w - - 0 1", "K7_w_-_-_0_1", "__w  -_-", "", "_", "a\tb\nc\u00a0d\u0085e", "1_2_3_4_5_6_7_8"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := strings.Fields(strings.ReplaceAll(s, "_", " "))
		var out [maxFields]string
		n := splitFields(s, out[:])
		if n != len(want) {
			t.Fatalf("splitFields(%q) counts %d fields, strings.Fields %d", s, n, len(want))
		}
		for i := range min(n, maxFields) {
			if out[i] != want[i] {
				t.Fatalf("splitFields(%q) field %d = %q, want %q", s, i, out[i], want[i])
			}
		}
	})
}
