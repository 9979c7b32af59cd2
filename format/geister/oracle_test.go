package geister

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// oracleRow is one line of an oracle TSV file, by column name.
type oracleRow map[string]string

// readTSV reads a TSV file with a header line.
func readTSV(t testing.TB, path string) []oracleRow {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var header []string
	var rows []oracleRow
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "\t")
		if header == nil {
			header = fields
			continue
		}
		if len(fields) != len(header) {
			t.Fatalf("%s: line with %d fields, header has %d", path, len(fields), len(header))
		}
		r := make(oracleRow, len(fields))
		for i, h := range header {
			r[h] = fields[i]
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatalf("%s: no rows", path)
	}
	return rows
}

// oracle reads a file of the reference oracle in ../shared/geister/oracle.
func oracle(t testing.TB, name string) []oracleRow {
	t.Helper()
	return readTSV(t, testenv.Shared(t, "geister", "oracle", name))
}

func (r oracleRow) uint(t testing.TB, col string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(r[col], 10, 64)
	if err != nil {
		t.Fatalf("column %s: %v", col, err)
	}
	return v
}

func (r oracleRow) int(t testing.TB, col string) int {
	t.Helper()
	v, err := strconv.Atoi(r[col])
	if err != nil {
		t.Fatalf("column %s: %v", col, err)
	}
	return v
}

func (r oracleRow) hex(t testing.TB, col string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(r[col], 16, 64)
	if err != nil {
		t.Fatalf("column %s: %v", col, err)
	}
	return v
}
