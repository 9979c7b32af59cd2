package geister_test

import (
	"context"
	"fmt"
	"log"

	geistertb "github.com/tbfs/tbfs/format/geister"
	builder "github.com/tbfs/tbfs/retro/geister"
)

// Build every table up to five pieces into a directory, refusing to start
// if that would take more than 1 GiB. Running it again after an interrupt
// skips the materials already written and verified.
func ExampleBuild() {
	err := builder.Build(context.Background(), builder.BuildOptions{
		Out:       "tables",
		UptoTotal: 5,
		MemLimit:  1 << 30,
		Check:     true,
		Logf:      log.Printf,
	})
	if err != nil {
		log.Fatal(err)
	}
}

// Solve one material and its colour-swapped twin in memory, after the
// materials its captures lead to.
func ExampleSolve() {
	ctx := context.Background()
	var tabs builder.Tables
	m := geistertb.Material{PB: 1, PR: 1, OB: 1, OR: 1}
	for _, d := range builder.Dependencies(m) {
		if err := builder.Solve(ctx, &tabs, d, builder.Options{}); err != nil {
			log.Fatal(err)
		}
	}
	if err := builder.Solve(ctx, &tabs, m, builder.Options{}); err != nil {
		log.Fatal(err)
	}
	values, _ := tabs.Get(m)
	fmt.Println(len(values) == int(m.Entries()))
}
