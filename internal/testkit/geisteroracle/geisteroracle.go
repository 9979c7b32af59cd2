// Package geisteroracle reads the Geister reference oracle for tests: the
// TSV files of ../shared/geister/oracle (materials.tsv, rank.tsv,
// values.tsv, moves.tsv; their columns are described in that folder's
// README.md) and the subsets committed under testdata/geister
// (values_id000.tsv, moves_id000.tsv). A row is its fields by column
// name, as the reference printed them. The rows are the arbiter, so a
// malformed file is an error, never a guess.
package geisteroracle

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// Row is one line of an oracle file: each field by its column's name.
type Row map[string]string

// maxLine bounds a line of an oracle file (the longest are a few hundred
// bytes; bufio.Scanner's default of 64 KiB would be enough too).
const maxLine = 1 << 20

// Parse reads an oracle file's text: a header line naming the columns,
// then tab-separated rows with exactly one field per column. A file with
// no row is an error: a sweep over it would check nothing. name prefixes
// the errors.
func Parse(r io.Reader, name string) ([]Row, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	var header []string
	var rows []Row
	for n := 1; sc.Scan(); n++ {
		fields := strings.Split(sc.Text(), "\t")
		if header == nil {
			header = fields
			continue
		}
		if len(fields) != len(header) {
			return nil, fmt.Errorf("%s:%d: %d fields, the header has %d", name, n, len(fields), len(header))
		}
		row := make(Row, len(fields))
		for i, h := range header {
			row[h] = fields[i]
		}
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no rows", name)
	}
	return rows, nil
}

// ReadFile parses the oracle file at path.
func ReadFile(path string) ([]Row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Parse(f, filepath.Base(path))
}

// Read is ReadFile failing the test on any error.
func Read(tb testing.TB, path string) []Row {
	tb.Helper()
	rows, err := ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return rows
}

// Shared reads the file name of the reference oracle in
// ../shared/geister/oracle (testenv.Shared: the test skips without the
// shared data, and fails under CI).
func Shared(tb testing.TB, name string) []Row {
	tb.Helper()
	return Read(tb, testenv.Shared(tb, "geister", "oracle", name))
}

// Testdata reads the committed oracle subset name in testdata/geister.
func Testdata(tb testing.TB, name string) []Row {
	tb.Helper()
	return Read(tb, testenv.Testdata(tb, "geister", name))
}

// Uint returns column col as a decimal unsigned number, failing the test
// when it is not one.
func (r Row) Uint(tb testing.TB, col string) uint64 {
	tb.Helper()
	v, err := strconv.ParseUint(r[col], 10, 64)
	if err != nil {
		tb.Fatalf("column %s: %v", col, err)
	}
	return v
}

// Int returns column col as a decimal number, failing the test when it is
// not one.
func (r Row) Int(tb testing.TB, col string) int {
	tb.Helper()
	v, err := strconv.Atoi(r[col])
	if err != nil {
		tb.Fatalf("column %s: %v", col, err)
	}
	return v
}

// Hex returns column col as a hexadecimal number (the oracle's bitboard
// columns), failing the test when it is not one.
func (r Row) Hex(tb testing.TB, col string) uint64 {
	tb.Helper()
	v, err := strconv.ParseUint(r[col], 16, 64)
	if err != nil {
		tb.Fatalf("column %s: %v", col, err)
	}
	return v
}
