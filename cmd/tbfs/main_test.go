package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tbfs/tbfs/internal/testkit/mounttest"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/source/s3/s3test"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// TestMain removes the binary the tests built, so runs leave nothing in
// the temporary directory.
func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// binary builds tbfs once per test run.
func binary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "tbfs-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "tbfs")
		build := exec.Command("go", "build", "-o", binPath, ".")
		build.Env = append(os.Environ(), "CGO_ENABLED=0") // as README.md installs it
		out, err := build.CombinedOutput()
		if err != nil {
			buildErr = errors.New(string(out))
		}
	})
	if buildErr != nil {
		t.Fatalf("go build: %v", buildErr)
	}
	return binPath
}

// mounted reports whether dir is a mount point.
func mounted(t *testing.T, dir string) bool { return mounttest.Mounted(t, dir) }

// process is a running `tbfs mount`.
type process = mounttest.Process

// startMount runs `tbfs mount args... MNT` and returns once it reports the
// mount ready (package internal/testkit/mounttest).
func startMount(t *testing.T, env []string, args ...string) (string, *process) {
	t.Helper()
	p := mounttest.Start(t, binary(t), env, append([]string{"mount"}, args...)...)
	return p.Dir, p
}

// The expected value is the reference prober's answer for this FEN
// (testdata/chesstb/oracle/probe.tsv and seed_cases.tsv: WIN, dtm 19,
// dtm50 WIN/19).
const (
	seedFEN   = "8/8/8/5k2/8/8/1Q6/K7 w - - 0 1"
	seedWDL   = "2\n"
	seedDTM   = "19\n"
	seedDTM50 = "19\n"
)

func TestSignalsUnmount(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			mnt, p := startMount(t, nil, "--tables", testenv.Testdata(t, "chesstb"))
			b, err := os.ReadFile(filepath.Join(mnt, "wdl", seedFEN))
			if err != nil || string(b) != seedWDL {
				t.Fatalf("wdl: %q, %v", b, err)
			}
			// An open file must not keep the mount alive after the signal.
			f, err := os.Open(filepath.Join(mnt, "README"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			p.Cmd.Process.Signal(sig)
			if code := p.Wait(t); code != 0 {
				t.Fatalf("exit status %d after %v\n%s", code, sig, p.Stderr)
			}
			if mounted(t, mnt) {
				t.Fatalf("%s still mounted after %v", mnt, sig)
			}
		})
	}
}

func TestUnmountCommand(t *testing.T) {
	mnt, p := startMount(t, nil, "--tables", testenv.Testdata(t, "chesstb"))
	out, err := exec.Command(binary(t), "unmount", mnt).CombinedOutput()
	if err != nil {
		t.Fatalf("tbfs unmount: %v: %s", err, out)
	}
	if code := p.Wait(t); code != 0 {
		t.Fatalf("mount exited %d\n%s", code, p.Stderr)
	}
	if mounted(t, mnt) {
		t.Fatalf("%s still mounted", mnt)
	}
}

// TestDefaultTables: without --tables the fixture tables built into the
// binary are mounted (the chesstb roots, so the DTC/DTM50 packs answer
// too, and the Syzygy fixtures), from a working directory with no checkout
// around it, and tables/ shows the table files only. The expected values
// are the reference probers': testdata/chesstb/oracle/seed_cases.tsv for
// the seed (WIN, dtm 19, dtm50 WIN/19), and Fathom's rows of the Syzygy
// fixtures (testdata/syzygy/probe.tsv), every one read through wdl/ and
// chess/<FEN>.json: the tables' class of Fathom's DTZ50″, formats naming
// both formats (each fixture material has a chesstb table too) and
// syzygy_dtz Fathom's value. tables/ lists exactly the fixture
// directories' table files, each once, and passes each Syzygy file
// through byte for byte.
func TestDefaultTables(t *testing.T) {
	mnt, p := startMount(t, nil, "--debug")
	name := strings.ReplaceAll(seedFEN, " ", "_")
	for _, c := range []struct{ dir, want string }{
		{"wdl", seedWDL},
		{"dtm", seedDTM},
		{"dtm50", seedDTM50},
	} {
		b, err := os.ReadFile(filepath.Join(mnt, c.dir, name))
		if err != nil || string(b) != c.want {
			t.Errorf("%s/%s: %q, %v; want %q\n%s", c.dir, name, b, err, c.want, p.Stderr)
		}
	}
	b, err := os.ReadFile(filepath.Join(mnt, "chess", seedFEN+".json"))
	if err != nil {
		t.Fatalf("%v\n%s", err, p.Stderr)
	}
	var d struct {
		WDL   *int `json:"wdl"`
		DTM50 *int `json:"dtm50"`
	}
	if err := json.Unmarshal(b, &d); err != nil || d.WDL == nil || *d.WDL != 2 || d.DTM50 == nil || *d.DTM50 != 19 {
		t.Errorf("chess/%s.json = %s (%v); want wdl 2, dtm50 19", seedFEN, b, err)
	}
	checkFathomRows(t, mnt)
	checkTablesDir(t, mnt)
	// --debug logs the reason for a refused path.
	if _, err := os.ReadFile(filepath.Join(mnt, "wdl/8/8/8/5k2/8/8/1Q6/K7_z")); !errors.Is(err, syscall.ENOENT) {
		t.Fatalf("bad side to move: %v", err)
	}
	p.Cmd.Process.Signal(syscall.SIGINT)
	p.Wait(t)
	if !strings.Contains(p.Stderr.String(), "side to move") {
		t.Errorf("--debug log lacks the reason:\n%s", p.Stderr)
	}
}

