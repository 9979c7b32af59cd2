package main

import (
	"slices"
	"strconv"
	"testing"
)

// TestInOrder finishes the work of a batch in reverse order and checks that
// the results still leave in input order, for one worker and for more
// workers than inputs.
func TestInOrder(t *testing.T) {
	for _, workers := range []int{1, 3, 8} {
		t.Run(strconv.Itoa(workers), func(t *testing.T) {
			const n = 8
			var inputs []string
			for i := range n {
				inputs = append(inputs, strconv.Itoa(i))
			}
			// started reports each job as it begins; a job ends only when
			// its gate opens, so with several workers the later inputs end
			// first.
			started := make(chan int, n)
			gates := make([]chan struct{}, n)
			for i := range gates {
				gates[i] = make(chan struct{})
			}
			work := func(in string) int {
				i, _ := strconv.Atoi(in)
				started <- i
				<-gates[i]
				return i
			}
			go func() {
				// Open the gates newest first among the jobs running at
				// once; each worker count bounds how many run together.
				var running []int
				for opened := 0; opened < n; {
					running = append(running, <-started)
					if len(running) == min(workers, n-opened) {
						slices.Sort(running)
						for _, i := range slices.Backward(running) {
							close(gates[i])
							opened++
						}
						running = running[:0]
					}
				}
			}()
			var got []int
			idles := 0
			feed := func(submit func(string)) error {
				for _, in := range inputs {
					submit(in)
				}
				return nil
			}
			if err := inOrder(workers, feed, work, func(i int) { got = append(got, i) }, func() { idles++ }); err != nil {
				t.Fatal(err)
			}
			if want := []int{0, 1, 2, 3, 4, 5, 6, 7}; !slices.Equal(got, want) {
				t.Errorf("emitted %v, want %v", got, want)
			}
			if idles == 0 {
				t.Error("idle never called, so buffered output would never be flushed mid-batch")
			}
		})
	}
}
