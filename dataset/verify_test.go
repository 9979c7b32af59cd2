package dataset_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/dataset"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// TestSampleVerifies: the shipped sample passes every check, every row
// replayed against the fixture tables it was generated from.
func TestSampleVerifies(t *testing.T) {
	dir := sampleDir(t)
	rep := verify(t, fixtureLabeler(t), dir)
	for _, p := range rep.Problems {
		t.Error(p)
	}
	m := readManifest(t, dir)
	if rep.Rows != m.Rows || rep.Replayed != m.Rows || rep.Exact != m.Exact || rep.Rejected != m.Rejected || m.Rejected == 0 || m.Exact == 0 {
		t.Errorf("verified %+v, manifest says %d rows (%d exact, %d rejected)", rep, m.Rows, m.Exact, m.Rejected)
	}
}

// shardLines returns the lines of the shard holding row n, and which.
func shardLines(t *testing.T, dir string, n int) (file string, lines []string, idx int) {
	t.Helper()
	for _, f := range readManifest(t, dir).Files {
		if n < f.Rows {
			data, err := os.ReadFile(filepath.Join(dir, f.Name))
			if err != nil {
				t.Fatal(err)
			}
			return f.Name, strings.SplitAfter(string(data), "\n"), n
		}
		n -= f.Rows
	}
	t.Fatalf("no row %d", n)
	return
}

// editRow rewrites row n through edit, in the canonical encoding, so the
// only difference is the edited field.
func editRow(t *testing.T, dir string, n int, edit func(r *dataset.Row)) {
	t.Helper()
	file, lines, i := shardLines(t, dir, n)
	var r dataset.Row
	if err := json.Unmarshal([]byte(lines[i]), &r); err != nil {
		t.Fatal(err)
	}
	edit(&r)
	b, err := json.Marshal(&r)
	if err != nil {
		t.Fatal(err)
	}
	lines[i] = string(b) + "\n"
	writeLines(t, dir, file, lines)
}

func writeLines(t *testing.T, dir, file string, lines []string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, file), []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
}

// rowWhere returns the first sample row for which ok holds.
func rowWhere(t *testing.T, rows []dataset.Row, what string, ok func(r *dataset.Row) bool) int {
	t.Helper()
	for i := range rows {
		if ok(&rows[i]) {
			return i
		}
	}
	t.Fatalf("the sample has no %s row", what)
	return -1
}