// TestS3 mounts tables served by an S3 server on loopback and reads the
// same values and the same raw bytes as from the folder.
func TestS3(t *testing.T) {
	dir := testenv.Testdata(t, "chesstb")
	srv, url := s3test.ServeDir(t, dir)
	mnt, p := startMount(t, srv.Env(), "--tables", url)
	b, err := os.ReadFile(filepath.Join(mnt, "chess", seedFEN+".json"))
	if err != nil {
		t.Fatalf("%v\n%s", err, p.Stderr)
	}
	var d map[string]any
	if err := json.Unmarshal(b, &d); err != nil || d["wdl"] != float64(2) || d["dtm"] != float64(19) {
		t.Fatalf("json %s: %v", b, err)
	}
	raw, err := os.ReadFile(filepath.Join(mnt, "tables", "wdl", "KQK.lzw"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(dir, "wdl", "KQK.lzw"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(raw, want) {
		t.Fatalf("tables/wdl/KQK.lzw over S3: %d bytes differ from the file's %d", len(raw), len(want))
	}
	stats, err := os.ReadFile(filepath.Join(mnt, ".stats"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Counters struct {
			Transport []struct {
				URL             string
				Opens, Requests int64
				Bytes           int64
			} `json:"transport"`
		} `json:"counters"`
	}
	// Opening an object fetches its first bytes, which may answer every
	// read of a small table: opens and reads together are the requests.
	if err := json.Unmarshal(stats, &s); err != nil || len(s.Counters.Transport) != 1 ||
		s.Counters.Transport[0].Opens+s.Counters.Transport[0].Requests == 0 || s.Counters.Transport[0].Bytes == 0 {
		t.Fatalf(".stats: %s (%v)", stats, err)
	}
	p.Cmd.Process.Signal(syscall.SIGTERM)
	if code := p.Wait(t); code != 0 {
		t.Fatalf("exit %d\n%s", code, p.Stderr)
	}
}

// TestCacheDir: with --cache-dir, a second mount of the same S3 tables
// within the metadata TTL answers the same reads without one transport
// request: no read, no open (HEAD or GET), no listing.
func TestCacheDir(t *testing.T) {
	dir := testenv.Testdata(t, "chesstb")
	srv, url := s3test.ServeDir(t, dir)
	cache := t.TempDir()
	read := func(mnt string) {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(mnt, "dtm", seedFEN))
		if err != nil || string(b) != seedDTM {
			t.Fatalf("dtm: %q, %v", b, err)
		}
		raw, err := os.ReadFile(filepath.Join(mnt, "tables", "dtz", "KQK.lzdtz"))
		want, _ := os.ReadFile(filepath.Join(dir, "dtz", "KQK.lzdtz"))
		if err != nil || !bytes.Equal(raw, want) {
			t.Fatalf("raw table through the disk cache differs (%v)", err)
		}
	}
	requests := func(mnt string) (requests int64, disk int64) {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(mnt, ".stats"))
		if err != nil {
			t.Fatal(err)
		}
		var s struct {
			Counters struct {
				Transport []struct {
					Requests, Opens, Lists int64
					DiskCachedBytes        int64 `json:"disk_cached_bytes"`
				} `json:"transport"`
			} `json:"counters"`
		}
		if err := json.Unmarshal(b, &s); err != nil || len(s.Counters.Transport) != 1 {
			t.Fatalf(".stats: %s (%v)", b, err)
		}
		tr := s.Counters.Transport[0]
		return tr.Requests + tr.Opens + tr.Lists, tr.DiskCachedBytes
	}
	args := []string{"--tables", url, "--cache-dir", cache, "--cache-dir-size", "20M"}
	mnt, p := startMount(t, srv.Env(), args...)
	read(mnt)
	if n, disk := requests(mnt); n == 0 || disk == 0 {
		t.Fatalf("first mount: %d requests, %d bytes on disk", n, disk)
	}
	p.Cmd.Process.Signal(syscall.SIGTERM)
	if code := p.Wait(t); code != 0 {
		t.Fatalf("exit %d\n%s", code, p.Stderr)
	}
	mnt, p = startMount(t, srv.Env(), args...)
	read(mnt)
	if n, _ := requests(mnt); n != 0 {
		t.Errorf("second mount made %d transport requests for reads the disk cache holds", n)
	}
	p.Cmd.Process.Signal(syscall.SIGTERM)
	p.Wait(t)
}

// TestGeisterFlag: --geister adds geister/; the expected value is the
// reference runtime's (testdata/geister/values_id000.tsv, pos_id 1).
func TestGeisterFlag(t *testing.T) {
	t.Run("given", func(t *testing.T) {
		testGeisterMount(t, "--tables", testenv.Testdata(t, "chesstb"), "--geister", testenv.Testdata(t, "geister"))
	})
	// Without --geister the fixture table built into the binary answers
	// (issue 20), as the chess fixtures do without --tables.
	t.Run("embedded", func(t *testing.T) { testGeisterMount(t) })
}

// testGeisterMount mounts with args and reads one oracle board from
// geister/.
func testGeisterMount(t *testing.T, args ...string) {
	mnt, p := startMount(t, nil, args...)
	b, err := os.ReadFile(filepath.Join(mnt, "geister", "...r../....../..B.../.R..../....../b......json"))
	if err != nil {
		t.Fatalf("%v\n%s", err, p.Stderr)
	}
	var d struct{ Value *int }
	if err := json.Unmarshal(b, &d); err != nil || d.Value == nil || *d.Value != 2 {
		t.Fatalf("geister board: %s (%v), want value 2", b, err)
	}
	p.Cmd.Process.Signal(syscall.SIGINT)
	if code := p.Wait(t); code != 0 {
		t.Fatalf("exit %d\n%s", code, p.Stderr)
	}
}

func TestUsage(t *testing.T) {
	tests := []struct {
		args []string
		code int
		msg  string
	}{
		{nil, 2, "usage"},
		{[]string{"frobnicate"}, 2, "unknown command"},
		{[]string{"mount"}, 2, "one MOUNTPOINT"},
		{[]string{"mount", "--nope", "x"}, 2, "unknown flag"},
		{[]string{"mount", "--cache-size", "lots", "x"}, 2, "bad size"},
		{[]string{"mount", "--tables", "gopher://x/y", t.TempDir()}, 1, "unknown scheme"},
		{[]string{"mount", "--umask", "999", "x"}, 2, "octal"},
		{[]string{"mount", "--log-level", "loud", "x"}, 2, "debug, info, warn or error"},
		{[]string{"unmount"}, 2, "one MOUNTPOINT"},
		{[]string{"unmount", t.TempDir()}, 1, "unmount"},
		{[]string{"help"}, 0, "usage"},
	}
	for _, tt := range tests {
		var out, errb bytes.Buffer
		code := run(tt.args, &out, &errb)
		if code != tt.code || !strings.Contains(out.String()+errb.String(), tt.msg) {
			t.Errorf("tbfs %v: exit %d, output %q; want %d and %q", tt.args, code, out.String()+errb.String(), tt.code, tt.msg)
		}
	}
}

// readAfterExpiry reads path until the kernel asks tbfs for it again and
// the answer holds want (any answer at all when want is ""). The kernel
// keeps an entry for at least one clock tick, however short its timeout
// (a few milliseconds), so the first read after a change may still be the
// old answer; the loop is bounded.
func readAfterExpiry(t *testing.T, path, want string) []byte {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, err := os.ReadFile(path)
		if err == nil && strings.Contains(string(b), want) {
			return b
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still %q (%v) after 5s, want %q in it", path, b, err, want)
		}
	}
}

// TestChessMetadataTTL: with --metadata-ttl 0, a chess/ file read while its
// table was missing (an answer that says so) answers the reference's values
// once the table is copied in, without a remount; so do the wdl/ and dtm/
// views, refused while it was missing. Arbiter: the reference prober's
// answer for seedFEN.
func TestChessMetadataTTL(t *testing.T) {
	src := testenv.Testdata(t, "chesstb")
	dir := t.TempDir()
	// Each table appears whole (written aside, then renamed), as a
	// careful operator copies one into a live directory: a background
	// open racing a half-written file would find it corrupt.
	copyFile := func(from, to string) {
		t.Helper()
		b, err := os.ReadFile(from)
		if err == nil {
			err = os.WriteFile(to+".part", b, 0o644)
		}
		if err == nil {
			err = os.Rename(to+".part", to)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	var kqk []string
	for _, kind := range []string{"wdl", "dtz", "dtm"} {
		if err := os.MkdirAll(filepath.Join(dir, kind), 0o755); err != nil {
			t.Fatal(err)
		}
		ents, err := os.ReadDir(filepath.Join(src, kind))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			rel := filepath.Join(kind, e.Name())
			if strings.HasPrefix(e.Name(), "KQK.") {
				kqk = append(kqk, rel)
				continue
			}
			copyFile(filepath.Join(src, rel), filepath.Join(dir, rel))
		}
	}
	mnt, p := startMount(t, nil, "--tables", dir, "--metadata-ttl", "0")
	human := filepath.Join(mnt, "chess", seedFEN)
	if b, err := os.ReadFile(human); err != nil || strings.Contains(string(b), "DTM") {
		t.Fatalf("chess/ with KQK missing: %q (%v), want an answer without values", b, err)
	}
	if _, err := os.ReadFile(filepath.Join(mnt, "wdl", seedFEN)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("wdl/ with KQK missing: %v, want ENOENT", err)
	}
	for _, rel := range kqk {
		copyFile(filepath.Join(src, rel), filepath.Join(dir, rel))
	}
	b := readAfterExpiry(t, human, "DTM")
	lines := map[string]string{}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 2 {
			lines[f[0]] = f[1]
		}
	}
	if lines["WDL"]+"\n" != seedWDL || lines["DTM"]+"\n" != seedDTM {
		t.Errorf("chess/ after KQK appeared: WDL %q DTM %q, want %q %q:\n%s", lines["WDL"], lines["DTM"], seedWDL, seedDTM, b)
	}
	for view, want := range map[string]string{"wdl": seedWDL, "dtm": seedDTM} {
		if b := readAfterExpiry(t, filepath.Join(mnt, view, seedFEN), ""); string(b) != want {
			t.Errorf("%s/ after KQK appeared: %q, want %q", view, b, want)
		}
	}
	p.Cmd.Process.Signal(syscall.SIGINT)
	if code := p.Wait(t); code != 0 {
		t.Fatalf("exit %d\n%s", code, p.Stderr)
	}
}

// TestGeisterMetadataTTL: with --metadata-ttl 0 a Geister table copied
// into the --geister location after a read found it missing answers the
// next read of another board of it (the kernel may keep the first board's
// file, error and all: the tree's files count as immutable). The expected
// value is the reference runtime's (testdata/geister/values_id000.tsv,
// pos_id 4).
func TestGeisterMetadataTTL(t *testing.T) {
	dir := t.TempDir()
	mnt, p := startMount(t, nil, "--tables", testenv.Testdata(t, "chesstb"), "--geister", dir, "--metadata-ttl", "0")
	// The board the oracle answers once the table is there (pos_id 4, value
	// 3), read first while it is missing: the kernel must not keep that
	// answer past --metadata-ttl.
	board := filepath.Join(mnt, "geister", "....../B..r../....R./....../b...../.......json")
	var d struct {
		Value *int
		Error string
	}
	if b, err := os.ReadFile(board); err != nil || json.Unmarshal(b, &d) != nil || d.Value != nil || d.Error == "" {
		t.Fatalf("board read with no table: %s (%v), want an error", b, err)
	}
	name := "id000_pb1pr1ob1or1_obsblk.bin"
	table, err := os.ReadFile(testenv.Testdata(t, "geister", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), table, 0o644); err != nil {
		t.Fatal(err)
	}
	b := readAfterExpiry(t, board, `"value"`)
	d.Value, d.Error = nil, ""
	if err := json.Unmarshal(b, &d); err != nil || d.Value == nil || *d.Value != 3 {
		t.Fatalf("geister board after the table appeared: %s (%v), want value 3", b, err)
	}
	p.Cmd.Process.Signal(syscall.SIGINT)
	if code := p.Wait(t); code != 0 {
		t.Fatalf("exit %d\n%s", code, p.Stderr)
	}
}
