package fusefs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/tbfs/tbfs/fusefs"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/source"
)

// mount mounts a tree built from cfg on a fresh temporary directory and
// returns the directory and the tree. The unmount is registered before the
// mount is attempted, so a test that fails anywhere leaves no mount behind.
func mount(t testing.TB, cfg fusefs.Config) (string, *fusefs.FS) {
	t.Helper()
	return mountWith(t, cfg, fusefs.MountOptions{})
}

// mountAllowOther mounts with allow_other on a directory every user can
// reach.
func mountAllowOther(t testing.TB, cfg fusefs.Config) string {
	t.Helper()
	dir, _ := mountWith(t, cfg, fusefs.MountOptions{AllowOther: true})
	for p := filepath.Dir(dir); p != "/" && p != "."; p = filepath.Dir(p) {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if p == os.TempDir() {
			break
		}
	}
	return dir
}

func mountWith(t testing.TB, cfg fusefs.Config, opts fusefs.MountOptions) (string, *fusefs.FS) {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		testenv.Missing(t, "/dev/fuse")
	}
	if os.Geteuid() != 0 {
		// Only root mounts directly; anyone else mounts through fuse3's
		// helper, which .ci/run installs.
		testenv.Tool(t, "fusermount3")
	}
	dir := t.TempDir()
	f := fusefs.New(cfg)
	var srv *fuse.Server
	t.Cleanup(func() {
		if srv != nil {
			if err := srv.Unmount(); err == nil {
				srv.Wait()
				f.Close()
				return
			}
		}
		// The mount failed half-way or a reader still holds it: detach it
		// so the temporary directory can go.
		unix.Unmount(dir, unix.MNT_DETACH)
		f.Close()
	})
	s, err := fusefs.Mount(dir, f, opts)
	if err != nil {
		t.Fatalf("mount: %v", err)
	}
	srv = s
	return dir, f
}

// memSource is an in-memory source used where a test needs to control the
// transport (failures, listings); values never come from it.
type memSource struct {
	files map[string][]byte
	fail  atomic.Bool // while set, every open and read fails as a transport would
	reads atomic.Int64
}

var errInjected = errors.New("injected transport failure")

func (m *memSource) Open(ctx context.Context, name string) (source.Object, error) {
	if err := source.CheckName(name); err != nil {
		return nil, err
	}
	if m.fail.Load() {
		return nil, &source.Error{Op: "open", Name: name, Err: source.Transient(errInjected)}
	}
	b, ok := m.files[name]
	if !ok {
		return nil, &source.Error{Op: "open", Name: name, Err: source.ErrNotFound}
	}
	return &memObject{src: m, data: b}, nil
}

func (m *memSource) Close() error { return nil }

