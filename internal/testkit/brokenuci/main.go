// Command brokenuci is a deliberately broken UCI engine that the battery's
// tests run as a real process, to prove the battery catches each fault.
// Its -mode picks the fault:
//
//	weak     plays legal moves but has two engine bugs: it reports a
//	         remembered mate score for rook or queen against a bare king
//	         without the 50-move check, and its move generation misses the
//	         en-passant capture, so where that capture is the only evasion
//	         it believes itself mated
//	crash    exits when asked to search
//	hang     never answers a search
//	garbage  answers a search with noise and a best move that is no move
//	flood    answers a search with one line of 100 KiB
//	illegal  names a move that is not legal
//	noready  never answers isready
//	nouci    never completes the handshake
//	flaky    answers differently from one pair of starts to the next
//	         (counted in the file -state), so repetitions disagree
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/retro"
)

func main() {
	mode := flag.String("mode", "weak", "the fault to have")
	state := flag.String("state", "", "counter file for -mode flaky")
	flag.Parse()
	flip := false
	if *mode == "flaky" {
		flip = nextStart(*state)/2%2 == 1
	}
	out := bufio.NewWriter(os.Stdout)
	say := func(format string, a ...any) {
		fmt.Fprintf(out, format+"\n", a...)
		out.Flush()
	}
	pos := chess.StartPosition()
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "uci":
			if *mode == "nouci" {
				say("hello?")
				continue
			}
			say("id name brokenuci %s", *mode)
			say("option name Threads type spin default 1 min 1 max 1")
			say("uciok")
		case "isready":
			if *mode != "noready" {
				say("readyok")
			}
		case "position":
			if p, err := parsePosition(f[1:]); err == nil {
				pos = p
			}
		case "go":
			switch *mode {
			case "crash":
				fmt.Fprintln(os.Stderr, "brokenuci: crashing as asked")
				os.Exit(3)
			case "flood":
				say("info string %s", strings.Repeat("x", 100<<10))
				continue
			case "hang":
				continue
			case "garbage":
				say("info depth x score banana")
				say("\x00\x01 ????")
				say("bestmove zz99")
				continue
			case "illegal":
				say("info depth 1 score cp 0")
				say("bestmove a1a1")
				continue
			}
			move, score := think(&pos, flip)
			say("info depth 1 score %s nodes 1 pv %s", score, move)
			say("bestmove %s", move)
		case "quit":
			return
		}
	}
}

// nextStart returns how many starts the state file has counted, and
// counts this one.
func nextStart(path string) int {
	b, _ := os.ReadFile(path)
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	_ = os.WriteFile(path, []byte(strconv.Itoa(n+1)), 0o644)
	return n
}

func parsePosition(f []string) (chess.Position, error) {
	var pos chess.Position
	var err error
	i := 0
	switch {
	case len(f) > 0 && f[0] == "startpos":
		pos, i = chess.StartPosition(), 1
	case len(f) > 6 && f[0] == "fen":
		pos, err = chess.ParseFEN(strings.Join(f[1:7], " "))
		i = 7
	default:
		return pos, fmt.Errorf("bad position")
	}
	if err != nil {
		return pos, err
	}
	if i < len(f) && f[i] == "moves" {
		for _, s := range f[i+1:] {
			m, err := pos.ParseMove(s)
			if err != nil {
				return pos, err
			}
			pos = pos.Play(m)
		}
	}
	return pos, nil
}

// think is the weak engine: a short exhaustive mate search, and the first
// legal move otherwise, with its two bugs.
func think(pos *chess.Position, flip bool) (move, score string) {
	var legal []chess.Move
	for _, m := range pos.LegalMoves(nil) {
		if !m.IsEnPassant() { // the bug: no en-passant captures
			legal = append(legal, m)
		}
	}
	if len(legal) == 0 {
		if pos.InCheck() || len(pos.LegalMoves(nil)) > 0 {
			return "(none)", "mate 0"
		}
		return "(none)", "cp 0"
	}
	if res, err := retro.ProveMate(context.Background(), *pos, 2, true); err == nil {
		switch res.Kind {
		case retro.Mates:
			return res.Line[0].UCI(), "mate " + strconv.Itoa(res.Moves)
		case retro.Mated:
			return legal[0].UCI(), "mate -" + strconv.Itoa(res.Moves)
		}
	}
	if flip {
		legal[0] = legal[len(legal)-1]
	}
	if heavyVersusBare(pos) {
		return legal[0].UCI(), "mate 15" // the bug: no 50-move check
	}
	return legal[0].UCI(), "cp 0"
}

// heavyVersusBare reports whether the side to move has a rook or queen and
// the other side only its king.
func heavyVersusBare(pos *chess.Position) bool {
	us, them := pos.SideToMove(), pos.SideToMove().Other()
	heavy := pos.Pieces(us, chess.Rook)|pos.Pieces(us, chess.Queen) != 0
	return heavy && pos.ByColor(them).Count() == 1
}
