package main

import (
	"strings"
	"testing"

	"github.com/tbfs/tbfs/internal/testkit/chesstboracle"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// fixtureRows are the committed oracle rows of probe.tsv.
func fixtureRows(t *testing.T) []chesstboracle.Row {
	t.Helper()
	return chesstboracle.Read(t, testenv.Testdata(t, "chesstb", "oracle", "probe.tsv"))
}

// TestParallelClamped: an absurd --parallel (the 100000000, which
// grew to 24 GB) is lowered to MaxParallel with a message saying so, and
// the batch is still answered right (every row checked against the
// reference oracle); below 1 is refused.
func TestParallelClamped(t *testing.T) {
	rows := fixtureRows(t)
	checkBatchOracle(t, rows, nil, "--parallel", "100000000")
	res := runBin(t, rows[0].FEN+"\n", nil, "--parallel", "100000000")
	if res.code != 0 || !strings.Contains(res.stderr, "--parallel 100000000: using 256") {
		t.Errorf("exit %d, stderr %q: want the clamp named", res.code, res.stderr)
	}
	for _, args := range [][]string{{"--parallel", "0"}, {"geister", "--parallel", "-1"}} {
		if res := runBin(t, "", nil, args...); res.code != 2 || !strings.Contains(res.stderr, "want at least 1") {
			t.Errorf("%q: exit %d, stderr %q", args, res.code, res.stderr)
		}
	}
}

// TestLongLineFailsAlone: a stdin line over 1 MiB fails that line only;
// the lines before and after it are answered (each checked against the
// oracle), in order, and the exit status reports the failure.
func TestLongLineFailsAlone(t *testing.T) {
	rows := fixtureRows(t)[:6]
	syz := readSyzygyFixtures(t) // no --tables: the embedded defaults
	var in strings.Builder
	for i, r := range rows {
		if i == 3 {
			in.WriteString(strings.Repeat("x", 2<<20) + "\n")
		}
		in.WriteString(r.FEN + "\n")
	}
	for _, parallel := range []string{"1", "4"} {
		res := runBin(t, in.String(), nil, "--json", "--parallel", parallel)
		objs := decodeLines(t, res.stdout)
		if res.code != 1 || len(objs) != len(rows)+1 {
			t.Fatalf("parallel %s: exit %d, %d answers for %d lines; stderr %s", parallel, res.code, len(objs), len(rows)+1, res.stderr)
		}
		for i, o := range objs {
			switch {
			case i == 3:
				if e, _ := o["error"].(string); !strings.Contains(e, "over 1048576 bytes") {
					t.Errorf("long line's answer %v, want its own error", o)
				}
			case i < 3:
				checkObject(t, rows[i].Where, o, wantProbe(t, syz, rows[i], rows[i].FEN))
			default:
				checkObject(t, rows[i-1].Where, o, wantProbe(t, syz, rows[i-1], rows[i-1].FEN))
			}
		}
	}
}

// TestEscapesQuoted: escape codes in an input line reach stderr quoted,
// never as raw control bytes a terminal would obey; the probe and geister
// commands both.
func TestEscapesQuoted(t *testing.T) {
	const evil = "\x1b]0;owned\x07\x1b[2J8/8/8/8"
	for _, args := range [][]string{nil, {"geister", "--tables", testenv.Testdata(t, "geister")}} {
		res := runBin(t, evil+"\n", nil, args...)
		out := res.stdout + res.stderr
		if res.code != 1 || strings.ContainsAny(out, "\x1b\x07") || !strings.Contains(out, `\x1b`) {
			t.Errorf("%q: exit %d, output %q: want the line quoted", args, res.code, out)
		}
	}
}
