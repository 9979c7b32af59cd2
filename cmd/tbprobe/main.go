// Command tbprobe answers endgame tablebase questions from the command line:
// chess positions probed in the chesstb tables (the main job, one FEN per
// argument or per line of standard input), and the subcommands
//
//	bench    probes/s, latency and transport cost over a file of positions
//	ls       the materials and table kinds available, with sizes and forms
//	info     the header facts of one material's tables
//	verify   decode every block of every table, recount the .info totals
//	serve    an HTTP API compatible with the lichess tablebase server
//	mate     prove or refute a forced mate (retro.ProveMate)
//	geister  probe Geister perfect-information tables
//	battery  referee a UCI chess engine against arbiter-computed rows
//
// Tables come from --tables URLs (a directory, file://, s3://, http(s)://
// or a plugin's scheme); without one, the fixture tables built into the
// binary answer, so the README's first command works anywhere.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run dispatches a subcommand, or the main probe command when the first
// argument names none, and returns the exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		rest := args[1:]
		switch args[0] {
		case "mate":
			return runMate(ctx, rest, stdin, stdout, stderr)
		case "geister":
			return runGeister(ctx, rest, stdin, stdout, stderr)
		case "bench":
			return runBench(ctx, rest, stdout, stderr)
		case "ls":
			return runLs(ctx, rest, stdout, stderr)
		case "info":
			return runInfo(ctx, rest, stdout, stderr)
		case "verify":
			return runVerify(ctx, rest, stdout, stderr)
		case "serve":
			return runServe(ctx, rest, stdout, stderr)
		case "battery":
			return runBattery(ctx, rest, stdout, stderr)
		}
	}
	return runProbe(ctx, args, stdin, stdout, stderr)
}
