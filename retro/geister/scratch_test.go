package geister

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	model "github.com/tbfs/tbfs/format/geister"
)

func TestScratchTotal5(t *testing.T) {
	var tabs Tables
	ctx := context.Background()
	for _, id := range []int{0, 1} {
		m, _ := model.MaterialByID(id)
		st := time.Now()
		if err := Solve(ctx, &tabs, m, Options{Progress: func(p Progress) {
			if p.Phase != "layer" || p.Layer%10 == 0 {
				t.Logf("%v %s %d %d/%d %v", p.Materials, p.Phase, p.Layer, p.Done, p.Total, p.Elapsed)
			}
		}}); err != nil {
			t.Fatal(err)
		}
		t.Logf("%v %v", m, time.Since(st))
	}
	for id := 0; id < 5; id++ {
		m, _ := model.MaterialByID(id)
		v, _ := tabs.Get(m)
		sum := sha256.Sum256(v)
		t.Logf("%s  %s", hex.EncodeToString(sum[:]), m.FileName())
	}
}
