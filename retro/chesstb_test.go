package retro

import (
	"context"
	"testing"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/format/chesstb"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/source/mmap"
)

// TestSolveMaterialMatchesChesstb compares every position of each solved
// material with the reference generator's DTM tables (read through
// format/chesstb from ../shared/chesstb/full): 0 mismatches allowed. For
// KPKP this includes every en-passant position, which the tables do not
// store: chesstb answers the FEN with its en-passant square through the
// reference's overlay (the stored value of the board, or an en-passant
// capture when that is better).
func TestSolveMaterialMatchesChesstb(t *testing.T) {
	src, err := mmap.New(testenv.Shared(t, "chesstb", "full"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	tb, err := chesstb.Open(chesstb.Options{BlockCacheBytes: 256 << 20}, src)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	ctx := context.Background()
	for _, mat := range materialsUnderTest() {
		t.Run(mat, func(t *testing.T) {
			table := solved(t, mat)
			n, bad, ep := 0, 0, 0
			step := 1
			if testing.Short() {
				step = 97 // a spread sample; the full sweep runs without -short
			}
			i := 0
			table.Each(func(p chess.Position, v Value) bool {
				i++
				if i%step != 0 {
					return true
				}
				n++
				if p.EnPassant() != chess.NoSquare {
					ep++
				}
				want, err := chesstbValue(ctx, tb, &p)
				if err != nil {
					t.Fatalf("%s: chesstb: %v", p.FEN(), err)
				}
				if want != v {
					bad++
					if bad <= 20 {
						t.Errorf("%s: solved %v, chesstb %v", p.FEN(), v, want)
					}
				}
				return true
			})
			if bad > 0 {
				t.Errorf("%s: %d of %d positions differ from the chesstb DTM table", mat, bad, n)
			}
			t.Logf("%s: %d positions (%d en passant) compared with chesstb", mat, n, ep)
		})
	}
}

// chesstbValue reads pos's DTM the way the reference prober reports it:
// the WDL class gives win, loss or draw (cursed and blessed included), the
// DTM its distance.
func chesstbValue(ctx context.Context, tb *chesstb.Tablebase, p *chess.Position) (Value, error) {
	w, err := tb.WDL(ctx, p)
	if err != nil {
		return Value{}, err
	}
	if w == 0 {
		return Draw, nil
	}
	d, err := tb.DTM(ctx, p)
	if err != nil {
		return Value{}, err
	}
	d = max(d, -d)
	if w > 0 {
		return Win(uint32(d)), nil
	}
	return Loss(uint32(d)), nil
}

// TestSolveMaterialWithChesstbSubs solves KPK with its promotions answered
// by the reference KQK, KRK, KBK and KNK tables instead of recursive solves
// (and, without -short or the race detector, KPKP with its captures,
// en-passant ones included, and promotions answered by KPK, KQKP, KRKP,
// KBKP and KNKP), and requires the same table as the recursive solve
// (itself compared with chesstb above).
func TestSolveMaterialWithChesstbSubs(t *testing.T) {
	src, err := mmap.New(testenv.Shared(t, "chesstb", "full"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	tb, err := chesstb.Open(chesstb.Options{}, src)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	sub := ProberFunc(func(ctx context.Context, p chess.Position) (Value, error) {
		return chesstbValue(ctx, tb, &p)
	})
	mats := []string{"KPK"}
	if !testing.Short() && !raceEnabled {
		mats = append(mats, "KPKP")
	}
	for _, mat := range mats {
		t.Run(mat, func(t *testing.T) {
			got, err := SolveMaterial(context.Background(), mat, Options{Sub: sub})
			if err != nil {
				t.Fatal(err)
			}
			want := solved(t, mat)
			if len(got.dtm) != len(want.dtm) || len(got.epDTM) != len(want.epDTM) {
				t.Fatalf("index sizes %d+%d and %d+%d", len(got.dtm), len(got.epDTM), len(want.dtm), len(want.epDTM))
			}
			for i := range got.dtm {
				if got.dtm[i] != want.dtm[i] {
					t.Fatalf("index %d: %d with chesstb sub-tables, %d recursively", i, got.dtm[i], want.dtm[i])
				}
			}
			for j := range got.epDTM {
				if got.epKeys[j] != want.epKeys[j] || got.epDTM[j] != want.epDTM[j] {
					t.Fatalf("en-passant slot %d: key %d value %d with chesstb sub-tables, key %d value %d recursively",
						j, got.epKeys[j], got.epDTM[j], want.epKeys[j], want.epDTM[j])
				}
			}
		})
	}
}
