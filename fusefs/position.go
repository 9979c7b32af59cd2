package fusefs

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/render"
)

// Prober answers positions for the tree.
type Prober interface {
	// Report returns what the tables say about pos and, with children,
	// about the position after every legal move, best first (Collector,
	// the mount's Prober, orders and marks them by render.MoveRanking: the
	// prober's DTZ root ranking with the 50-move rule at the FEN's clock).
	// A metric no table answers is left nil with the reason in
	// Unavailable, and a
	// material with no table at all comes back as a report whose Error
	// says so; an error return means the position could not be answered
	// (a transport failure, a corrupt table) and readers see EIO.
	Report(ctx context.Context, pos *chess.Position, children bool) (*render.Report, error)
}

// rankDir is a view's directory (no ranks yet) or one of the rank
// directories below it. Its first seven levels are the FEN's ranks; a name
// looked up at the eighth level is a position file.
type rankDir struct {
	fs.Inode
	readOnlyDir
	fs    *FS
	view  view
	ranks []string
}

var _ = (fs.NodeGetattrer)((*rankDir)(nil))
var _ = (fs.NodeLookuper)((*rankDir)(nil))
var _ = (fs.NodeReaddirer)((*rankDir)(nil))

// Getattr reports a read-only directory.
func (d *rankDir) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	d.fs.dirAttr(&out.Attr)
	return 0
}

// Readdir lists nothing: positions cannot be enumerated, only named.
func (d *rankDir) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	return fs.NewListDirStream(nil), 0
}

func (d *rankDir) path(name string) string {
	parts := append([]string{d.view.dir()}, d.ranks...)
	return strings.Join(append(parts, name), "/")
}

// Lookup descends one rank, or answers the position named by the ranks so
// far and name. The answer is computed here, so the file's size is exact
// from the first stat.
func (d *rankDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if len(d.ranks) < 7 {
		if err := checkRank(name); err != nil {
			d.fs.stats.badPaths.Add(1)
			return nil, d.fs.refuse(d.path(name), syscall.ENOENT, err.Error())
		}
		d.fs.dirAttr(&out.Attr)
		ranks := append(append([]string{}, d.ranks...), name)
		return d.NewInode(ctx, &rankDir{fs: d.fs, view: d.view, ranks: ranks}, fs.StableAttr{Mode: fuse.S_IFDIR}), 0
	}
	d.fs.stats.lookups.Add(1)
	fen, isJSON, err := positionName(d.ranks, name, d.view.hasJSON())
	if err != nil {
		d.fs.stats.badPaths.Add(1)
		return nil, d.fs.refuse(d.path(name), syscall.ENOENT, err.Error())
	}
	pos, err := chess.ParseFEN(fen)
	if err != nil {
		d.fs.stats.badPaths.Add(1)
		return nil, d.fs.refuse(d.path(name), syscall.ENOENT, err.Error())
	}
	data, partial, no := d.fs.answer(ctx, d.view, &pos, isJSON)
	if no.errno != 0 {
		// The path is spelt out only for a refusal.
		return nil, d.fs.refused(d.path(name), no)
	}
	d.fs.fileAttr(&out.Attr, int64(len(data)))
	if partial {
		d.fs.keepPartial(out)
	}
	return d.NewInode(ctx, &dataFile{fs: d.fs, data: data}, fs.StableAttr{Mode: fuse.S_IFREG}), 0
}

// viewMetric is the metric a metric view shows.
var viewMetric = map[view]render.Metric{
	viewWDL:   render.MetricWDL,
	viewDTZ:   render.MetricDTZ,
	viewDTM:   render.MetricDTM,
	viewDTM50: render.MetricDTM50,
	viewDTC:   render.MetricDTC,
}

// refusal is why an answer was refused: errno for the reader and the
// reason for .stats and the log. A zero errno is no refusal; one with no
// reason (an interrupted reader) is not recorded.
type refusal struct {
	errno syscall.Errno
	why   string
}

