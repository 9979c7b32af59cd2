// Command bad is a test plugin that breaks the handshake in the way its
// binary's name says: as tbfs-source-badversion it speaks a protocol
// version no host knows, as tbfs-source-badcookie it expects another magic
// cookie (and so, like any go-plugin binary started by a stranger, refuses
// to run). The host must refuse both with a clear message.
package main

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/go-plugin"

	"github.com/tbfs/tbfs/plugins"
	"github.com/tbfs/tbfs/source"
)

func main() {
	hs := plugins.Handshake
	switch name := filepath.Base(os.Args[0]); {
	case strings.HasSuffix(name, "badversion"):
		hs.ProtocolVersion = plugins.ProtocolVersion + 98
	case strings.HasSuffix(name, "badcookie"):
		hs.MagicCookieValue = "not the tbfs cookie"
	}
	srv := plugins.NewServer([]string{"bad"}, func(context.Context, *url.URL) (source.Source, error) {
		return nil, source.Invalid("never opened")
	})
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: hs,
		Plugins:         plugin.PluginSet{plugins.PluginName: &plugins.Plugin{Impl: srv}},
		GRPCServer:      plugin.DefaultGRPCServer,
	})
}
