package fusefs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/tbfs/tbfs/geister"
	"github.com/tbfs/tbfs/render"
)

// GeisterProber answers Geister boards for geister/.
type GeisterProber interface {
	// Report returns what the tables say about p and its moves; errors
	// are as for Prober.Report.
	Report(ctx context.Context, p geister.Position) (*render.GeisterReport, error)
}

// GeisterCollector is the GeisterProber tbfs mounts with: render.CollectGeister
// over a *geister.Tablebase.
type GeisterCollector struct {
	Prober render.GeisterProber
}

// Report is render.CollectGeister.
func (c GeisterCollector) Report(ctx context.Context, p geister.Position) (*render.GeisterReport, error) {
	return render.CollectGeister(ctx, c.Prober, p)
}

// geisterDir is geister/ or one of its row directories. A board is named
// either by its GAT string (48 characters) right under geister/, or by its
// six rows as a path, like a FEN: geister/r1/r2/r3/r4/r5/r6. The file holds
// the human text; with ".json" appended, the JSON object.
type geisterDir struct {
	fs.Inode
	readOnlyDir
	fs   *FS
	rows []string
}

var _ = (fs.NodeGetattrer)((*geisterDir)(nil))
var _ = (fs.NodeLookuper)((*geisterDir)(nil))
var _ = (fs.NodeReaddirer)((*geisterDir)(nil))

// Getattr reports a read-only directory.
func (d *geisterDir) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	d.fs.dirAttr(&out.Attr)
	return 0
}

// Readdir lists nothing: boards are named, not enumerated.
func (d *geisterDir) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	return fs.NewListDirStream(nil), 0
}

// Lookup descends one row or answers a board.
func (d *geisterDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	p := strings.Join(append(append([]string{"geister"}, d.rows...), name), "/")
	base, isJSON := strings.CutSuffix(name, jsonSuffix)
	var board string
	switch {
	case len(d.rows) == 0 && len(base) == 48:
		board = base
	case len(d.rows) < 5:
		if len(name) != 6 {
			d.fs.stats.badPaths.Add(1)
			return nil, d.fs.refuse(p, syscall.ENOENT, fmt.Sprintf("row %q has %d characters, want 6", name, len(name)))
		}
		d.fs.dirAttr(&out.Attr)
		rows := append(append([]string{}, d.rows...), name)
		return d.NewInode(ctx, &geisterDir{fs: d.fs, rows: rows}, fs.StableAttr{Mode: fuse.S_IFDIR}), 0
	default:
		board = strings.Join(append(append([]string{}, d.rows...), base), "/")
	}
	d.fs.stats.lookups.Add(1)
	pos, err := geister.Parse(board)
	if err != nil {
		d.fs.stats.badPaths.Add(1)
		return nil, d.fs.refuse(p, syscall.ENOENT, err.Error())
	}
	rep, err := d.fs.cfg.Geister.Report(ctx, pos)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			d.fs.stats.interrupted.Add(1)
			return nil, syscall.EINTR
		}
		d.fs.stats.probeErrors.Add(1)
		return nil, d.fs.refuse(p, syscall.EIO, err.Error())
	}
	d.fs.stats.probes.Add(1 + int64(len(rep.Moves)))
	data := render.GeisterText(rep)
	if isJSON {
		data = render.GeisterJSON(rep)
	}
	d.fs.fileAttr(&out.Attr, int64(len(data)))
	if rep.Error != "" {
		d.fs.keepPartial(out)
	}
	return d.NewInode(ctx, &dataFile{fs: d.fs, data: data}, fs.StableAttr{Mode: fuse.S_IFREG}), 0
}
