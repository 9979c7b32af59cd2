package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/cmd/internal/cli"
	"github.com/tbfs/tbfs/retro"
)

// mateLong is mate's help text.
const mateLong = `Proves by exhaustive search whether the side to move mates, or is mated
whatever it plays, within N moves, and prints the shortest such result with
one proving line. FENs come from the arguments ('_' may stand for spaces) or,
when there are none, one per line from standard input.

Exit status: 0 every FEN answered, 1 some could not be (bad FEN,
cancelled), 2 usage error.`

// mateJSON is one answer of tbprobe mate --json.
type mateJSON struct {
	FEN    string   `json:"fen"`
	Result string   `json:"result"` // "mate", "mated" or "none"
	Moves  int      `json:"moves"`
	Line   []string `json:"line"`
}

// newMateCmd is "tbprobe mate".
func newMateCmd() *cobra.Command {
	var o mateOptions
	cmd := &cobra.Command{
		Use:   "mate [flags] [FEN...]",
		Short: "Prove or refute a forced mate by exhaustive search",
		Long:  mateLong,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cli.Exit(runMateCmd(cmd, o, args))
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&o.maxMoves, "max", 3, "largest number of the winner's moves to search")
	fs.BoolVar(&o.noRule50, "no-rule50", false, "ignore the 50-move rule (by default a mate after the clock reaches 100 plies does not count)")
	fs.BoolVar(&o.asJSON, "json", false, "print one JSON object per FEN")
	return cmd
}

// mateOptions are mate's flags.
type mateOptions struct {
	maxMoves         int
	noRule50, asJSON bool
}

// runMateCmd answers every FEN and returns the exit status: 0 when every
// FEN was answered, 1 when some could not be (bad FEN, cancelled), 2 for a
// usage error.
func runMateCmd(cmd *cobra.Command, o mateOptions, fens []string) int {
	ctx, stdin, stdout, stderr := cmd.Context(), cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
	if o.maxMoves < 0 || o.maxMoves > 1000 {
		fmt.Fprintf(stderr, "tbprobe mate: --max %d is out of range (0..1000)\n", o.maxMoves)
		return 2
	}
	if len(fens) == 0 {
		sc := bufio.NewScanner(stdin)
		for sc.Scan() {
			if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
				fens = append(fens, line)
			}
		}
		if err := sc.Err(); err != nil {
			fmt.Fprintf(stderr, "tbprobe mate: reading standard input: %v\n", err)
			return 1
		}
		if len(fens) == 0 {
			cli.UsageError(cmd, "no FEN given")
			return 2
		}
	}
	enc := json.NewEncoder(stdout)
	status := 0
	for _, fen := range fens {
		pos, err := chess.ParseFEN(fen)
		if err != nil {
			fmt.Fprintf(stderr, "tbprobe mate: %q: %v\n", fen, err)
			status = 1
			continue
		}
		res, err := retro.ProveMate(ctx, pos, o.maxMoves, !o.noRule50)
		if err != nil {
			fmt.Fprintf(stderr, "tbprobe mate: %s: %v\n", pos.FEN(), err)
			status = 1
			continue
		}
		line := make([]string, len(res.Line))
		for i, m := range res.Line {
			line[i] = m.UCI()
		}
		if o.asJSON {
			if err := enc.Encode(mateJSON{FEN: pos.FEN(), Result: res.Kind.String(), Moves: res.Moves, Line: line}); err != nil {
				fmt.Fprintf(stderr, "tbprobe mate: %v\n", err)
				return 1
			}
			continue
		}
		var verdict string
		switch res.Kind {
		case retro.Mates:
			verdict = fmt.Sprintf("mate in %d", res.Moves)
		case retro.Mated:
			verdict = fmt.Sprintf("mated in %d", res.Moves)
		default:
			verdict = fmt.Sprintf("no mate within %d", o.maxMoves)
		}
		if len(line) > 0 {
			verdict += ": " + strings.Join(line, " ")
		}
		fmt.Fprintf(stdout, "%s\t%s\n", pos.FEN(), verdict)
	}
	return status
}
