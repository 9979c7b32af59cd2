// Package http ships the in-tree HTTP transport (source/http) as a plugin
// binary too, tbfs-source-http (cmd/tbfs-source-http). It exists to prove
// that a transport gives the same results built in and as a plugin; the
// host never lets it take over the http and https schemes from the
// built-in transport, so it is reached through host.Plugin.Open.
package http

import (
	"context"
	"net/url"

	"github.com/tbfs/tbfs/source"
	srchttp "github.com/tbfs/tbfs/source/http"
)

// Schemes are the URL schemes the plugin serves.
var Schemes = []string{"http", "https"}

// Open opens an HTTP mirror exactly as the built-in transport's registered
// opener does.
func Open(_ context.Context, u *url.URL) (source.Source, error) {
	return srchttp.New(u.String(), srchttp.Options{})
}
