package mirrortest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// Indexer is a real web server, with the directory index pages it
// generates for a folder without an index file turned on: what public
// table mirrors run. ServeIndexed starts one.
type Indexer string

// The servers (Debian's packages nginx, apache2 and lighttpd; .ci/run
// installs them), each in one index format.
const (
	// Nginx is nginx with autoindex on (its one HTML format, exact sizes).
	Nginx Indexer = "nginx"
	// ApachePlain is Apache httpd's mod_autoindex without FancyIndexing,
	// its built-in default: a <ul> of links.
	ApachePlain Indexer = "apache-plain"
	// ApacheFancy is mod_autoindex with FancyIndexing: a <pre> of lines
	// under sort links.
	ApacheFancy Indexer = "apache-fancy"
	// ApacheTable is mod_autoindex as Debian's autoindex.conf configures
	// it: FancyIndexing with HTMLTable, VersionSort and UTF-8.
	ApacheTable Indexer = "apache-table"
	// Lighttpd is lighttpd with mod_dirlisting on.
	Lighttpd Indexer = "lighttpd"
)

// Indexers lists every Indexer.
var Indexers = []Indexer{Nginx, ApachePlain, ApacheFancy, ApacheTable, Lighttpd}

// ServeIndexed starts server on a free loopback port, serving dir (read
// only, with Range and validators as each server sends them) with its
// directory index pages on, and returns the base URL, ending in a slash.
// A folder holding an index.html is shown that page instead, as each
// server's packaged configuration does.
// The server runs from a configuration in a temporary folder and is
// stopped by t.Cleanup. A server that is not installed fails the test
// under CI and skips it elsewhere (testenv.Tool).
//
// Run as root, nginx's workers and Apache's children serve as nobody, so
// dir and everything in it must be readable by others: folders under the
// system's temporary folder (t.TempDir) are opened up for them, anything
// else must be already.
func ServeIndexed(t testing.TB, server Indexer, dir string) string {
	t.Helper()
	dir, err := filepath.Abs(dir)
	if err != nil {
		t.Fatalf("httptest: %v", err)
	}
	var bin string
	switch server {
	case Nginx:
		bin = testenv.Tool(t, "nginx")
	case ApachePlain, ApacheFancy, ApacheTable:
		bin = testenv.Tool(t, "apache2")
		if _, err := os.Stat(apacheModules); err != nil {
			testenv.Missing(t, "Apache modules in "+apacheModules)
		}
	case Lighttpd:
		bin = testenv.Tool(t, "lighttpd")
	default:
		t.Fatalf("httptest: no server %q", server)
	}
	if os.Geteuid() == 0 && server != Lighttpd {
		openForOthers(t, dir)
	}
	var lastErr error
	// A port found free can be taken before the server binds it; the
	// server then exits, and another port is tried.
	for range 3 {
		addr, err := freeAddr()
		if err != nil {
			t.Fatalf("httptest: %v", err)
		}
		base, err := startIndexer(t, server, bin, dir, addr)
		if err == nil {
			return base
		}
		lastErr = err
		if !errors.Is(err, errPortTaken) {
			break
		}
	}
	t.Fatalf("httptest: %v", lastErr)
	return ""
}

// apacheModules is where Debian installs Apache's modules.
const apacheModules = "/usr/lib/apache2/modules"

// errPortTaken means the server could not bind the port it was given.
var errPortTaken = errors.New("port taken")

// freeAddr is a loopback address whose port was free a moment ago.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// indexerRun is how one server is started: its command line, its
// configuration, and the line it logs once it listens.
type indexerRun struct {
	args   []string
	config string // written to conf
	conf   string
	ready  string
}

func indexerCommand(server Indexer, bin, dir, addr, tmp string) indexerRun {
	conf := filepath.Join(tmp, "server.conf")
	switch server {
	case Nginx:
		var temps strings.Builder
		for _, k := range []string{"client_body", "proxy", "fastcgi", "uwsgi", "scgi"} {
			fmt.Fprintf(&temps, "  %s_temp_path %s;\n", k, filepath.Join(tmp, k))
		}
		return indexerRun{
			// -e: the log before the configuration is read, which
			// would otherwise be a file under /var/log.
			args: []string{bin, "-e", "stderr", "-p", tmp, "-c", conf},
			config: fmt.Sprintf(`daemon off;
pid %s;
error_log stderr notice;
worker_processes 1;
events { worker_connections 256; }
http {
  access_log off;
%s  server {
    listen %s;
    root %s;
    location / { autoindex on; }
  }
}
`, filepath.Join(tmp, "nginx.pid"), temps.String(), addr, nginxQuote(dir)),
			conf:  conf,
			ready: "start worker processes",
		}
	case ApachePlain, ApacheFancy, ApacheTable:
		opts := ""
		switch server {
		case ApacheFancy:
			opts = "IndexOptions FancyIndexing"
		case ApacheTable:
			// Debian's /etc/apache2/mods-available/autoindex.conf.
			opts = "IndexOptions FancyIndexing VersionSort HTMLTable NameWidth=* DescriptionWidth=* Charset=UTF-8"
		}
		user := ""
		if os.Geteuid() == 0 {
			user = "User nobody\nGroup " + nobodyGroup() + "\n"
		}
		mod := func(name, file string) string {
			return fmt.Sprintf("LoadModule %s_module %s\n", name, filepath.Join(apacheModules, file))
		}
		return indexerRun{
			args: []string{bin, "-f", conf, "-DFOREGROUND"},
			config: fmt.Sprintf(`ServerRoot %q
ServerName 127.0.0.1
PidFile %q
DefaultRuntimeDir %q
Mutex file:%s
%s%s%s%s%sListen %s
ErrorLog /dev/stderr
LogLevel notice
DocumentRoot %q
<Directory %q>
  Options +Indexes
  Require all granted
  %s
</Directory>
`, tmp, filepath.Join(tmp, "apache.pid"), tmp, tmp,
				mod("mpm_event", "mod_mpm_event.so"), mod("authz_core", "mod_authz_core.so"), mod("autoindex", "mod_autoindex.so"),
				mod("dir", "mod_dir.so"),
				user, addr, dir, dir, opts),
			conf:  conf,
			ready: "resuming normal operations",
		}
	case Lighttpd:
		host, port, _ := net.SplitHostPort(addr)
		return indexerRun{
			args: []string{bin, "-D", "-f", conf},
			config: fmt.Sprintf(`server.document-root = %q
server.bind = %q
server.port = %s
server.errorlog = "/dev/stderr"
server.pid-file = %q
server.modules = ("mod_indexfile", "mod_dirlisting")
index-file.names = ("index.html")
dir-listing.activate = "enable"
`, dir, host, port, filepath.Join(tmp, "lighttpd.pid")),
			conf:  conf,
			ready: "server started",
		}
	}
	return indexerRun{}
}

