package http_test

import (
	"context"
	"crypto/rand"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/tbfs/tbfs/plugins/host"
	"github.com/tbfs/tbfs/plugins/internal/plugintest"
	"github.com/tbfs/tbfs/source"
	srchttp "github.com/tbfs/tbfs/source/http"
	"github.com/tbfs/tbfs/source/http/mirrortest"
)

// BenchmarkReadAt: random reads of 4 KiB, 64 KiB and 1 MiB from a 16 MiB
// file on a loopback HTTP server, through the built-in transport and
// through its plugin form.
func BenchmarkReadAt(b *testing.B) {
	dir := b.TempDir()
	const size = 16 << 20
	data := make([]byte, size)
	rand.Read(data)
	if err := os.WriteFile(filepath.Join(dir, "blob"), data, 0o644); err != nil {
		b.Fatal(err)
	}
	base := mirrortest.Serve(b, dir)
	builtin, err := srchttp.New(base, srchttp.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer builtin.Close()
	p := plugintest.Load(b, "plugins/http/cmd/tbfs-source-http", "http", host.Options{})
	plug, err := p.OpenURL(context.Background(), base)
	if err != nil {
		b.Fatal(err)
	}
	defer plug.Close()
	srcs := map[string]source.Source{"builtin": builtin, "plugin": plug}
	for _, n := range []int{4 << 10, 64 << 10, 1 << 20} {
		for _, kind := range []string{"builtin", "plugin"} {
			b.Run(fmt.Sprintf("%s/%dKiB", kind, n>>10), func(b *testing.B) {
				obj, err := srcs[kind].Open(context.Background(), "blob")
				if err != nil {
					b.Fatal(err)
				}
				defer obj.Close()
				buf := make([]byte, n)
				r := mrand.New(mrand.NewPCG(5, 6))
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
