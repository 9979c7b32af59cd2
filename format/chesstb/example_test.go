package chesstb_test

import (
	"context"
	"fmt"
	"log"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/format/chesstb"
	"github.com/tbfs/tbfs/source/mmap"
)

// The example from the format's documentation; the expected answer is the
// reference prober's (seed_cases.tsv).
func ExampleTablebase_Probe() {
	src, err := mmap.New("../../testdata/chesstb")
	if err != nil {
		log.Fatal(err)
	}
	defer src.Close()
	tb, err := chesstb.Open(chesstb.Options{}, src)
	if err != nil {
		log.Fatal(err)
	}
	defer tb.Close()

	pos, err := chess.ParseFEN("8/8/8/5k2/8/8/1Q6/K7 w - - 0 1")
	if err != nil {
		log.Fatal(err)
	}
	res, err := tb.Probe(context.Background(), &pos)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Material, res.Category(), res.WDL, res.DTZ, res.DTM)
	// Output: KQK WIN 2 19 19
}
