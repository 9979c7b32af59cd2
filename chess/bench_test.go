package chess

import (
	"syscall"
	"testing"
	"time"

	cc "github.com/corentings/chess/v2"
)

// refPerft is perft over corentings/chess/v2, bulk-counted at the last ply
// when bulk is set.
func refPerft(p *cc.Position, depth int, bulk bool) uint64 {
	if depth == 0 {
		return 1
	}
	moves := p.ValidMoves()
	if bulk && depth == 1 {
		return uint64(len(moves))
	}
	var n uint64
	for i := range moves {
		n += refPerft(p.Update(&moves[i]), depth-1, bulk)
	}
	return n
}

// perftList is perft bulk-counted by the length of the last ply's move
// list, to show what listing costs over CountLegalMoves.
func perftList(p Position, depth int) uint64 {
	var buf [256]Move
	moves := p.LegalMoves(buf[:0])
	if depth == 1 {
		return uint64(len(moves))
	}
	var n uint64
	for _, m := range moves {
		n += perftList(p.Play(m), depth-1)
	}
	return n
}

// BenchmarkPerft measures perft from the start position for our package
// and for corentings/chess/v2 in one run, with and without bulk counting,
// reporting leaf nodes per second.
func BenchmarkPerft(b *testing.B) {
	start := StartPosition()
	var ref cc.Position
	if err := ref.UnmarshalText([]byte(StartFEN)); err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, depth int, want uint64, f func() uint64) {
		b.Helper()
		var nodes uint64
		cpu0 := cpuTime()
		for b.Loop() {
			n := f()
			if n != want {
				b.Fatalf("perft(%d) = %d, published %d", depth, n, want)
			}
			nodes += n
		}
		cpu := cpuTime() - cpu0
		b.ReportMetric(float64(nodes)/b.Elapsed().Seconds()/1e6, "Mnodes/s")
		// On a shared machine wall time includes waiting for a core;
		// nodes per second of the process's CPU time is the fairer figure.
		if cpu > 0 {
			b.ReportMetric(float64(nodes)/cpu.Seconds()/1e6, "Mnodes/cpu-s")
		}
	}
	// Published start-position counts (perft.tsv).
	b.Run("ours/bulk/depth5", func(b *testing.B) {
		run(b, 5, 4865609, func() uint64 { return Perft(start, 5) })
	})
	b.Run("ours/bulk-by-list/depth5", func(b *testing.B) {
		run(b, 5, 4865609, func() uint64 { return perftList(start, 5) })
	})
	b.Run("ours/full/depth5", func(b *testing.B) {
		run(b, 5, 4865609, func() uint64 { return perftFull(start, 5) })
	})
	b.Run("corentings/bulk/depth4", func(b *testing.B) {
		run(b, 4, 197281, func() uint64 { return refPerft(&ref, 4, true) })
	})
	b.Run("corentings/full/depth4", func(b *testing.B) {
		run(b, 4, 197281, func() uint64 { return refPerft(&ref, 4, false) })
	})
}

// cpuTime returns the CPU time the process has used (user and system).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkLegalMoves(b *testing.B) {
	p := mustFENB(b, "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1")
	buf := make([]Move, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf = p.LegalMoves(buf[:0])
	}
}

func BenchmarkUnmoves(b *testing.B) {
	p := mustFENB(b, "8/8/3k4/8/2P5/8/1K1Q4/8 b - - 0 1")
	buf := make([]Unmove, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		buf = p.Unmoves(buf[:0])
	}
}

func BenchmarkSameMaterialUnmoves(b *testing.B) {
	p := mustFENB(b, "8/8/3k4/8/2P5/8/1K1Q4/8 b - - 0 1")
	buf := make([]Unmove, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		buf = p.SameMaterialUnmoves(buf[:0])
	}
}

func mustFENB(b *testing.B, fen string) Position {
	b.Helper()
	p, err := ParseFEN(fen)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// TestLegalMovesNoAlloc: with a dst of enough capacity, generating moves,
// playing them and the mate tests do not allocate.
func TestLegalMovesNoAlloc(t *testing.T) {
	p := mustFEN(t, "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1")
	buf := make([]Move, 0, 256)
	ubuf := make([]Unmove, 0, 1024)
	allocs := testing.AllocsPerRun(100, func() {
		buf = p.LegalMoves(buf[:0])
		for _, m := range buf {
			c := p.Play(m)
			_ = c.IsCheckmate()
			ubuf = c.Unmoves(ubuf[:0])
		}
	})
	if allocs != 0 {
		t.Errorf("LegalMoves/Play/IsCheckmate/Unmoves allocate %.1f times per run", allocs)
	}
}

func BenchmarkFromBoard(b *testing.B) {
	var board [64]Piece
	board[B2] = MakePiece(White, King)
	board[D2] = MakePiece(White, Queen)
	board[D6] = MakePiece(Black, King)
	b.Run("legal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := FromBoard(board, Black, 0, NoSquare, 0, 1); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("side-not-to-move-in-check", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := FromBoard(board, White, 0, NoSquare, 0, 1); err == nil {
				b.Fatal("accepted")
			}
		}
	})
}
