package cache_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/cache"
)

// BenchmarkCacheOverhead measures the cache's own cost over an in-memory
// source, whose reads cost one copy: cold reads (each on blocks never read,
// through a cache emptied untimed when the object runs out) and hits.
func BenchmarkCacheOverhead(b *testing.B) {
	data := pattern(64 << 20)
	f := &fake{data: map[string][]byte{"x": data}}
	for _, size := range []int{4 << 10, 64 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("%dKiB/cold", size>>10), func(b *testing.B) {
			stride := int64(size + 2*cache.DefaultBlockSize)
			var (
				src   *cache.Source
				obj   source.Object
				order []int
			)
			r := rand.New(rand.NewPCG(1, 2))
			buf := make([]byte, size)
			b.SetBytes(int64(size))
			for b.Loop() {
				if len(order) == 0 {
					b.StopTimer()
					src = cache.Wrap(f, cache.Options{})
					obj, _ = src.Open(context.Background(), "x")
					order = r.Perm(int(int64(len(data)) / stride))
					b.StartTimer()
				}
				if _, err := obj.ReadAt(context.Background(), buf, int64(order[0])*stride+777, source.HintData); err != nil {
					b.Fatal(err)
				}
				order = order[1:]
			}
		})
		b.Run(fmt.Sprintf("%dKiB/hit", size>>10), func(b *testing.B) {
			src := cache.Wrap(f, cache.Options{})
			obj, _ := src.Open(context.Background(), "x")
			buf := make([]byte, size)
			obj.ReadAt(context.Background(), buf, 777, source.HintData)
			b.SetBytes(int64(size))
			for b.Loop() {
				if _, err := obj.ReadAt(context.Background(), buf, 777, source.HintData); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