// TestCorruptedCopiesFail: each deliberately corrupted copy of the sample
// fails, and the problem names the row (or file) and the reason. The
// arbiter of each row is named: SHA-256 (the bytes changed), the rules
// (the clock field against the FEN, legality), the tables (the replay),
// or the schema.
func TestCorruptedCopiesFail(t *testing.T) {
	src := sampleDir(t)
	rows := readRows(t, src)
	l := fixtureLabeler(t)
	exact := rowWhere(t, rows, "table-labelled win", func(r *dataset.Row) bool {
		return r.Category == "win" && r.Provenance.Arbiter == dataset.ArbiterTable
	})
	// A win at a clock that leaves fewer plies than its zeroing distance
	// is drawn by the 50-move rule: moving the clock must change the label.
	clockRow := rowWhere(t, rows, "win with a zeroing distance over 1", func(r *dataset.Row) bool {
		return r.Category == "win" && r.Values.DTZ != nil && *r.Values.DTZ > 1 && r.Clock < 90
	})
	withMoves := rowWhere(t, rows, "exact with a non-best legal move", func(r *dataset.Row) bool {
		if r.Label != dataset.LabelExact {
			return false
		}
		pos, err := chess.ParseFEN(r.FEN)
		return err == nil && len(pos.LegalMoves(nil)) > len(r.BestMoves)
	})
	last := len(rows) - 1
	tests := []struct {
		name    string
		arbiter string
		corrupt func(dir string)
		reseal  bool
		row     int    // the row the problem must name, -1 for a file
		file    string // the file it must name
		reason  string // a part of the reason
	}{
		{"changed wdl", "tables", func(d string) {
			editRow(t, d, exact, func(r *dataset.Row) { v := -*r.Values.WDL; r.Values.WDL = &v })
		}, true, exact, "", "replay: values.wdl is -2, the tables say 2"},
		{"changed category", "tables", func(d string) {
			editRow(t, d, exact, func(r *dataset.Row) { r.Category = "draw" })
		}, true, exact, "", "replay: category is draw, the tables say win"},
		{"changed wdl, not resealed", "SHA-256", func(d string) {
			editRow(t, d, exact, func(r *dataset.Row) { v := -*r.Values.WDL; r.Values.WDL = &v })
		}, false, -1, "", "the manifest says"},
		{"changed clock field", "rules", func(d string) {
			editRow(t, d, clockRow, func(r *dataset.Row) { r.Clock++ })
		}, true, clockRow, "", "the FEN's half-move clock is"},
		{"changed clock in field and FEN", "tables (50-move rule)", func(d string) {
			editRow(t, d, clockRow, func(r *dataset.Row) {
				r.Clock = 100
				r.FEN = strings.Replace(r.FEN, fmt.Sprintf(" %d 1", rows[clockRow].Clock), " 100 1", 1)
			})
		}, true, clockRow, "", "replay: category is win, the tables say cursed-win"},
		{"wrong best move", "tables", func(d string) {
			editRow(t, d, withMoves, func(r *dataset.Row) {
				pos, _ := chess.ParseFEN(r.FEN)
				for _, m := range pos.LegalMoves(nil) {
					if !slices.Contains(r.BestMoves, m.UCI()) {
						r.BestMoves = []string{m.UCI()}
						r.KeepingMoves = append(r.KeepingMoves, m.UCI())
						slices.Sort(r.KeepingMoves)
						r.KeepingMoves = slices.Compact(r.KeepingMoves)
						return
					}
				}
			})
		}, true, withMoves, "", "replay: keeping_moves"},
		{"illegal move", "rules", func(d string) {
			editRow(t, d, withMoves, func(r *dataset.Row) { r.BestMoves = []string{"a1a1"} })
		}, true, withMoves, "", "move a1a1 is not legal"},
		{"tampered table hash", "tables (SHA-256 of the table file)", func(d string) {
			editRow(t, d, exact, func(r *dataset.Row) {
				r.Provenance.Tables[0].SHA256 = strings.Repeat("0", 64)
			})
		}, true, exact, "", "has SHA-256 " + strings.Repeat("0", 64) + ", the given tables' file has"},
		{"table left out of provenance", "tables", func(d string) {
			editRow(t, d, exact, func(r *dataset.Row) { r.Provenance.Tables = r.Provenance.Tables[1:] })
		}, true, exact, "", "provenance leaves out"},
		{"rejected row relabelled exact", "schema", func(d string) {
			rej := rowWhere(t, rows, "rejected", func(r *dataset.Row) bool { return r.Label == dataset.LabelRejected })
			editRow(t, d, rej, func(r *dataset.Row) { r.Label = dataset.LabelExact })
		}, true, -2, "", "an exact row needs values"},
		{"extra row", "row numbering", func(d string) {
			file, lines, _ := shardLines(t, d, last)
			writeLines(t, d, file, append(lines, lines[len(lines)-2]))
		}, true, last + 1, "", "row field 40, want 41"},
		{"extra row, not resealed", "SHA-256", func(d string) {
			file, lines, _ := shardLines(t, d, last)
			writeLines(t, d, file, append(lines, lines[len(lines)-2]))
		}, false, -1, "rows-00002.jsonl", "bytes, the manifest says"},
		{"dropped file", "manifest", func(d string) {
			os.Remove(filepath.Join(d, "rows-00001.jsonl"))
		}, false, -1, "rows-00001.jsonl", "missing"},
		{"unlisted file", "manifest", func(d string) {
			os.WriteFile(filepath.Join(d, "rows-00099.jsonl"), nil, 0o644)
		}, false, -1, "rows-00099.jsonl", "not listed in the manifest"},
		{"renamed schema field", "schema", func(d string) {
			file, lines, i := shardLines(t, d, exact)
			lines[i] = strings.Replace(lines[i], `"label":`, `"lable":`, 1)
			writeLines(t, d, file, lines)
		}, true, exact, "", `unknown field "lable"`},
		{"wrong type", "schema", func(d string) {
			file, lines, i := shardLines(t, d, exact)
			lines[i] = strings.Replace(lines[i], fmt.Sprintf(`"clock":%d`, rows[exact].Clock), `"clock":"0"`, 1)
			writeLines(t, d, file, lines)
		}, true, exact, "", "does not parse as a row"},
		{"non-canonical spacing", "schema", func(d string) {
			file, lines, i := shardLines(t, d, exact)
			lines[i] = strings.Replace(lines[i], `"label":`, `"label": `, 1)
			writeLines(t, d, file, lines)
		}, true, exact, "", "not in the canonical encoding"},
		{"manifest schema version", "schema", func(d string) {
			p := filepath.Join(d, dataset.ManifestName)
			data, _ := os.ReadFile(p)
			os.WriteFile(p, []byte(strings.Replace(string(data), dataset.SchemaVersion, "tbfs-dataset/0", 1)), 0o644)
		}, false, -1, dataset.ManifestName, `schema "tbfs-dataset/0"`},
		{"manifest count", "manifest", func(d string) {
			p := filepath.Join(d, dataset.ManifestName)
			data, _ := os.ReadFile(p)
			os.WriteFile(p, []byte(strings.Replace(string(data), `"exact": `, `"exact": 1`, 1)), 0o644)
		}, false, -1, dataset.ManifestName, "counts"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyDir(t, src)
			tc.corrupt(dir)
			if tc.reseal {
				reseal(t, dir)
			}
			rep := verify(t, l, dir)
			if rep.OK() {
				t.Fatalf("arbiter %s: verify passed a corrupted copy", tc.arbiter)
			}
			for _, p := range rep.Problems {
				rowOK := p.Row == tc.row || (tc.row == -2 && p.Row >= 0)
				if rowOK && (tc.file == "" || p.File == tc.file) && strings.Contains(p.Reason, tc.reason) {
					return
				}
			}
			t.Errorf("arbiter %s: no problem naming row %d file %q with %q; got:", tc.arbiter, tc.row, tc.file, tc.reason)
			for _, p := range rep.Problems {
				t.Log(p)
			}
		})
	}
}

// TestVerifyOtherTables: replayed against tables other than those its
// provenance names (the shared "full" form: the same values, other bytes),
// the sample fails on every table-labelled row: a file whose SHA-256 or
// name differs (the arbiter: the table files' SHA-256), or, where those
// tables hold more metrics (full has DTC for KRKR), the values.
func TestVerifyOtherTables(t *testing.T) {
	if !testenv.HasShared(t, "chesstb") {
		t.Skip("no ../shared/chesstb")
	}
	dir := sampleDir(t)
	rep := verify(t, dirLabeler(t, testenv.Shared(t, "chesstb", "full")), dir)
	failed := map[int]bool{}
	for _, p := range rep.Problems {
		if p.Row >= 0 && strings.HasPrefix(p.Reason, "replay: ") {
			failed[p.Row] = true
		}
	}
	for _, r := range readRows(t, dir) {
		if r.Provenance.Arbiter == dataset.ArbiterTable && r.Label == dataset.LabelExact && !failed[r.Row] {
			t.Errorf("row %d (%s) passed against other tables", r.Row, r.FEN)
		}
	}
}
