// Command tbprobe answers endgame tablebase questions from the command line:
// chess positions probed in the chesstb and Syzygy tables (the main job, one FEN per
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
// with version, completion (bash, zsh, fish) and man DIR beside them. Each
// command is built in its own file by a newXCmd function; main.go adds it
// to the root. Tables come from --tables URLs (a directory, file://, s3://,
// http(s):// or a plugin's scheme); without one, the fixture tables built
// into the binary answer, so the README's first command works anywhere.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/tbfs/tbfs/internal/cli"
)

func main() {
	// Nothing reads heap profiles: sampling allocations for one would only
	// walk stacks and keep their records.
	runtime.MemProfileRate = 0
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes the command line args and returns the exit status: 0 done,
// 1 failed, 2 usage error.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cli.Execute(newRootCmd(ctx, stdin, stdout, stderr), args)
}

// newRootCmd is the whole command tree on the given streams.
func newRootCmd(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := newProbeCmd()
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetContext(ctx)
	root.AddCommand(newBenchCmd(), newLsCmd(), newInfoCmd(), newVerifyCmd(), newServeCmd(), newMateCmd(), newGeisterCmd(), newBatteryCmd(), newDatasetCmd())
	cli.Setup(root)
	return root
}
