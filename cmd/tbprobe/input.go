package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
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
