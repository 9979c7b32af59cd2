package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
)

// maxInputLine bounds one line of standard input (a FEN or a board), so a
// stream without newlines cannot grow memory without limit.
const maxInputLine = 1 << 20

// eachInput calls answer for every argument, or, with no arguments, for
// every non-empty line of stdin that is not a '#' comment, as each line
// arrives (streaming: nothing is collected first). It stops early when ctx
// ends. The error says what stopped the stream: a read failure (named by
// what, such as "FENs") or the context's error; nil after a complete run.
func eachInput(ctx context.Context, args []string, stdin io.Reader, what string, answer func(string)) error {
	if len(args) > 0 {
		for _, a := range args {
			if ctx.Err() != nil {
				break
			}
			answer(a)
		}
		return ctx.Err()
	}
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 4096), maxInputLine)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		answer(line)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading %s: %w", what, err)
	}
	return ctx.Err()
}

// inOrder runs work on each input that feed submits, on up to workers
// goroutines at once, and hands the results to emit one at a time in the
// order the inputs came. Each result leaves as soon as it and every earlier
// one are done, so a slow position delays only the output behind it, never
// the work. Before emit would wait for a result still being worked on,
// inOrder calls idle (the caller flushes its output there): a client that
// sends one line and waits for its answer is never left waiting on a
// buffer. The error is feed's.
func inOrder[R any](workers int, feed func(submit func(string)) error, work func(string) R, emit func(R), idle func()) error {
	if workers <= 1 {
		err := feed(func(in string) {
			emit(work(in))
			idle()
		})
		idle()
		return err
	}
	type job struct {
		in  string
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
		err := feed(func(in string) {
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
