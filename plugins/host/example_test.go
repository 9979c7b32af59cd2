package host_test

import (
	"context"
	"flag"
	"fmt"
	"log"

	"github.com/hashicorp/go-hclog"

	"github.com/tbfs/tbfs/plugins/host"
	"github.com/tbfs/tbfs/source/stack"
)

// A front end loads the plugins once at start, before it opens sources:
// from then on an ftp:// URL reaches the tbfs-source-ftp plugin, behind the
// same cache and retry layers as a built-in transport.
func ExampleLoad() {
	fs := flag.NewFlagSet("tbprobe", flag.ContinueOnError)
	pluginDir := fs.String("plugin-dir", "", "directory of tbfs-source-* plugins")
	var opts host.Options
	fs.Var(&opts.Checksums, "plugin-sha256", "name=sha256 of a plugin binary (repeatable); when given, only listed plugins run")
	_ = fs.Parse([]string{"--plugin-dir", "/usr/lib/tbfs/plugins"})

	opts.Logger = hclog.New(&hclog.LoggerOptions{Name: "tbprobe", Level: hclog.Warn})
	h, err := host.Load(context.Background(), *pluginDir, opts)
	if err != nil {
		log.Print(err) // an unreadable plugin directory; the built-ins still work
	}
	defer h.Close()

	// tbprobe ls --plugins
	for _, info := range h.Infos() {
		fmt.Println(info)
	}

	src, err := stack.Open(context.Background(), "ftp://mirror.example/tables/", stack.Options{})
	if err != nil {
		log.Print(err)
		return
	}
	defer src.Close()
}
