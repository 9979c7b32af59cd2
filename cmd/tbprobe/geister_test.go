package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/source/s3/s3test"
)

// geisterOracle reads the committed id000 subset of the reference oracle's
// values.tsv: board and value columns.
func geisterOracle(t *testing.T) (boards []string, values []int) {
	t.Helper()
	for _, row := range geisterOracleRows(t) {
		v, err := strconv.Atoi(row["value"])
		if err != nil {
			t.Fatal(err)
		}
		boards = append(boards, row["board"], row["gat"])
		values = append(values, v, v)
	}
	return boards, values
}

// geisterOracleRows reads every row of the committed values_id000.tsv, by
// column name.
func geisterOracleRows(t *testing.T) []map[string]string {
	t.Helper()
	f, err := os.Open(testenv.Testdata(t, "geister", "values_id000.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var header []string
	var rows []map[string]string
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "\t")
		if header == nil {
			header = fields
			continue
		}
		row := map[string]string{}
		for i, h := range header {
			row[h] = fields[i]
		}
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestGeisterCLIOracle feeds every committed oracle board (both notations)
// on standard input and checks each JSON answer against the reference
// value, probing one board at a time and several at once.
func TestGeisterCLIOracle(t *testing.T) {
	for _, parallel := range []string{"1", "4"} {
		t.Run("parallel-"+parallel, func(t *testing.T) {
			testGeisterCLIOracle(t, parallel)
		})
	}
}

// testGeisterCLIOracle is one run of TestGeisterCLIOracle with --parallel set.
func testGeisterCLIOracle(t *testing.T, parallel string) {
	boards, values := geisterOracle(t)
	var stdout, stderr bytes.Buffer
	code := runGeister(context.Background(), []string{"--json", "--parallel", parallel, "--tables", testenv.Testdata(t, "geister")},
		strings.NewReader(strings.Join(boards, "\n")+"\n"), &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, stderr.String())
	}
	checkGeisterAnswers(t, &stdout, boards, values)
}

// checkGeisterAnswers decodes one JSON answer per board from r and checks
// each against the oracle's value, and its result and plies against the
// value's meaning (odd: the side to move wins in v plies, even: loses, 0:
// draw; FORMAT.md §7).
func checkGeisterAnswers(t *testing.T, r io.Reader, boards []string, values []int) {
	t.Helper()
	dec := json.NewDecoder(r)
	for i := range boards {
		var ans geisterJSON
		if err := dec.Decode(&ans); err != nil {
			t.Fatalf("answer %d: %v", i, err)
		}
		if ans.Error != "" || ans.Value == nil || int(*ans.Value) != values[i] {
			t.Errorf("%s: %+v, oracle value %d", boards[i], ans, values[i])
			continue
		}
		wantResult := map[bool]string{true: "win", false: "loss"}[values[i]%2 == 1]
		if values[i] == 0 {
			wantResult = "draw"
		}
		if ans.Result != wantResult || ans.Plies == nil || *ans.Plies != values[i] {
			t.Errorf("%s: result %q plies %v for value %d", boards[i], ans.Result, ans.Plies, values[i])
		}
	}
}

// TestGeisterCLIChildren checks --children on oracle example 1 of
// FORMAT.md §7 (value 2: every move lets the opponent win at once, so each
// child is 1) and the text form.
func TestGeisterCLIChildren(t *testing.T) {
	var stdout, stderr bytes.Buffer
	board := "...r../....../..B.../.R..../....../b....."
	code := runGeister(context.Background(), []string{"--json", "--children", board}, nil, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var ans geisterJSON
	if err := json.Unmarshal(stdout.Bytes(), &ans); err != nil {
		t.Fatal(err)
	}
	if *ans.Value != 2 || len(ans.Moves) != 8 {
		t.Fatalf("%+v", ans)
	}
	for _, m := range ans.Moves {
		if m.Value != 1 || len(m.From) != 2 || len(m.To) != 2 || m.Capture != "-" {
			t.Errorf("move %+v", m)
		}
	}
	stdout.Reset()
	if code := runGeister(context.Background(), []string{"--children", board}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("text exit %d", code)
	}
	if !strings.HasPrefix(stdout.String(), board+"\t2\tloss in 2\n") || strings.Count(stdout.String(), "\n") != 9 {
		t.Errorf("text output:\n%s", stdout.String())
	}
}

func TestGeisterCLIErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"bad flag", []string{"--nope"}, 2},
		{"bad tables scheme", []string{"--tables", "nosuch://x", "B...../....../..R.../....../...b../...r.."}, 2},
		{"bad board", []string{"B....."}, 1},
		{"no table", []string{".BB.../....../..R.../....../...b../...rr."}, 1},
		{"impossible board", []string{"BBBBB./....../..R.../....../...b../...r.."}, 1},
		{"help", []string{"-h"}, 0},
	}
	for _, tc := range tests {
		var stdout, stderr bytes.Buffer
		if code := runGeister(context.Background(), tc.args, strings.NewReader(""), &stdout, &stderr); code != tc.code {
			t.Errorf("%s: exit %d, want %d (stderr %s)", tc.name, code, tc.code, stderr.String())
		}
	}
	var stdout bytes.Buffer
	runGeister(context.Background(), []string{"--json", "B....."}, nil, &stdout, &bytes.Buffer{})
	var ans geisterJSON
	if err := json.Unmarshal(stdout.Bytes(), &ans); err != nil || ans.Error == "" || ans.Board != "B....." {
		t.Errorf("JSON error answer %q: %+v %v", stdout.String(), ans, err)
	}
}