// nginxQuote quotes a path for nginx's configuration.
func nginxQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// nobodyGroup is the group of the user nobody: nogroup on Debian, nobody
// elsewhere.
func nobodyGroup() string {
	b, err := os.ReadFile("/etc/group")
	if err == nil && strings.Contains("\n"+string(b), "\nnogroup:") {
		return "nogroup"
	}
	return "nobody"
}

// startIndexer starts one server on addr and returns once it has logged
// that it listens, which each does after binding its socket.
func startIndexer(t testing.TB, server Indexer, bin, dir, addr string) (string, error) {
	tmp, err := os.MkdirTemp("", "tbfs-"+string(server)+"-")
	if err != nil {
		return "", err
	}
	run := indexerCommand(server, bin, dir, addr, tmp)
	if os.Geteuid() == 0 {
		// Apache's children open the error log as nobody.
		os.Chmod(tmp, 0o755)
	}
	if err := os.WriteFile(run.conf, []byte(run.config), 0o644); err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	cmd := exec.Command(run.args[0], run.args[1:]...)
	// Its own process group, so stopping it stops its workers too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stdout = io.Discard
	stderr, err := cmd.StderrPipe()
	if err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("starting %s: %w", bin, err)
	}
	log := &serverLog{ready: run.ready, up: make(chan struct{})}
	drained := make(chan struct{})
	go func() {
		log.read(stderr)
		close(drained)
	}()
	exited := make(chan error, 1)
	go func() {
		<-drained // Wait closes the pipe: read it all first
		exited <- cmd.Wait()
	}()
	stop := func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		os.RemoveAll(tmp)
	}
	select {
	case <-log.up:
	case werr := <-exited:
		os.RemoveAll(tmp)
		out := log.String()
		if strings.Contains(out, "in use") {
			return "", fmt.Errorf("%w: %s on %s: %s", errPortTaken, server, addr, out)
		}
		return "", fmt.Errorf("%s exited before serving (%v):\n%s", server, werr, out)
	case <-time.After(30 * time.Second):
		stop()
		return "", fmt.Errorf("%s logged no %q within 30s:\n%s", server, run.ready, log.String())
	}
	t.Cleanup(stop)
	return "http://" + addr + "/", nil
}

// serverLog keeps what a server writes to its error log and closes up
// when the ready line has been written.
type serverLog struct {
	ready string
	up    chan struct{}

	mu    sync.Mutex
	lines []string
	seen  bool
}

func (l *serverLog) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		l.mu.Lock()
		if len(l.lines) < 200 {
			l.lines = append(l.lines, sc.Text())
		}
		if !l.seen && strings.Contains(sc.Text(), l.ready) {
			l.seen = true
			close(l.up)
		}
		l.mu.Unlock()
	}
	io.Copy(io.Discard, r)
}

func (l *serverLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// openForOthers lets other users read dir's tree and pass through the
// folders above it, opening up those under the temporary folder (the
// test's own) and failing on any other that is closed.
func openForOthers(t testing.TB, dir string) {
	t.Helper()
	tmp, err := filepath.EvalSymlinks(os.TempDir())
	if err != nil {
		t.Fatalf("httptest: %v", err)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatalf("httptest: %v", err)
	}
	ours := func(p string) bool { return p == tmp || strings.HasPrefix(p, tmp+string(filepath.Separator)) }
	open := func(p string, want fs.FileMode) {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatalf("httptest: %v", err)
		}
		if fi.Mode().Perm()&want == want {
			return
		}
		if !ours(p) {
			t.Fatalf("httptest: %s is not readable by others, which the server's workers need", p)
		}
		if err := os.Chmod(p, fi.Mode().Perm()|want); err != nil {
			t.Fatalf("httptest: %v", err)
		}
	}
	for p := filepath.Dir(real); ; p = filepath.Dir(p) {
		open(p, 0o001)
		if p == filepath.Dir(p) {
			break
		}
	}
	err = filepath.WalkDir(real, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			open(p, 0o005)
		} else if d.Type().IsRegular() {
			open(p, 0o004)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("httptest: %v", err)
	}
}
