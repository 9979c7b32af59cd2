package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/retro"
)

// mateUsage is printed for -h and for usage errors.
const mateUsage = `usage: tbprobe mate [--max N] [--no-rule50] [--json] FEN...

Proves by exhaustive search whether the side to move mates, or is mated
whatever it plays, within N moves, and prints the shortest such result with
one proving line. FENs come from the arguments ('_' may stand for spaces) or,
when there are none, one per line from standard input.
`

// mateJSON is one answer of tbprobe mate --json.
type mateJSON struct {
	FEN    string   `json:"fen"`
	Result string   `json:"result"` // "mate", "mated" or "none"
	Moves  int      `json:"moves"`
	Line   []string `json:"line"`
}

// runMate implements "tbprobe mate". It returns 0 when every FEN was
// answered, 1 when some could not be (bad FEN, cancelled), 2 for a usage
// error.
func runMate(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, mateUsage)
		fs.PrintDefaults()
	}
	maxMoves := fs.Int("max", 3, "largest number of the winner's moves to search")
	noRule50 := fs.Bool("no-rule50", false, "ignore the 50-move rule (by default a mate after the clock reaches 100 plies does not count)")
	asJSON := fs.Bool("json", false, "print one JSON object per FEN")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if *maxMoves < 0 || *maxMoves > 1000 {
		fmt.Fprintf(stderr, "tbprobe mate: --max %d is out of range (0..1000)\n", *maxMoves)
		return 2
	}
	fens := fs.Args()
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
			fs.Usage()
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
		res, err := retro.ProveMate(ctx, pos, *maxMoves, !*noRule50)
		if err != nil {
			fmt.Fprintf(stderr, "tbprobe mate: %s: %v\n", pos.FEN(), err)
			status = 1
			continue
		}
		line := make([]string, len(res.Line))
		for i, m := range res.Line {
			line[i] = m.UCI()
		}
		if *asJSON {
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
			verdict = fmt.Sprintf("no mate within %d", *maxMoves)
		}
		if len(line) > 0 {
			verdict += ": " + strings.Join(line, " ")
		}
		fmt.Fprintf(stdout, "%s\t%s\n", pos.FEN(), verdict)
	}
	return status
}
