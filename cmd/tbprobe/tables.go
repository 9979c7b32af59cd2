package main

import (
	"context"
	"errors"

	"github.com/spf13/pflag"

	"github.com/tbfs/tbfs/chessprobe"
	"github.com/tbfs/tbfs/cmd/internal/cli"
	"github.com/tbfs/tbfs/cmd/internal/tables"
	"github.com/tbfs/tbfs/format/chesstb"
	"github.com/tbfs/tbfs/plugins/host"
	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/limit"
	"github.com/tbfs/tbfs/source/metrics"
	"github.com/tbfs/tbfs/source/stack"
)

// tableFlags are the flags every chess subcommand shares: where the tables
// are and how much memory may cache them.
type tableFlags struct {
	tables          []string
	cacheSize       cli.Size
	pluginDir       string
	pluginChecksums host.Checksums
	maxRequests     int
	metadataTTL     tables.MetadataTTL
	// manifests is a directory of block integrity manifests, "" for
	// beside the tables; noManifests ignores them (verify --manifest).
	manifests   tables.ManifestDir
	noManifests bool
	// decoded keeps decoded blocks on disk across runs.
	decoded tables.DecodedCache
	// trace, when set, records every request to the transports (bench
	// --fresh counts round trips with it).
	trace *metrics.Trace
}

// register adds the shared flags to fs.
func (tf *tableFlags) register(fs *pflag.FlagSet) {
	fs.StringArrayVar(&tf.tables, "tables", nil, "`URL` of a table location: a directory, file://, s3://, http(s):// or a plugin's URL (repeatable, searched in order; default: the chesstb and Syzygy fixture tables built in)")
	tf.cacheSize = cli.Size(chesstb.DefaultBlockCacheBytes)
	fs.Var(&tf.cacheSize, "cache-size", "`SIZE` of memory for decoded blocks, and for fetched blocks of each remote source (e.g. 64MiB, 1.5G; binary units)")
	fs.StringVar(&tf.pluginDir, "plugin-dir", "", "`DIR` of tbfs-source-* transport plugins (also $"+host.EnvDir+")")
	fs.Var(&tf.pluginChecksums, "plugin-sha256", "`NAME=HEX`: run plugin NAME only if its binary has this SHA-256 (repeatable; when given, unpinned plugins do not run)")
	fs.IntVar(&tf.maxRequests, "max-requests", limit.DefaultRequests, "requests in flight at once to each remote table location")
	tf.metadataTTL.Register(fs, "how long a listing of a remote table location, and a table found missing or refused, answer which tables exist")
	tf.manifests.Register(fs)
	tf.decoded.Register(fs)
}

// tableSet is an opened tablebase with the locations under it, kept so
// their counters can be read and everything closed in order.
type tableSet struct {
	// tb is the chesstb reader; probe answers from it and the Syzygy
	// reader opened on the same locations, with one block budget.
	tb     *chesstb.Tablebase
	probe  *chessprobe.Tables
	set    tables.Set
	opener *tables.Opener
	// closers are further sources to close after the tablebase.
	closers []source.Source
}

// open opens every --tables location (or the built-in fixtures) through
// the shared opener (package cmd/internal/tables) and a tablebase over them.
func (tf *tableFlags) open(ctx context.Context) (*tableSet, error) {
	ts := &tableSet{}
	ok := false
	defer func() {
		if !ok {
			ts.Close()
		}
	}()
	ttl := tf.metadataTTL.TTL()
	var err error
	ts.opener, err = tables.NewOpener(ctx, tables.Options{
		Stack:           stack.Options{CacheBytes: int64(tf.cacheSize), MaxRequests: tf.maxRequests, MetadataTTL: ttl, Trace: tf.trace},
		PluginDir:       tf.pluginDir,
		PluginChecksums: tf.pluginChecksums,
	})
	if err != nil {
		return nil, err
	}
	if len(tf.tables) == 0 {
		ts.set, err = ts.opener.Embedded()
	} else {
		ts.set, err = ts.opener.Open(ctx, tf.tables)
	}
	if err != nil {
		return nil, err
	}
	topts := chesstb.Options{BlockCacheBytes: int64(tf.cacheSize), NoManifests: tf.noManifests, MissingTTL: ttl}
	if !tf.noManifests {
		m, err := tf.manifests.Open()
		if err != nil {
			return nil, err
		}
		if m != nil {
			ts.closers = append(ts.closers, m)
			topts.Manifests = m
		}
	}
	st, err := tf.decoded.Open()
	if err != nil {
		return nil, err
	}
	if st != nil {
		topts.DecodedBlocks = st
	}
	both, err := chessprobe.Open(topts, ts.set.Sources()...)
	if err != nil {
		return nil, err
	}
	ts.probe, ts.tb = both, both.Chesstb
	ok = true
	return ts, nil
}

// Stats sums the counters of every location.
func (ts *tableSet) Stats() metrics.Stats { return ts.set.Stats() }

// Close closes the tablebase, then its sources, then the plugins.
func (ts *tableSet) Close() error {
	var errs []error
	if ts.probe != nil {
		errs = append(errs, ts.probe.Close())
	}
	errs = append(errs, ts.set.Close())
	for _, s := range ts.closers {
		errs = append(errs, s.Close())
	}
	if ts.opener != nil {
		errs = append(errs, ts.opener.Close())
	}
	return errors.Join(errs...)
}
