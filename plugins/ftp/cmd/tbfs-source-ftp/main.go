// Command tbfs-source-ftp is the tbfs transport plugin for ftp:// URLs. Put
// it in a plugin directory (--plugin-dir or $TBFS_PLUGIN_DIR); tbfs and
// tbprobe start it when an ftp:// source is opened. It is not meant to be
// run by hand.
package main

import (
	"github.com/tbfs/tbfs/plugins/ftp"
	"github.com/tbfs/tbfs/plugins/sdk"
)

func main() {
	sdk.Serve([]string{ftp.Scheme}, ftp.Open)
}
