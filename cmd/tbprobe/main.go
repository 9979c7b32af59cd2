// Command tbprobe answers tablebase questions from the command line.
//
// This is a minimal dispatcher so that the mate subcommand builds; the full
// front end replaces it.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run dispatches a subcommand and returns the exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: tbprobe mate [flags] FEN...")
		return 2
	}
	switch args[0] {
	case "mate":
		return runMate(ctx, args[1:], stdin, stdout, stderr)
	case "geister":
		return runGeister(ctx, args[1:], stdin, stdout, stderr)
	}
	fmt.Fprintf(stderr, "tbprobe: unknown subcommand %q\n", args[0])
	return 2
}
