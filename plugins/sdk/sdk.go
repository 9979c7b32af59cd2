// Package sdk is what a transport plugin's main function calls: Serve turns
// any source.Source implementation into a tbfs plugin binary.
//
// A plugin binary is named tbfs-source-<name> and placed in a plugin
// directory; the host starts it, and it must not be run by hand:
//
//	func main() {
//		sdk.Serve([]string{"ftp"}, ftp.Open)
//	}
package sdk

import (
	"os"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/tbfs/tbfs/plugins"
	"github.com/tbfs/tbfs/source"
)

// Logger returns the logger a plugin should use. Its JSON lines on stderr
// are read by the host and logged through the host's own logger, under the
// plugin's name.
func Logger() hclog.Logger { return logger }

var logger = hclog.New(&hclog.LoggerOptions{
	Level:      hclog.Info,
	Output:     os.Stderr,
	JSONFormat: true,
})

// Serve serves open for URLs of the given schemes to the host that started
// the process, and returns when the host closes the connection. A binary
// that was not started by a tbfs host prints a message saying so and exits
// with status 1.
func Serve(schemes []string, open source.Opener) {
	srv := plugins.NewServer(schemes, open)
	defer srv.Close()
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: plugins.Handshake,
		Plugins: plugin.PluginSet{
			plugins.PluginName: &plugins.Plugin{Impl: srv},
		},
		GRPCServer: plugin.DefaultGRPCServer,
		Logger:     logger,
	})
}
