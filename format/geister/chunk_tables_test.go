package geister

import (
	"bytes"
	"math/big"
	"math/bits"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/tbfs/tbfs/format/geister/internal/chunktables"
)

// TestChunkTablesGenerated: chunk_tables.go is what its generator writes
// now (run go generate ./format/geister after changing the generator). It
// proves the file is current, not that it is right: the tests below are
// the arbiters of the values.
func TestChunkTablesGenerated(t *testing.T) {
	var want bytes.Buffer
	if err := chunktables.Build().WriteGo(&want, "geister"); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("chunk_tables.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatal("chunk_tables.go differs from the generator's output: run go generate ./format/geister")
	}
}

// TestColexRankExhaustive checks colexRank on every 18-bit set against the
// definition: members p1 < p2 < ... rank as the sum of C(p_i, i), the
// binomials taken from math/big.
func TestColexRankExhaustive(t *testing.T) {
	var c [halfSquares][halfSquares + 1]uint64
	for n := range c {
		for k := range c[n] {
			c[n][k] = new(big.Int).Binomial(int64(n), int64(k)).Uint64()
		}
	}
	for set := uint32(0); set < 1<<halfSquares; set++ {
		var want uint64
		i := 0
		for s := set; s != 0; s &= s - 1 {
			i++
			if p := bits.TrailingZeros32(s); i <= p {
				want += c[p][i]
			}
		}
		if got := colexRank(set); got != want {
			t.Fatalf("colexRank(%#x) = %d, want %d", set, got, want)
		}
	}
}

// naivePext and naivePdep are bit extract and deposit bit by bit: the k-th
// set bit of mask (from the low end) pairs with bit k of the packed value.
func naivePext(src, mask uint32) (out uint32) {
	k := 0
	for q := range 32 {
		if mask&(1<<q) != 0 {
			out |= (src >> q & 1) << k
			k++
		}
	}
	return out
}

func naivePdep(src, mask uint32) (out uint32) {
	k := 0
	for q := range 32 {
		if mask&(1<<q) != 0 {
			out |= (src >> k & 1) << q
			k++
		}
	}
	return out
}

// TestPextPdep18 checks pext18 and pdep18 against bit-by-bit extract and
// deposit: every pair of one 6-bit chunk's mask and source (each chunk
// table entry), then random 18-bit pairs through all three chunks.
func TestPextPdep18(t *testing.T) {
	check := func(src, mask uint32) {
		t.Helper()
		if got, want := pext18(src, mask), naivePext(src, mask); got != want {
			t.Fatalf("pext18(%#x, %#x) = %#x, want %#x", src, mask, got, want)
		}
		if got, want := pdep18(src, mask), naivePdep(src, mask); got != want {
			t.Fatalf("pdep18(%#x, %#x) = %#x, want %#x", src, mask, got, want)
		}
	}
	for chunk := range 3 {
		for mask := range uint32(64) {
			for src := range uint32(64) {
				// pdep18 reads src's low bits, so a deposit onto chunk j
				// takes the bits the lower chunks' masks leave.
				check(src<<(6*chunk), mask<<(6*chunk))
				check(src, mask<<(6*chunk))
			}
		}
	}
	rng := rand.New(rand.NewPCG(19, 6))
	for range 200000 {
		check(rng.Uint32()&(1<<halfSquares-1), rng.Uint32()&(1<<halfSquares-1))
	}
}
