package fusefs

import (
	"context"
	"fmt"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/tbfs/tbfs/chess"
)

// floorDir is a directory of the FUSE floor, the cheapest go-fuse tree of
// the position paths' shape: any name below the root is a directory, down
// to seven ranks below a view, and any name below the seventh rank is a
// file holding floorData. Mounted with tbfs's options and timeouts, reading
// one of its files costs what the kernel, the FUSE round trips and go-fuse
// cost by themselves, which tbfs cannot go below.
type floorDir struct {
	fs.Inode
	depth int // 0 the root, 1 a view, 2 to 8 the ranks
}

// floorData is every floor file's content: as long as a WDL answer.
var floorData = []byte("2\n")

var _ = (fs.NodeLookuper)((*floorDir)(nil))

// Lookup makes the next directory, or the file below the seventh rank.
func (d *floorDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if d.depth < 8 {
		out.Attr.Mode = fuse.S_IFDIR | 0o555
		return d.NewInode(ctx, &floorDir{depth: d.depth + 1}, fs.StableAttr{Mode: fuse.S_IFDIR}), 0
	}
	out.Attr.Mode = fuse.S_IFREG | 0o444
	out.Attr.Size = uint64(len(floorData))
	return d.NewInode(ctx, &floorFile{}, fs.StableAttr{Mode: fuse.S_IFREG}), 0
}

// floorFile is a floor file; like tbfs's files it declines opens, so a read
// is a lookup and a read.
type floorFile struct {
	fs.Inode
	immutableFile
}

var _ = (fs.NodeReader)((*floorFile)(nil))

// Read copies from floorData.
func (f *floorFile) Read(ctx context.Context, fh fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	return fuse.ReadResultData(sliceAt(floorData, off, len(dest))), 0
}

// MountFloor mounts the FUSE floor on dir with the options and timeouts
// Mount gives a tree of cfg.
func MountFloor(dir string, cfg Config) (*fuse.Server, error) {
	return fs.Mount(dir, &floorDir{}, New(cfg).mountOptions(MountOptions{}))
}

// AnswerPath does in process what looking up the position file p (relative
// to the mount root, as parsePath reads it) does: build the FEN, parse it,
// probe and render. It fails where the lookup would refuse.
func (f *FS) AnswerPath(ctx context.Context, p string) ([]byte, error) {
	q, err := parsePath(p)
	if err != nil {
		return nil, err
	}
	pos, err := chess.ParseFEN(q.fen)
	if err != nil {
		return nil, err
	}
	data, _, no := f.answer(ctx, q.view, &pos, q.json)
	if no.errno != 0 {
		return nil, fmt.Errorf("%s: %w: %s", p, no.errno, no.why)
	}
	return data, nil
}
