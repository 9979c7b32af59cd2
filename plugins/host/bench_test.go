package host_test

import (
	"context"
	"crypto/rand"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/tbfs/tbfs/plugins/host"
	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/mmap"
)

// BenchmarkBoundary measures what crossing the plugin boundary costs: the
// same memory-mapped directory read in this process (mmap) and through the
// faulty test plugin, which serves it with the same mmap transport, so the
// difference is the gRPC call, AutoMTLS and the copies.
func BenchmarkBoundary(b *testing.B) {
	data := b.TempDir()
	const size = 16 << 20
	blob := make([]byte, size)
	rand.Read(blob)
	if err := os.WriteFile(filepath.Join(data, "blob"), blob, 0o644); err != nil {
		b.Fatal(err)
	}
	src := bins(b)
	dir := b.TempDir()
	if err := os.Symlink(filepath.Join(src, "tbfs-source-faulty"), filepath.Join(dir, "tbfs-source-faulty")); err != nil {
		b.Fatal(err)
	}
	h := host.New(host.Options{})
	defer h.Close()
	if err := h.Discover(context.Background(), dir); err != nil {
		b.Fatal(err)
	}
	plug, err := h.Plugin("faulty").OpenURL(context.Background(), "faulty://"+data)
	if err != nil {
		b.Fatal(err)
	}
	defer plug.Close()
	local, err := mmap.New(data)
	if err != nil {
		b.Fatal(err)
	}
	defer local.Close()
	srcs := map[string]source.Source{"inprocess": local, "plugin": plug}
	for _, n := range []int{4 << 10, 64 << 10, 1 << 20} {
		for _, kind := range []string{"inprocess", "plugin"} {
			b.Run(fmt.Sprintf("%s/%dKiB", kind, n>>10), func(b *testing.B) {
				obj, err := srcs[kind].Open(context.Background(), "blob")
				if err != nil {
					b.Fatal(err)
				}
				defer obj.Close()
				buf := make([]byte, n)
				r := mrand.New(mrand.NewPCG(3, 4))
				b.SetBytes(int64(n))
				for b.Loop() {
					off := r.Int64N(size - int64(n))
					if _, err := obj.ReadAt(context.Background(), buf, off, source.HintData); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
