package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"unicode"
)

// maxInputLine bounds one line of standard input (a FEN or a board), so a
// stream without newlines cannot grow memory without limit.
const maxInputLine = 1 << 20

// inputLine is one input (an argument or a line of stdin), or, when err is
// set, a line that could not be taken (too long), so that line alone fails.
type inputLine struct {
	text string
	err  error
}

// eachInput calls answer for every argument, or, with no arguments, for
// every non-empty line of stdin that is not a '#' comment, as each line
// arrives (streaming: nothing is collected first). A line over
// maxInputLine bytes is skipped to its end and handed on with an error, so
// it fails alone and the lines after it are still answered. It stops early
// when ctx ends. The error says what stopped the stream: a read failure
// (named by what, such as "FENs") or the context's error; nil after a
// complete run.
func eachInput(ctx context.Context, args []string, stdin io.Reader, what string, answer func(inputLine)) error {
	if len(args) > 0 {
		for _, a := range args {
			if ctx.Err() != nil {
				break
			}
			answer(inputLine{text: a})
		}
		return ctx.Err()
	}
	r := bufio.NewReaderSize(stdin, maxInputLine)
	for n := 1; ; n++ {
		raw, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			head := string(raw[:64])
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = r.ReadSlice('\n')
			}
			answer(inputLine{text: head + "…", err: fmt.Errorf("line %d is over %d bytes; skipped", n, maxInputLine)})
		} else if line := strings.TrimSpace(string(raw)); line != "" && !strings.HasPrefix(line, "#") {
			answer(inputLine{text: line})
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err == io.EOF {
			return ctx.Err()
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", what, err)
		}
	}
}

// shown is input text as it may go into messages: verbatim when every
// character is printable, else quoted, so escape codes in the input reach a
// terminal as text, never as commands.
func shown(s string) string {
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// inOrder runs work on each input that feed submits, on up to workers
// goroutines at once, and hands the results to emit one at a time in the
// order the inputs came. Each result leaves as soon as it and every earlier
// one are done, so a slow position delays only the output behind it, never
// the work. Before emit would wait for a result still being worked on,
// inOrder calls idle (the caller flushes its output there): a client that
// sends one line and waits for its answer is never left waiting on a
// buffer. The error is feed's.
func inOrder[I, R any](workers int, feed func(submit func(I)) error, work func(I) R, emit func(R), idle func()) error {
	if workers <= 1 {
		err := feed(func(in I) {
			emit(work(in))
			idle()
		})
		idle()
		return err
	}
	type job struct {
		in  I
		out chan R
	}
	jobs := make(chan job)
	// pending bounds how far the input may run ahead of the output, so
	// memory stays bounded behind one slow position.
	pending := make(chan chan R, 16*workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for j := range jobs {
				j.out <- work(j.in)
			}
		})
	}
	feedErr := make(chan error, 1)
	go func() {
		err := feed(func(in I) {
			out := make(chan R, 1)
			pending <- out
			jobs <- job{in, out}
		})
		close(jobs)
		close(pending)
		feedErr <- err
	}()
	for {
		// Whatever is about to be waited for, the next input or the
		// next result, the output so far leaves first.
		out, ok := receive(pending, idle)
		if !ok {
			break
		}
		r, _ := receive(out, idle)
		emit(r)
	}
	idle()
	wg.Wait()
	return <-feedErr
}

// receive takes the next value from ch, calling idle first when it would
// have to wait for it.
func receive[T any](ch <-chan T, idle func()) (T, bool) {
	select {
	case v, ok := <-ch:
		return v, ok
	default:
		idle()
		v, ok := <-ch
		return v, ok
	}
}

// MaxParallel is the most workers --parallel gets. Each worker holds one
// position's probe (a few KiB) and the output may run 16 answers per
// worker behind, so 256 bound a batch to some MiB; more would add no speed
// (a remote source takes 32 requests at once by default, a local one is
// bound by the cores) but could exhaust memory: --parallel 100000000 once
// grew to 24 GB.
const MaxParallel = 256

// clampParallel checks a --parallel value: below 1 is an error; above
// MaxParallel is lowered to it, saying so on stderr.
func clampParallel(cmd string, n int, stderr io.Writer) (int, error) {
	if n < 1 {
		return 0, fmt.Errorf("--parallel %d: want at least 1", n)
	}
	if n > MaxParallel {
		fmt.Fprintf(stderr, "%s: --parallel %d: using %d, the most workers a batch gets\n", cmd, n, MaxParallel)
		return MaxParallel, nil
	}
	return n, nil
}
