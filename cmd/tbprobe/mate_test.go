package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestRunMate drives the subcommand as a user would; expected answers come
// from the rules (a single mating move, a checkmated side) and the
// referee's cases (the battery's P rows).
func TestRunMate(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		stdin   string
		code    int
		want    []mateJSON // compared on fen/result/moves; line checked for length
		arbiter string
	}{
		{
			name:    "mate in 1",
			args:    []string{"--json", "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1"},
			want:    []mateJSON{{FEN: "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", Result: "mate", Moves: 1, Line: []string{"a1a8"}}},
			arbiter: "rules: Ra8 is the only mate",
		},
		{
			name:    "referee mated in 3",
			args:    []string{"--json", "--max", "3", "8/N5k1/3Q4/7p/3R4/8/2P2K1P/8_b_-_-_0_38"},
			want:    []mateJSON{{FEN: "8/N5k1/3Q4/7p/3R4/8/2P2K1P/8 b - - 0 38", Result: "mated", Moves: 3}},
			arbiter: "referee",
		},
		{
			name:    "referee rule50",
			args:    []string{"--json", "--max", "7", "2k5/8/3R2K1/8/8/8/8/8 w - - 88 1"},
			want:    []mateJSON{{FEN: "2k5/8/3R2K1/8/8/8/8/8 w - - 88 1", Result: "none"}},
			arbiter: "referee: the clock leaves no time to mate",
		},
		{
			name:    "referee no-rule50",
			args:    []string{"--json", "--max", "8", "--no-rule50", "2k5/8/3R2K1/8/8/8/8/8 w - - 88 1"},
			want:    []mateJSON{{FEN: "2k5/8/3R2K1/8/8/8/8/8 w - - 88 1", Result: "mate", Moves: 8}},
			arbiter: "referee + seed_cases.tsv dtm 15",
		},
		{
			name:    "stdin, checkmated",
			args:    []string{"--json"},
			stdin:   "# comment\nrnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3\n",
			want:    []mateJSON{{FEN: "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3", Result: "mated", Moves: 0}},
			arbiter: "rules: checkmated",
		},
		{name: "bad FEN", args: []string{"--json", "not a fen", "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1"}, code: 1,
			want:    []mateJSON{{FEN: "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", Result: "mate", Moves: 1}},
			arbiter: "a bad FEN is reported, the others answered"},
		{name: "bad flag", args: []string{"--nope"}, code: 2, arbiter: "usage"},
		{name: "bad max", args: []string{"--max", "-1", "8/8/8/8/8/8/8/K1k5 w - - 0 1"}, code: 2, arbiter: "usage"},
		{name: "no FEN", args: nil, code: 2, arbiter: "usage"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := runMate(context.Background(), tc.args, strings.NewReader(tc.stdin), &out, &errb)
			if code != tc.code {
				t.Fatalf("exit %d, want %d (%s); stderr: %s", code, tc.code, tc.arbiter, errb.String())
			}
			dec := json.NewDecoder(&out)
			for _, w := range tc.want {
				var got mateJSON
				if err := dec.Decode(&got); err != nil {
					t.Fatalf("decoding output: %v", err)
				}
				if got.FEN != w.FEN || got.Result != w.Result || got.Moves != w.Moves {
					t.Errorf("got %+v, want %+v (%s)", got, w, tc.arbiter)
				}
				wantLen := 2*w.Moves - 1
				if w.Result == "mated" {
					wantLen = 2 * w.Moves
				}
				if w.Result == "none" {
					wantLen = 0
				}
				if len(got.Line) != wantLen {
					t.Errorf("line %v has %d plies, want %d", got.Line, len(got.Line), wantLen)
				}
				if w.Line != nil && strings.Join(got.Line, " ") != strings.Join(w.Line, " ") {
					t.Errorf("line %v, want %v", got.Line, w.Line)
				}
			}
			if dec.More() {
				t.Errorf("extra output: %s", out.String())
			}
		})
	}
}

func TestRunMateText(t *testing.T) {
	var out, errb bytes.Buffer
	code := runMate(context.Background(), []string{"6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1"}, strings.NewReader(""), &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if want := "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1\tmate in 1: a1a8\n"; out.String() != want {
		t.Errorf("output %q, want %q", out.String(), want)
	}
}