// TestGeisterCLIS3 probes oracle boards with --tables naming an S3 bucket
// (versitygw on loopback serving the committed fixtures).
func TestGeisterCLIS3(t *testing.T) {
	srv, url := s3test.ServeDir(t, testenv.Testdata(t, "geister"))
	srv.Setenv(t)
	boards, values := geisterOracle(t)
	boards, values = boards[:40], values[:40]
	var stdout, stderr bytes.Buffer
	code := runGeister(context.Background(), append([]string{"--json", "--tables", url}, boards...), nil, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	dec := json.NewDecoder(&stdout)
	for i := range boards {
		var ans geisterJSON
		if err := dec.Decode(&ans); err != nil {
			t.Fatal(err)
		}
		if ans.Value == nil || int(*ans.Value) != values[i] {
			t.Errorf("%s: %+v, oracle %d", boards[i], ans, values[i])
		}
	}
}

// TestGeisterEmbeddedOracle runs the built binary with no --tables from a
// directory outside the repository: the fixture table built in answers
// every committed oracle board with the reference's value (issue 20: it
// said "no testdata/geister found above the working directory").
func TestGeisterEmbeddedOracle(t *testing.T) {
	boards, values := geisterOracle(t)
	res := runBin(t, strings.Join(boards, "\n")+"\n", nil, "geister", "--json")
	if res.code != 0 {
		t.Fatalf("exit %d, stderr %s", res.code, res.stderr)
	}
	checkGeisterAnswers(t, strings.NewReader(res.stdout), boards, values)
}

// TestGeisterMetadataTTL: in one batch run, a board whose table is copied
// into --tables after a first probe found it missing is answered by the
// next probe with --metadata-ttl 0, and stays missing with the default
// TTL. Arbiter: the reference value of the committed oracle's first board.
func TestGeisterMetadataTTL(t *testing.T) {
	boards, values := geisterOracle(t)
	table, err := os.ReadFile(testenv.Testdata(t, "geister", "id000_pb1pr1ob1or1_obsblk.bin"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		flag      string
		findsLate bool
	}{{"0", true}, {"5m", false}} {
		dir := t.TempDir()
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		done := make(chan int, 1)
		var stderr bytes.Buffer
		go func() {
			code := runGeister(context.Background(), []string{"--json", "--parallel", "1", "--tables", dir, "--metadata-ttl", c.flag}, inR, outW, &stderr)
			outW.Close()
			done <- code
		}()
		answers := json.NewDecoder(outR)
		ask := func() geisterJSON {
			t.Helper()
			if _, err := io.WriteString(inW, boards[0]+"\n"); err != nil {
				t.Fatal(err)
			}
			var ans geisterJSON
			if err := answers.Decode(&ans); err != nil {
				t.Fatalf("--metadata-ttl %s: %v (stderr %s)", c.flag, err, stderr.String())
			}
			return ans
		}
		if ans := ask(); ans.Error == "" {
			t.Fatalf("--metadata-ttl %s: probe of an empty location answered %+v", c.flag, ans)
		}
		if err := os.WriteFile(filepath.Join(dir, "id000_pb1pr1ob1or1_obsblk.bin"), table, 0o644); err != nil {
			t.Fatal(err)
		}
		ans := ask()
		switch {
		case c.findsLate && (ans.Value == nil || int(*ans.Value) != values[0]):
			t.Errorf("--metadata-ttl %s: after the table appeared: %+v; oracle %d", c.flag, ans, values[0])
		case !c.findsLate && ans.Error == "":
			t.Errorf("--metadata-ttl %s: the miss was not remembered: %+v", c.flag, ans)
		}
		inW.Close()
		io.Copy(io.Discard, outR)
		<-done
	}
}