// answer probes pos and renders what view shows of it; partial says the
// answer names a missing table, so it may change once the table appears.
// The WDL view reads only WDL tables where the prober can (WDLReporter).
func (f *FS) answer(ctx context.Context, v view, pos *chess.Position, isJSON bool) (data []byte, partial bool, no refusal) {
	if f.cfg.Prober == nil {
		f.stats.probeErrors.Add(1)
		return nil, false, refusal{errno: syscall.EIO, why: "no prober configured"}
	}
	var rep *render.Report
	var err error
	if wp, ok := f.cfg.Prober.(WDLReporter); ok && v == viewWDL {
		rep, err = wp.ReportWDL(ctx, pos)
	} else {
		rep, err = f.cfg.Prober.Report(ctx, pos, v == viewMoves)
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			// The reader was interrupted (a signal); the kernel retries or
			// gives up, and nothing failed.
			f.stats.interrupted.Add(1)
			return nil, false, refusal{errno: syscall.EINTR}
		}
		f.stats.probeErrors.Add(1)
		return nil, false, refusal{errno: syscall.EIO, why: err.Error()}
	}
	f.stats.probes.Add(1 + int64(len(rep.Moves)))
	switch v {
	case viewChess, viewMoves:
		if isJSON {
			return render.JSON(rep), rep.Partial(), refusal{}
		}
		return render.Text(rep), rep.Partial(), refusal{}
	}
	m := viewMetric[v]
	data, ok := render.MetricText(&rep.Values, m)
	if !ok {
		f.stats.missing.Add(1)
		why := rep.Unavailable[m]
		if why == "" {
			why = rep.Error
		}
		if why == "" {
			why = "no table answers " + string(m)
		}
		return nil, false, refusal{errno: syscall.ENOENT, why: why}
	}
	return data, false, refusal{}
}

// refused records a refusal of path p that has a reason, and returns its
// errno.
func (f *FS) refused(p string, no refusal) syscall.Errno {
	if no.why == "" {
		return no.errno
	}
	return f.refuse(p, no.errno, no.why)
}

// refuse records why path was refused, for .stats and the debug log, and
// returns errno.
func (f *FS) refuse(p string, errno syscall.Errno, why string) syscall.Errno {
	f.stats.remember(Refusal{Time: time.Now().UTC(), Path: p, Errno: errnoName(errno), Why: why})
	if f.cfg.Logger != nil {
		// A refused path is the reader's business; a failure is the
		// operator's, so it is logged at a level seen without --debug.
		level := slog.LevelDebug
		if errno == syscall.EIO {
			level = slog.LevelWarn
		}
		f.cfg.Logger.Log(context.Background(), level, "refused", "path", p, "errno", errnoName(errno), "why", why)
	}
	return errno
}

func errnoName(e syscall.Errno) string {
	switch e {
	case syscall.ENOENT:
		return "ENOENT"
	case syscall.EIO:
		return "EIO"
	case syscall.EINTR:
		return "EINTR"
	case syscall.EINVAL:
		return "EINVAL"
	}
	return e.Error()
}

// WDLReporter is a Prober that can also report the WDL class alone,
// reading only the tables that hold it (render.CollectWDL); wdl/ files are
// answered with it when the Prober is one, as Collector is, so a distance
// table that is missing or fails does not fail them.
type WDLReporter interface {
	ReportWDL(ctx context.Context, pos *chess.Position) (*render.Report, error)
}

// Collector is the Prober tbfs mounts with: render.Collect over a
// tablebase (a *chesstb.Tablebase), so the files say exactly what tbprobe
// prints, and moves/ lists moves in tbprobe --children's order, the
// prober's DTZ root ranking with the 50-move rule at the FEN's clock
// (render.MoveRanking).
type Collector struct {
	Prober render.Prober
}

// Report is render.Collect.
func (c Collector) Report(ctx context.Context, pos *chess.Position, children bool) (*render.Report, error) {
	return render.Collect(ctx, c.Prober, pos, children)
}

// ReportWDL is render.CollectWDL.
func (c Collector) ReportWDL(ctx context.Context, pos *chess.Position) (*render.Report, error) {
	return render.CollectWDL(ctx, c.Prober, pos)
}
