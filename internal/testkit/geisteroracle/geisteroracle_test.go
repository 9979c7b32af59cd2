package geisteroracle_test

import (
	"strings"
	"testing"

	"github.com/tbfs/tbfs/internal/testkit/geisteroracle"
)

// TestParse checks the reader on hand-written files shaped as
// ../shared/geister/oracle/README.md describes them (TSV with a header
// line; the row is values.tsv's first, FORMAT.md §7 example 1, whose own
// blue on C3 is bit 8*(2+1)+(2+1) of pb_hex): the fields come back by
// column name, and a row with a field too many or too few, or a file with
// no row, is an error naming the file.
func TestParse(t *testing.T) {
	const header = "pos_id\tid\tboard\tvalue\tpb_hex\n"
	const row1 = "1\t0\t...r../....../..B.../.R..../....../b.....\t2\t0000000008000000\n"
	rows, err := geisteroracle.Parse(strings.NewReader(header+row1), "values.tsv")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 {
		t.Fatalf("%d rows, want 1", len(rows))
	}
	r := rows[0]
	if r["board"] != "...r../....../..B.../.R..../....../b....." || r.Int(t, "value") != 2 ||
		r.Uint(t, "pos_id") != 1 || r.Hex(t, "pb_hex") != 1<<27 {
		t.Errorf("row %v", r)
	}
	for _, tc := range []struct{ name, text string }{
		{"short row", header + "1\t0\tB.....\t2\n"},
		{"long row", header + "1\t0\tB.....\t2\t0\t9\n"},
		{"header only", header},
		{"empty", ""},
	} {
		if _, err := geisteroracle.Parse(strings.NewReader(tc.text), "values.tsv"); err == nil || !strings.Contains(err.Error(), "values.tsv") {
			t.Errorf("%s: error %v, want one naming values.tsv", tc.name, err)
		}
	}
}
