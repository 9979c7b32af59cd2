package ftp_test

import (
	"context"
	"testing"

	"github.com/tbfs/tbfs/plugins/host"
	"github.com/tbfs/tbfs/plugins/internal/ftptest"
	"github.com/tbfs/tbfs/plugins/internal/plugintest"
	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/sourcetest"
)

// TestPluginConformance runs the transport suite through the shipped
// plugin binary tbfs-source-ftp, a real subprocess, against a real FTP
// server on loopback.
func TestPluginConformance(t *testing.T) {
	p := plugintest.Load(t, "plugins/ftp/cmd/tbfs-source-ftp", "ftp", host.Options{})
	if s := p.Schemes(); len(s) != 1 || s[0] != "ftp" {
		t.Fatalf("tbfs-source-ftp serves %v, want [ftp]", s)
	}
	sourcetest.Run(t, func(t *testing.T, dir string) source.Source {
		src, err := p.OpenURL(context.Background(), ftptest.URL(ftptest.Serve(t, dir)))
		if err != nil {
			t.Fatal(err)
		}
		return src
	})
}
