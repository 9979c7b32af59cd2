package geister_test

import (
	"context"
	"fmt"

	geistertb "github.com/tbfs/tbfs/format/geister"
	"github.com/tbfs/tbfs/geister"
	"github.com/tbfs/tbfs/source/mmap"
)

// Probe the first worked example of FORMAT.md §7 (reference value 2: the
// side to move loses in two plies) from the committed id000 fixtures.
func ExampleTablebase_Probe() {
	src, err := mmap.New("../../testdata/geister")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer src.Close()
	tb, err := geistertb.Open(geistertb.Options{}, src)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tb.Close()

	p, err := geister.ParseBoard("...r../....../..B.../.R..../....../b.....")
	if err != nil {
		fmt.Println(err)
		return
	}
	m, idx, _ := geistertb.Rank(p)
	r, err := tb.Probe(context.Background(), p)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(m.FileName(), idx)
	fmt.Println(r.Value, r.Outcome, r.Plies)
	// Output:
	// id000_pb1pr1ob1or1_obsblk.bin 97690
	// 2 loss 2
}

// Enumerate a material's table: every index unranks to the canonical
// position stored there, which ranks back to the index.
func ExampleUnrank() {
	m, _ := geistertb.ParseMaterial("pb1pr1ob1or2")
	p, _ := geistertb.Unrank(m, 3051397) // FORMAT.md §7, example 2
	_, idx, _ := geistertb.Rank(p)
	fmt.Println(m.ID(), m.Entries(), m.BlockSize(), idx)
	// Output:
	// 1 11309760 3 3051397
}
