package chessprobe

import (
	"errors"

	"github.com/tbfs/tbfs/format/blockcache"
	"github.com/tbfs/tbfs/format/chesstb"
	"github.com/tbfs/tbfs/format/syzygy"
	"github.com/tbfs/tbfs/source"
)

// Tables is a Prober over both readers opened on the same sources: each
// source may hold chesstb files, Syzygy files or both, and each reader
// finds its own by name.
type Tables struct {
	*Prober
	Chesstb *chesstb.Tablebase
	Syzygy  *syzygy.Tablebase
	// Cache is the one decoded-block budget both readers share.
	Cache *blockcache.Cache
}

// Open opens chesstb and Syzygy readers over srcs with opts (chesstb's;
// the Syzygy reader takes its block budget, missing-table TTL and manifest
// settings). Both
// keep decoded blocks in one cache of opts.BlockCacheBytes (or
// opts.BlockCache when set), so the budget holds across formats, and both
// look for integrity manifests the same way (opts.Manifests,
// RequireManifest, NoManifests).
func Open(opts chesstb.Options, srcs ...source.Source) (*Tables, error) {
	cache := opts.BlockCache
	if cache == nil {
		n := opts.BlockCacheBytes
		if n <= 0 {
			n = chesstb.DefaultBlockCacheBytes
		}
		cache = blockcache.New(n)
	}
	opts.BlockCache = cache
	ctb, err := chesstb.Open(opts, srcs...)
	if err != nil {
		return nil, err
	}
	syz, err := syzygy.Open(syzygy.Options{BlockCache: cache, MissingTTL: opts.MissingTTL, Now: opts.Now, SkipChecksums: opts.SkipChecksums,
		Manifests: opts.Manifests, RequireManifest: opts.RequireManifest, NoManifests: opts.NoManifests}, srcs...)
	if err != nil {
		ctb.Close()
		return nil, err
	}
	return &Tables{Prober: New(ctb, SyzygyReader{syz}), Chesstb: ctb, Syzygy: syz, Cache: cache}, nil
}

// Close closes both readers.
func (t *Tables) Close() error {
	return errors.Join(t.Chesstb.Close(), t.Syzygy.Close())
}
