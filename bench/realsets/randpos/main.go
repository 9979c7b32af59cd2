// Command randpos prints random legal positions of the materials named on
// its command line, one FEN a line, for the real-set comparisons: each
// position's material is chosen uniformly, then placed as
// dataset.RandomPosition places it (either colour first, either side to
// move, a half-move clock uniform in [-lo, -hi], no castling or en
// passant). The same seed and materials give the same positions.
//
// usage: randpos -n N [-seed S] [-lo 0] [-hi 99] MATERIAL...
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"

	"github.com/tbfs/tbfs/dataset"
)

// maxDraws bounds the draws for one position, so a material with almost no
// legal placement fails instead of hanging.
const maxDraws = 100000

func main() {
	n := flag.Int("n", 10000, "positions to print")
	seed := flag.Uint64("seed", 1, "seed of the draws")
	lo := flag.Int("lo", 0, "smallest half-move clock")
	hi := flag.Int("hi", 99, "largest half-move clock")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: randpos -n N [-seed S] [-lo 0] [-hi 99] MATERIAL...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if err := run(*n, *seed, *lo, *hi, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "randpos:", err)
		os.Exit(1)
	}
}

func run(n int, seed uint64, lo, hi int, mats []string) error {
	if len(mats) == 0 {
		return errors.New("no materials given")
	}
	if lo < 0 || hi < lo {
		return fmt.Errorf("clock range [%d, %d] is empty or negative", lo, hi)
	}
	rng := rand.New(rand.NewPCG(seed, 0x7265_616c_7365_7473))
	w := bufio.NewWriter(os.Stdout)
	for range n {
		m := mats[rng.IntN(len(mats))]
		found := false
		for range maxDraws {
			pos, ok, err := dataset.RandomPosition(rng, m, lo, hi)
			if err != nil {
				return err
			}
			if ok {
				fmt.Fprintln(w, pos.FEN())
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("%s: no legal placement in %d draws", m, maxDraws)
		}
	}
	return w.Flush()
}
