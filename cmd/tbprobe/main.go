// Command tbprobe answers endgame tablebase questions from the command line:
// chess positions probed in the chesstb and Syzygy tables (the main job, one FEN per
// argument or per line of standard input), and the subcommands
//
//	bench    probes/s, latency and transport cost over a file of positions
//	ls       the materials and table kinds available, with sizes and forms
//	info     the header facts of one material's tables
//	verify   decode every block of every table, recount the .info totals
//	publish  verify a folder of tables, write their manifests and its listing
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

	"github.com/tbfs/tbfs/cmd/internal/cli"
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
	root := newRootCmd(ctx, stdin, stdout, stderr, subcommandsFor(args)...)
	return cli.Execute(root, args)
}

// subcommands builds each of tbprobe's commands beside the probe itself,
// by name, in the order help lists them.
var subcommands = []struct {
	name  string
	build func() *cobra.Command
}{
	{"bench", newBenchCmd}, {"ls", newLsCmd}, {"info", newInfoCmd}, {"verify", newVerifyCmd},
	{"publish", newPublishCmd}, {"serve", newServeCmd}, {"mate", newMateCmd}, {"geister", newGeisterCmd},
	{"battery", newBatteryCmd}, {"dataset", newDatasetCmd},
}

// subcommandsFor builds the subcommands a run with args can reach. When
// args starts with a subcommand's name that run reaches only that one (or,
// for cli.Setup's version, none), so the others' flag sets, a third of
// start-up's own work, are not built; any other run (the probe itself,
// help, completion, man) gets them all.
func subcommandsFor(args []string) []*cobra.Command {
	if len(args) > 0 {
		if args[0] == "version" {
			return nil
		}
		for _, s := range subcommands {
			if s.name == args[0] {
				return []*cobra.Command{s.build()}
			}
		}
	}
	all := make([]*cobra.Command, len(subcommands))
	for i, s := range subcommands {
		all[i] = s.build()
	}
	return all
}

// newRootCmd is the command tree on the given streams: the probe, the
// given subcommands and cli.Setup's.
func newRootCmd(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, subs ...*cobra.Command) *cobra.Command {
	root := newProbeCmd()
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetContext(ctx)
	root.AddCommand(subs...)
	cli.Setup(root)
	return root
}
