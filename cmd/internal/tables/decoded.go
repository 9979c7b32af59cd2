package tables

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/tbfs/tbfs/cmd/internal/cli"
	"github.com/tbfs/tbfs/format/lz4store"
)

// DefaultDecodedCacheSize is --decoded-cache-size's default.
const DefaultDecodedCacheSize = 4 << 30

// DecodedCache is the --decoded-cache and --decoded-cache-size flags, one
// definition for tbprobe and tbfs: a directory keeping decoded distance and
// pack blocks (format/lz4store) across runs and remounts, so a restarted
// process reads them back instead of decoding their LZMA again.
type DecodedCache struct {
	Dir  string   // "" for none
	Size cli.Size // the directory's budget
}

// Register adds the two flags to fs.
func (d *DecodedCache) Register(fs *pflag.FlagSet) {
	fs.StringVar(&d.Dir, "decoded-cache", "", "`DIR` keeping decoded distance and pack blocks (LZ4) across runs, so a later run skips their LZMA decoding")
	d.Size = DefaultDecodedCacheSize
	fs.Var(&d.Size, "decoded-cache-size", "`SIZE` of disk for --decoded-cache (e.g. 512MiB, 4GiB; binary units)")
}

// Open opens the store the flags name; nil, nil when --decoded-cache was
// not given.
func (d *DecodedCache) Open() (*lz4store.Store, error) {
	if d.Dir == "" {
		return nil, nil
	}
	st, err := lz4store.Open(d.Dir, int64(d.Size))
	if err != nil {
		return nil, fmt.Errorf("--decoded-cache %s: %w", d.Dir, err)
	}
	return st, nil
}
