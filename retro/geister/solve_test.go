package geister

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"testing"

	model "github.com/tbfs/tbfs/format/geister"
)

func TestSolveTotal4(t *testing.T) {
	var tabs Tables
	m := model.Material{PB: 1, PR: 1, OB: 1, OR: 1}
	if err := Solve(context.Background(), &tabs, m, Options{}); err != nil {
		t.Fatal(err)
	}
	v, _ := tabs.Get(m)
	sum := sha256.Sum256(v)
	if got := hex.EncodeToString(sum[:]); got != "7a0856354e94495c822d5d7deb8b7259e9d8910fca759b4f5e214595a4bfe5d1" {
		t.Errorf("sha256 %s", got)
	}
	if err := Check(context.Background(), &tabs, m, 0); err != nil {
		t.Error(err)
	}
}
