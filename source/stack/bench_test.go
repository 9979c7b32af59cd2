package stack_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/stack"
)

const benchFile = 32 << 20

// BenchmarkRead measures random 64 KiB and 1 MiB range reads through each
// transport on loopback, in three modes:
//
//	raw   the transport alone (source.Open), no wrappers
//	cold  the full stack, every read on blocks not cached yet
//	hit   the full stack, every read served by the cache
//
// The requests/op metric is the number of transport requests per read
// counted by the stack (it must be 1 for cold reads and 0 for hits).
// The mmap transport gets the cache too here (CacheLocal), so its cold and
// hit rows are comparable with the remote ones.
func BenchmarkRead(b *testing.B) {
	for _, tr := range transports {
		b.Run(tr.name, func(b *testing.B) {
			dir := b.TempDir()
			data := make([]byte, benchFile)
			r := rand.New(rand.NewPCG(1, 2))
			for i := range data {
				data[i] = byte(r.Uint32())
			}
			if err := os.WriteFile(filepath.Join(dir, "big"), data, 0o644); err != nil {
				b.Fatal(err)
			}
			url := tr.serve(b, dir)
			for _, size := range []int{64 << 10, 1 << 20} {
				name := fmt.Sprintf("%dKiB", size>>10)
				b.Run(name+"/raw", func(b *testing.B) { benchRaw(b, url, size) })
				b.Run(name+"/cold", func(b *testing.B) { benchCold(b, url, size) })
				b.Run(name+"/hit", func(b *testing.B) { benchHit(b, url, size) })
			}
		})
	}
}

func openBig(b *testing.B, src source.Source) source.Object {
	b.Helper()
	obj, err := src.Open(context.Background(), "big")
	if err != nil {
		b.Fatal(err)
	}
	return obj
}

func read(b *testing.B, obj source.Object, buf []byte, off int64) {
	if n, err := obj.ReadAt(context.Background(), buf, off, source.HintData); err != nil || n != len(buf) {
		b.Fatalf("ReadAt(%d, %d) = %d, %v", off, len(buf), n, err)
	}
}

func benchRaw(b *testing.B, url string, size int) {
	src, err := source.Open(context.Background(), url)
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	obj := openBig(b, src)
	buf := make([]byte, size)
	r := rand.New(rand.NewPCG(3, 4))
	b.SetBytes(int64(size))
	for b.Loop() {
		read(b, obj, buf, r.Int64N(benchFile-int64(size)))
	}
}

// benchCold reads disjoint unaligned ranges in a shuffled order, opening a
// fresh stack (untimed) whenever the ranges of the file run out.
func benchCold(b *testing.B, url string, size int) {
	const block = 64 << 10
	stride := int64(size + 2*block)
	count := int(benchFile / stride)
	buf := make([]byte, size)
	r := rand.New(rand.NewPCG(5, 6))
	var (
		st    *stack.Stack
		obj   source.Object
		order []int
		reads int64
		reqs  int64
	)
	b.SetBytes(int64(size))
	for b.Loop() {
		if len(order) == 0 {
			b.StopTimer()
			if st != nil {
				reqs += st.Stats().Requests
				st.Close()
			}
			var err error
			st, err = stack.Open(context.Background(), url, stack.Options{CacheLocal: true, BlockSize: block})
			if err != nil {
				b.Fatal(err)
			}
			obj = openBig(b, st)
			order = r.Perm(count)
			b.StartTimer()
		}
		off := int64(order[0])*stride + 777
		order = order[1:]
		read(b, obj, buf, off)
		reads++
	}
	reqs += st.Stats().Requests
	st.Close()
	b.ReportMetric(float64(reqs)/float64(reads), "requests/op")
}

// benchHit reads random ranges among a few that were read before.
func benchHit(b *testing.B, url string, size int) {
	st, err := stack.Open(context.Background(), url, stack.Options{CacheLocal: true})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	obj := openBig(b, st)
	buf := make([]byte, size)
	const warm = 8
	offs := make([]int64, warm)
	r := rand.New(rand.NewPCG(7, 8))
	for i := range offs {
		offs[i] = r.Int64N(benchFile - int64(size))
		read(b, obj, buf, offs[i])
	}
	before := st.Stats().Requests
	b.SetBytes(int64(size))
	for b.Loop() {
		read(b, obj, buf, offs[r.IntN(warm)])
	}
	b.ReportMetric(float64(st.Stats().Requests-before)/float64(b.N), "requests/op")
}
