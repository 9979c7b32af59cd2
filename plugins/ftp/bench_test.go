package ftp_test

import (
	"context"
	"crypto/rand"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/format/chesstb"
	"github.com/tbfs/tbfs/internal/testkit/chesstboracle"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/plugins/host"
	"github.com/tbfs/tbfs/plugins/internal/ftptest"
	"github.com/tbfs/tbfs/plugins/internal/plugintest"
	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/stack"
)

// benchSources opens the same FTP URL in this process and through the
// plugin binary.
func benchSources(b *testing.B, dir string) map[string]source.Source {
	b.Helper()
	url := ftptest.URL(ftptest.Serve(b, dir))
	u, err := source.ParseURL(url)
	if err != nil {
		b.Fatal(err)
	}
	inproc, err := openURLB(u)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { inproc.Close() })
	p := plugintest.Load(b, "plugins/ftp/cmd/tbfs-source-ftp", "ftp", host.Options{})
	plug, err := p.OpenURL(context.Background(), url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { plug.Close() })
	return map[string]source.Source{"inprocess": inproc, "plugin": plug}
}

// BenchmarkReadAt: random reads of 4 KiB, 64 KiB and 1 MiB from a 16 MiB
// file over FTP on loopback, in this process and through the plugin.
func BenchmarkReadAt(b *testing.B) {
	dir := b.TempDir()
	const size = 16 << 20
	data := make([]byte, size)
	rand.Read(data)
	if err := os.WriteFile(filepath.Join(dir, "blob"), data, 0o644); err != nil {
		b.Fatal(err)
	}
	srcs := benchSources(b, dir)
	for _, n := range []int{4 << 10, 64 << 10, 1 << 20} {
		for _, kind := range []string{"inprocess", "plugin"} {
			b.Run(fmt.Sprintf("%s/%dKiB", kind, n>>10), func(b *testing.B) {
				obj, err := srcs[kind].Open(context.Background(), "blob")
				if err != nil {
					b.Fatal(err)
				}
				defer obj.Close()
				buf := make([]byte, n)
				r := mrand.New(mrand.NewPCG(1, 2))
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

// BenchmarkProbe: chesstb probes of every fixture oracle position over FTP,
// in this process and through the plugin. "cold" opens a fresh Tablebase
// per round over the bare transport, so every block is read again; "stack"
// puts the host-side block cache (source/stack) in front, kept across
// rounds, which is how front ends use a remote source.
func BenchmarkProbe(b *testing.B) {
	dir := testenv.Testdata(b, "chesstb")
	rows := chesstboracle.Read(b, filepath.Join(dir, "oracle", "probe.tsv"))
	var positions []chess.Position
	for _, r := range rows {
		pos, err := chess.ParseFEN(r.FEN)
		if err != nil {
			b.Fatal(err)
		}
		positions = append(positions, pos)
	}
	srcs := benchSources(b, dir)
	for _, mode := range []string{"cold", "stack"} {
		for _, kind := range []string{"inprocess", "plugin"} {
			b.Run(mode+"/"+kind, func(b *testing.B) {
				src := srcs[kind]
				if mode == "stack" {
					src = stack.Wrap(src, true, stack.Options{})
				}
				for b.Loop() {
					tb, err := chesstb.Open(chesstb.Options{}, noClose{src})
					if err != nil {
						b.Fatal(err)
					}
					for i := range positions {
						if _, err := tb.Probe(context.Background(), &positions[i]); err != nil {
							b.Fatal(err)
						}
					}
					tb.Close()
				}
				b.ReportMetric(float64(len(positions))*float64(b.N)/b.Elapsed().Seconds(), "probes/s")
			})
		}
	}
}

// noClose keeps a Tablebase's Close from closing the shared source.
type noClose struct{ source.Source }

func (noClose) Close() error { return nil }
