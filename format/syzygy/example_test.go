package syzygy_test

import (
	"context"
	"fmt"
	"log"
	"path/filepath"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/format/syzygy"
	"github.com/tbfs/tbfs/source/mmap"
)

// Example probes a position of the committed fixtures; the values are
// Fathom's, from its row in testdata/syzygy/probe.tsv.
func Example() {
	src, err := mmap.New(filepath.Join("..", "..", "testdata", "syzygy"))
	if err != nil {
		log.Fatal(err)
	}
	defer src.Close()
	tb, err := syzygy.Open(syzygy.Options{}, src)
	if err != nil {
		log.Fatal(err)
	}
	defer tb.Close()

	ctx := context.Background()
	pos, err := chess.ParseFEN("KQ6/8/8/6k1/8/8/8/8 w - - 0 1")
	if err != nil {
		log.Fatal(err)
	}
	wdl, err := tb.WDL(ctx, &pos)
	if err != nil {
		log.Fatal(err)
	}
	dtz, err := tb.DTZ(ctx, &pos)
	if err != nil {
		log.Fatal(err)
	}
	root, err := tb.Root(ctx, &pos)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("wdl", wdl, "dtz", dtz, "best", root.Best)
	// Output: wdl 2 dtz 17 best a8b7
}
