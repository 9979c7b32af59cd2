package geister

import (
	"context"
	"testing"

	"github.com/tbfs/tbfs/internal/testkit/geisteroracle"
	"github.com/tbfs/tbfs/source/s3"
	"github.com/tbfs/tbfs/source/s3/s3test"
)

// TestOracleS3 reads the shared tables through the S3 transport (a
// versitygw server on loopback), raw and zstd, and checks every oracle row
// (every 8th values.tsv row and moves.tsv parent under -short, every 24th
// under the race detector).
func TestOracleS3(t *testing.T) {
	ctx := context.Background()
	open := func(dir string) *Tablebase {
		srv, _ := s3test.ServeDir(t, dir)
		src, err := s3.New(ctx, srv.Config("tbfs", ""))
		if err != nil {
			t.Fatal(err)
		}
		tb, err := Open(Options{}, src)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			tb.Close()
			src.Close()
		})
		return tb
	}
	tbs := map[string]*Tablebase{
		"s3 raw":  open(rawTables(t)),
		"s3 zstd": open(zstdOnly(t, sharedTables(t))),
	}
	every := 1
	switch {
	case raceEnabled:
		every = 24
	case testing.Short():
		every = 8
	}
	var values, moves []geisteroracle.Row
	for i, r := range geisteroracle.Shared(t, "values.tsv") {
		if i%every == 0 {
			values = append(values, r)
		}
	}
	parents := map[string]int{}
	for _, r := range geisteroracle.Shared(t, "moves.tsv") {
		if _, ok := parents[r["board"]]; !ok {
			parents[r["board"]] = len(parents)
		}
		if parents[r["board"]]%every == 0 {
			moves = append(moves, r)
		}
	}
	checkValues(t, tbs, values)
	checkMoves(t, tbs, moves)
}
