// Command genrows writes the battery's shipped row file from its seeds,
// every expected property computed by the row's arbiter:
//
//	go run ./battery/internal/genrows -tables ../shared/chesstb/shipped > battery/rows.tsv
//
// A change to the shipped rows' expected values is its own commit,
// reviewed against the checker (TestShippedRowsCheck), never part of an
// engine candidate.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/tbfs/tbfs/battery"
	"github.com/tbfs/tbfs/format/chesstb"
	"github.com/tbfs/tbfs/source/mmap"
)

func main() {
	tables := flag.String("tables", "", "directory of chesstb tables (the shared shipped set)")
	flag.Parse()
	if err := run(*tables); err != nil {
		fmt.Fprintln(os.Stderr, "genrows:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	src, err := mmap.New(dir)
	if err != nil {
		return err
	}
	tb, err := chesstb.Open(chesstb.Options{}, src)
	if err != nil {
		return err
	}
	defer tb.Close()
	rows, err := battery.Generate(context.Background(), tb)
	if err != nil {
		return err
	}
	fmt.Println("# The shipped rows of tbprobe battery, written by battery/internal/genrows;")
	fmt.Println("# every expected property comes from the row's arbiter (rules, tables, prover:N).")
	return battery.WriteRows(os.Stdout, rows)
}
