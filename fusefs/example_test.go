package fusefs_test

import (
	"fmt"
	"log"
	"os"
	"os/signal"

	"github.com/tbfs/tbfs/chessprobe"
	"github.com/tbfs/tbfs/format/chesstb"
	"github.com/tbfs/tbfs/fusefs"
	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/mmap"
)

// Mount a folder of chesstb tables and serve it until interrupted; any
// program can then read "/mnt/tb/chess/8/8/8/5k2/8/8/1Q6/K7 w - - 0 1".
// (Not run as a test: it needs a mount point and waits for a signal.)
func ExampleMount() {
	src, err := mmap.New("testdata/chesstb")
	if err != nil {
		log.Fatal(err)
	}
	defer src.Close()
	tb, err := chesstb.Open(chesstb.Options{}, src)
	if err != nil {
		log.Fatal(err)
	}
	defer tb.Close()
	tree := fusefs.New(fusefs.Config{
		Prober:    fusefs.Collector{Prober: chessprobe.New(tb, nil)},
		Tables:    []source.Source{src},
		TableURLs: []string{"testdata/chesstb"},
	})
	defer tree.Close()
	srv, err := fusefs.Mount("/mnt/tb", tree, fusefs.MountOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("mounted")
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt)
	<-stop
	srv.Unmount()
}
