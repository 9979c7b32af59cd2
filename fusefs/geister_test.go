package fusefs_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/tbfs/tbfs/format/geister"
	"github.com/tbfs/tbfs/fusefs"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// readTSV reads a tab-separated file with a header into maps by column.
func readTSV(t *testing.T, path string) []map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var head []string
	var rows []map[string]string
	for sc.Scan() {
		c := strings.Split(sc.Text(), "\t")
		if head == nil {
			head = c
			continue
		}
		row := map[string]string{}
		for i, h := range head {
			if i < len(c) {
				row[h] = c[i]
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// TestGeister reads Geister boards through the mount, by rows and by GAT
// string, and compares with the reference runtime's rows
// (testdata/geister/values_id000.tsv and moves_id000.tsv).
func TestGeister(t *testing.T) {
	dir := testenv.Testdata(t, "geister")
	src := openDir(t, dir)
	tb, err := geister.Open(geister.Options{}, src)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	mnt, f := mount(t, fusefs.Config{Geister: fusefs.GeisterCollector{Prober: tb}})

	values := readTSV(t, filepath.Join(dir, "values_id000.tsv"))
	limit := len(values)
	if raceEnabled || testing.Short() {
		limit = 100
	}
	for i, r := range values[:min(limit, len(values))] {
		var p string
		if i%2 == 0 {
			p = filepath.Join(mnt, "geister", r["board"]+".json")
		} else {
			p = filepath.Join(mnt, "geister", r["gat"]+".json")
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("pos %s: %v", r["pos_id"], err)
		}
		var d struct {
			Value *int `json:"value"`
		}
		if err := json.Unmarshal(b, &d); err != nil || d.Value == nil || strconv.Itoa(*d.Value) != r["value"] {
			t.Errorf("pos %s %s: %s, want value %s", r["pos_id"], p, b, r["value"])
		}
	}

	// Moves: each parent's child values, as a multiset, and their count.
	want := map[string][]int{}
	for _, r := range readTSV(t, filepath.Join(dir, "moves_id000.tsv")) {
		v, err := strconv.Atoi(r["child_value"])
		if err != nil {
			t.Fatalf("child_value %q", r["child_value"])
		}
		want[r["board"]] = append(want[r["board"]], v)
	}
	n := 0
	for board, vals := range want {
		if (raceEnabled || testing.Short()) && n >= 20 {
			break
		}
		n++
		b, err := os.ReadFile(filepath.Join(mnt, "geister", board+".json"))
		if err != nil {
			t.Fatalf("%s: %v", board, err)
		}
		var d struct {
			Moves []struct {
				Value int `json:"value"`
			} `json:"moves"`
		}
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatal(err)
		}
		var got []int
		for _, m := range d.Moves {
			got = append(got, m.Value)
		}
		sort.Ints(got)
		sort.Ints(vals)
		if fmt.Sprint(got) != fmt.Sprint(vals) {
			t.Errorf("%s: child values %v, reference %v", board, got, vals)
		}
		text, err := os.ReadFile(filepath.Join(mnt, "geister", board))
		if err != nil || !strings.Contains(string(text), "value") {
			t.Errorf("%s: human text %q, %v", board, text, err)
		}
	}

	for _, bad := range []string{"geister/xx", "geister/....../....../......./......", "geister/" + strings.Repeat("9", 48)} {
		if _, err := os.ReadFile(filepath.Join(mnt, bad)); !errors.Is(err, syscall.ENOENT) {
			t.Errorf("%s: %v, want ENOENT", bad, err)
		}
	}
	if s := f.Stats(); s.ProbeErrors != 0 || s.BadPaths < 3 {
		t.Errorf("stats: %+v", s)
	}
}