func (m *memSource) List(ctx context.Context, prefix string) ([]source.Entry, error) {
	if m.fail.Load() {
		return nil, &source.Error{Op: "list", Err: source.Transient(errInjected)}
	}
	var out []source.Entry
	for name, b := range m.files {
		if strings.HasPrefix(name, prefix) {
			out = append(out, source.Entry{Name: name, Size: int64(len(b))})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

type memObject struct {
	src  *memSource
	data []byte
}

func (o *memObject) Size() int64 { return int64(len(o.data)) }

func (o *memObject) ReadAt(ctx context.Context, p []byte, off int64, hint source.Hint) (int, error) {
	if err := source.CheckRange(off, len(p), o.Size()); err != nil {
		return 0, err
	}
	if o.src.fail.Load() {
		return 0, &source.Error{Op: "read", Err: source.Transient(errInjected)}
	}
	o.src.reads.Add(1)
	n := copy(p, o.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (o *memObject) Close() error { return nil }

// pattern returns n bytes that differ at every offset modulo 251, so a read
// from the wrong place shows.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i%251) ^ seed
	}
	return b
}

func TestReadmeAndStats(t *testing.T) {
	dir, _ := mount(t, fusefs.Config{TableURLs: []string{"s3://user:secret@bucket/chesstb", "/srv/tables"}})
	readme, err := os.ReadFile(dir + "/README")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"chess/<FEN>", "tables/", "/srv/tables", "s3://user:REDACTED@bucket/chesstb"} {
		if !strings.Contains(string(readme), want) {
			t.Errorf("README lacks %q:\n%s", want, readme)
		}
	}
	if strings.Contains(string(readme), "secret") {
		t.Errorf("README shows a password:\n%s", readme)
	}
	st, err := os.Stat(dir + "/README")
	if err != nil || st.Size() != int64(len(readme)) {
		t.Errorf("README stat size %v (err %v), read %d bytes", st.Size(), err, len(readme))
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	want := []string{".stats", "README", "chess", "dtc", "dtm", "dtm50", "dtz", "moves", "tables", "wdl"}
	if fmt.Sprint(names) != fmt.Sprint(want) {
		t.Errorf("root lists %v, want %v", names, want)
	}
	snap := readStats(t, dir)
	if snap.Probes != 0 || snap.BadPaths != 0 {
		t.Errorf("fresh .stats = %+v", snap)
	}
}

func TestTablesPassthrough(t *testing.T) {
	// Two sources searched in order: a name in both is served from the
	// first, as the prober would read it.
	first := &memSource{files: map[string][]byte{
		"wdl/KQK.lzw":   pattern(300_000, 1),
		"dtz/KQK.lzdtz": pattern(70_001, 2),
	}}
	second := &memSource{files: map[string][]byte{
		"wdl/KQK.lzw":   pattern(10, 9),
		"wdl/KRK.lzw":   pattern(5, 3),
		"dtm/KQK.lzdtm": nil,
		// Not a table name: never served.
		"README.txt": []byte("top level\n"),
	}}
	dir, f := mount(t, fusefs.Config{Tables: []source.Source{first, second}})
	listing := map[string][]string{
		"tables":     {"dtm", "dtz", "wdl"},
		"tables/wdl": {"KQK.lzw", "KRK.lzw"},
		"tables/dtm": {"KQK.lzdtm"},
	}
	for d, want := range listing {
		ents, err := os.ReadDir(dir + "/" + d)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range ents {
			got = append(got, e.Name())
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s lists %v, want %v", d, got, want)
		}
	}
	contents := map[string][]byte{
		"wdl/KQK.lzw":   first.files["wdl/KQK.lzw"],
		"dtz/KQK.lzdtz": first.files["dtz/KQK.lzdtz"],
		"wdl/KRK.lzw":   second.files["wdl/KRK.lzw"],
		"dtm/KQK.lzdtm": {},
	}
	for name, want := range contents {
		got, err := os.ReadFile(dir + "/tables/" + name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if string(got) != string(want) {
			t.Errorf("tables/%s: read %d bytes that differ from the source's %d", name, len(got), len(want))
		}
		st, err := os.Stat(dir + "/tables/" + name)
		if err != nil || st.Size() != int64(len(want)) {
			t.Errorf("tables/%s: stat size %d (err %v), want %d", name, st.Size(), err, len(want))
		}
	}
	for _, bad := range []string{"tables/wdl/KBK.lzw", "tables/nope", "tables/wdl/KQK.lzw/x", "tables/README.txt"} {
		if _, err := os.Stat(dir + "/" + bad); !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			t.Errorf("stat %s: %v, want not found", bad, err)
		}
	}
	if s := f.Stats(); s.TableBytes == 0 || s.TableErrors != 0 {
		t.Errorf("stats after reads: %+v", s)
	}
}

// TestTablesFault switches the transport off and on: reads of parts the
// kernel has not cached fail with EIO while it is off, README still
// answers, and the same reads succeed once it is back.
func TestTablesFault(t *testing.T) {
	data := pattern(1<<20, 7)
	src := &memSource{files: map[string][]byte{"wdl/KQK.lzw": data}}
	dir, f := mount(t, fusefs.Config{Tables: []source.Source{src}})
	fh, err := os.Open(dir + "/tables/wdl/KQK.lzw")
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	buf := make([]byte, 4096)
	if _, err := fh.ReadAt(buf, 0); err != nil {
		t.Fatal(err)
	}
	src.fail.Store(true)
	// The last page was never read, so the kernel must ask the source.
	_, err = fh.ReadAt(buf, int64(len(data))-4096)
	if !errors.Is(err, syscall.EIO) {
		t.Fatalf("read while the source fails: %v, want EIO", err)
	}
	if _, err := os.ReadFile(dir + "/README"); err != nil {
		t.Fatalf("README while the source fails: %v", err)
	}
	src.fail.Store(false)
	n, err := fh.ReadAt(buf, int64(len(data))-4096)
	if err != nil || string(buf[:n]) != string(data[len(data)-4096:]) {
		t.Fatalf("read after recovery: %d bytes, %v", n, err)
	}
	if s := f.Stats(); s.TableErrors == 0 {
		t.Errorf("stats do not count the failure: %+v", s)
	}
}

// TestTablesListFault: a listing that fails gives EIO and is tried again.
func TestTablesListFault(t *testing.T) {
	src := &memSource{files: map[string][]byte{"wdl/KQK.lzw": pattern(10, 1)}}
	src.fail.Store(true)
	dir, _ := mount(t, fusefs.Config{Tables: []source.Source{src}})
	if _, err := os.ReadDir(dir + "/tables"); !errors.Is(err, syscall.EIO) {
		t.Fatalf("listing while the source fails: %v, want EIO", err)
	}
	src.fail.Store(false)
	got, err := os.ReadFile(dir + "/tables/wdl/KQK.lzw")
	if err != nil || string(got) != string(src.files["wdl/KQK.lzw"]) {
		t.Fatalf("after recovery: %q, %v", got, err)
	}
}

// TestTablesConcurrent reads random ranges of a table from many goroutines
// and checks every byte against the source.
func TestTablesConcurrent(t *testing.T) {
	data := pattern(3<<20, 5)
	src := &memSource{files: map[string][]byte{"dtz/KRK.lzdtz": data}}
	dir, _ := mount(t, fusefs.Config{Tables: []source.Source{src}})
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fh, err := os.Open(dir + "/tables/dtz/KRK.lzdtz")
			if err != nil {
				errs <- err
				return
			}
			defer fh.Close()
			buf := make([]byte, 10_000)
			for i := range 20 {
				off := int64((g*7919 + i*104729) % (len(data) - len(buf)))
				if _, err := fh.ReadAt(buf, off); err != nil {
					errs <- err
					return
				}
				if string(buf) != string(data[off:off+int64(len(buf))]) {
					errs <- fmt.Errorf("bytes at %d differ", off)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func readStats(t *testing.T, dir string) fusefs.Snapshot {
	t.Helper()
	b, err := os.ReadFile(dir + "/.stats")
	if err != nil {
		t.Fatal(err)
	}
	var s fusefs.Snapshot
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf(".stats is not JSON: %v\n%s", err, b)
	}
	return s
}
