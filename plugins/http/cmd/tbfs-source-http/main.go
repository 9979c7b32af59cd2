// Command tbfs-source-http serves http:// and https:// URLs with the
// in-tree HTTP transport as a tbfs plugin. It is not meant to be run by
// hand.
package main

import (
	"github.com/tbfs/tbfs/plugins/http"
	"github.com/tbfs/tbfs/plugins/sdk"
)

func main() {
	sdk.Serve(http.Schemes, http.Open)
}
