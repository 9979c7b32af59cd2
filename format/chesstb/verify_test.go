package chesstb

import (
	"context"
	"errors"
	"testing"

	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// TestParseTableName: the names the generator writes (its README's layout)
// parse; anything else does not.
func TestParseTableName(t *testing.T) {
	tests := []struct {
		name string
		kind Kind
		mat  string
		ok   bool
	}{
		{"wdl/KQK.lzw", KindWDL, "KQK", true},
		{"dtz/KQKR.lzdtz", KindDTZ, "KQKR", true},
		{"KPK.lzdtc", KindDTC, "KPK", true},
		{"dtm/KBNK.lzdtm", KindDTM, "KBNK", true},
		{"dtm50/KRKR.lzdtm50", KindDTM50, "KRKR", true},
		{"wdl/KQK.lzw.bak", 0, "", false},
		{"README.md", 0, "", false},
		{"wdl/KKQ.lzw", 0, "", false},  // not a canonical name
		{"wdl/KRKQ.lzw", 0, "", false}, // the stronger side is written first
		{"pair/KPpK.lzw", 0, "", false},
		{".lzw", 0, "", false},
	}
	for _, tt := range tests {
		k, m, ok := ParseTableName(tt.name)
		if ok != tt.ok || (ok && (k != tt.kind || m != tt.mat)) {
			t.Errorf("ParseTableName(%q) = %v, %q, %v; want %v, %q, %v", tt.name, k, m, ok, tt.kind, tt.mat, tt.ok)
		}
	}
}

// TestVerifyTableFixtures: every block of every committed fixture table
// decodes (they are the reference generator's output), progress reaches
// the total, and a material that is absent or misspelt is an error.
func TestVerifyTableFixtures(t *testing.T) {
	tb := openDirs(t, Options{}, testenv.Testdata(t, "chesstb", "packs"), testenv.Testdata(t, "chesstb"))
	ctx := context.Background()
	for _, mat := range []string{"KQK", "KPK", "KQKR", "KRKR"} {
		for k := range numKinds {
			info, err := tb.TableInfo(ctx, k, mat)
			if errors.Is(err, ErrNoTable) {
				continue
			}
			if err != nil {
				t.Fatalf("%s %s: %v", mat, k, err)
			}
			var last, total int64
			bad, err := tb.VerifyTable(ctx, k, mat, func(d, n int64) { last, total = d, n })
			if err != nil || len(bad) != 0 {
				t.Errorf("%s %s: %v %v", mat, k, bad, err)
			}
			if want := info.Frames[0].Blocks + info.Frames[1].Blocks; last != total || total != want {
				t.Errorf("%s %s: progress %d/%d, header has %d blocks", mat, k, last, total, want)
			}
			if err := tb.VerifyChecksum(ctx, k, mat); err != nil {
				t.Errorf("%s %s: checksum: %v", mat, k, err)
			}
		}
	}
	if _, err := tb.TableInfo(ctx, KindWDL, "KQQKQ"); !errors.Is(err, ErrNoTable) {
		t.Errorf("absent material: %v", err)
	}
	if _, err := tb.TableInfo(ctx, KindWDL, "KRKQ"); err == nil {
		t.Errorf("non-canonical name accepted")
	}
}
