package fusefs

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/tbfs/tbfs/format/chesstb"
	"github.com/tbfs/tbfs/format/syzygy"
)

// readOnlyDir refuses every change to a directory with EROFS. The mount is
// read-only, so the kernel refuses them first; this holds even if it were
// remounted read-write, where go-fuse would otherwise report an unlink as
// done and drop the entry until remount.
type readOnlyDir struct{}

var (
	_ = (fs.NodeUnlinker)((*readOnlyDir)(nil))
	_ = (fs.NodeRmdirer)((*readOnlyDir)(nil))
	_ = (fs.NodeRenamer)((*readOnlyDir)(nil))
	_ = (fs.NodeMkdirer)((*readOnlyDir)(nil))
	_ = (fs.NodeCreater)((*readOnlyDir)(nil))
	_ = (fs.NodeSymlinker)((*readOnlyDir)(nil))
	_ = (fs.NodeLinker)((*readOnlyDir)(nil))
	_ = (fs.NodeMknoder)((*readOnlyDir)(nil))
	_ = (fs.NodeSetattrer)((*readOnlyDir)(nil))
)

// Unlink refuses.
func (readOnlyDir) Unlink(ctx context.Context, name string) syscall.Errno { return syscall.EROFS }

// Rmdir refuses.
func (readOnlyDir) Rmdir(ctx context.Context, name string) syscall.Errno { return syscall.EROFS }

// Rename refuses.
func (readOnlyDir) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	return syscall.EROFS
}

// Mkdir refuses.
func (readOnlyDir) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return nil, syscall.EROFS
}

// Create refuses.
func (readOnlyDir) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	return nil, nil, 0, syscall.EROFS
}

// Symlink refuses.
func (readOnlyDir) Symlink(ctx context.Context, target, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return nil, syscall.EROFS
}

// Link refuses.
func (readOnlyDir) Link(ctx context.Context, target fs.InodeEmbedder, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return nil, syscall.EROFS
}

// Mknod refuses.
func (readOnlyDir) Mknod(ctx context.Context, name string, mode uint32, dev uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return nil, syscall.EROFS
}

// Setattr refuses chmod, chown, utimes.
func (readOnlyDir) Setattr(ctx context.Context, f fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	return syscall.EROFS
}

// immutableFile is a regular file whose content and attributes never change
// while mounted. It answers no opens and no flushes: the first ENOSYS tells
// the kernel to stop sending either (FUSE no_open, no_flush), so that
// reading a file costs two round trips (lookup, read) instead of five
// (lookup, open, read, flush, release), and the kernel keeps the pages
// across opens, as an open without a reply keeps the cache. Reads carry
// no handle; every node reads from its own fixed state.
type immutableFile struct{}

var (
	_ = (fs.NodeOpener)((*immutableFile)(nil))
	_ = (fs.NodeFlusher)((*immutableFile)(nil))
	_ = (fs.NodeSetattrer)((*immutableFile)(nil))
)

// Open refuses writing (only reachable were the mount made read-write)
// and otherwise declines to take part in opens.
func (immutableFile) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if flags&(syscall.O_WRONLY|syscall.O_RDWR|syscall.O_TRUNC) != 0 {
		return nil, 0, syscall.EROFS
	}
	return nil, 0, syscall.ENOSYS
}

// Flush declines: nothing is ever written.
func (immutableFile) Flush(ctx context.Context, f fs.FileHandle) syscall.Errno { return syscall.ENOSYS }

// Setattr refuses truncation, chmod, chown, utimes.
func (immutableFile) Setattr(ctx context.Context, f fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	return syscall.EROFS
}

// IsTableFile reports whether tables/ serves name by default: a table file
// the chesstb reader recognises in its kind's folder or at the root
// (chesstb.ParseTableName), a Syzygy table file at the root or in its
// kind's folder, where the Syzygy reader looks for it
// (syzygy.ParseTableName: "KQvK.rtbw", "dtz/KQvK.rtbz"), or either's
// integrity manifest (the name plus
// chesstb.ManifestSuffix, which syzygy.ManifestSuffix equals).
func IsTableFile(name string) bool {
	if base, ok := strings.CutSuffix(name, chesstb.ManifestSuffix); ok {
		name = base
	}
	if _, _, ok := syzygy.ParseTableName(name); ok {
		return true
	}
	if strings.Count(name, "/") > 1 {
		return false
	}
	_, _, ok := chesstb.ParseTableName(name)
	return ok
}

// ErrStaleMount is returned for a mount point whose FUSE server is gone.
var ErrStaleMount = errors.New("stale FUSE mount")

// CheckMountpoint says what is wrong with dir as a mount point, if
// anything: it must exist, be a directory, and have nothing mounted on it.
// Each error names dir and says what to do.
func CheckMountpoint(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, syscall.ENOTCONN):
		return staleError(dir)
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("mount point %s does not exist: create the directory first", dir)
	case err != nil:
		return fmt.Errorf("mount point %s: %w", dir, err)
	case !fi.IsDir():
		return fmt.Errorf("mount point %s is not a directory (it is a %s)", dir, fileKind(fi.Mode()))
	}
	mounted, err := IsMounted(dir)
	if err != nil {
		return fmt.Errorf("mount point %s: %w", dir, err)
	}
	if mounted {
		// The kernel may answer stat from cached attributes even after
		// the server died; statfs always asks it.
		var st unix.Statfs_t
		if err := unix.Statfs(dir, &st); errors.Is(err, syscall.ENOTCONN) {
			return staleError(dir)
		}
		return fmt.Errorf("mount point %s already has a file system mounted on it: unmount it first (`tbfs unmount %s`)", dir, dir)
	}
	return nil
}

func staleError(dir string) error {
	return fmt.Errorf("mount point %s: %w (its server has exited): unmount it first with `tbfs unmount %s` or `fusermount3 -u %s`", dir, ErrStaleMount, dir, dir)
}

func fileKind(m os.FileMode) string {
	switch {
	case m.IsRegular():
		return "regular file"
	case m&os.ModeSymlink != 0:
		return "symbolic link"
	case m&os.ModeDevice != 0:
		return "device"
	case m&os.ModeNamedPipe != 0:
		return "named pipe"
	case m&os.ModeSocket != 0:
		return "socket"
	}
	return m.Type().String()
}

// IsMounted reports whether dir is the mount point of a mount in this
// process's namespace, from /proc/self/mountinfo.
func IsMounted(dir string) (bool, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return false, err
	}
	// mountinfo shows the resolved path; a stale mount cannot be
	// resolved, and then the path as given is what to look for.
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		// Fields: id parent major:minor root mountpoint options ...
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 && unescapeMountinfo(fields[4]) == abs {
			return true, nil
		}
	}
	return false, sc.Err()
}

// unescapeMountinfo undoes the octal escapes (\040 for a space) of a
// mountinfo path.
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
