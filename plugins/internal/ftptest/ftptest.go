// Package ftptest runs a real FTP server (goftp.io/server) on loopback for
// tests, serving a local directory read-only.
package ftptest

import (
	"fmt"
	"io"
	"net"
	"sync"
	"testing"

	ftpserver "goftp.io/server/v2"
	"goftp.io/server/v2/driver/file"
)

// User and Password are the login the test server accepts.
const (
	User     = "tbfs"
	Password = "s3cret"
)

// Serve serves dir over FTP on 127.0.0.1 until the test ends and returns
// its address, host:port.
func Serve(t testing.TB, dir string) string {
	t.Helper()
	return Start(t, dir).Addr
}

// Server is a running test FTP server.
type Server struct {
	// Addr is its host:port.
	Addr string
	tl   *trackingListener
}

// Conns counts the control connections the server has accepted.
func (s *Server) Conns() int {
	s.tl.mu.Lock()
	defer s.tl.mu.Unlock()
	return len(s.tl.conns)
}

// DropConns closes every control connection from the server's side, as a
// server does with idle clients, and keeps listening.
func (s *Server) DropConns() { s.tl.closeAll() }

// Options tune a test server.
type Options struct {
	// StallAfter, when positive, makes every download stop after that
	// many bytes and send nothing more until the test ends: a server
	// that hangs in the middle of a transfer.
	StallAfter int64
	// OnStall, when set, is called each time a download stalls.
	OnStall func()
}

// Start is Serve returning the Server.
func Start(t testing.TB, dir string) *Server {
	t.Helper()
	return StartWith(t, dir, Options{})
}

// stallDriver serves files that stop partway, until released.
type stallDriver struct {
	ftpserver.Driver
	after   int64
	onStall func()
	release <-chan struct{}
}

func (d stallDriver) GetFile(ctx *ftpserver.Context, p string, off int64) (int64, io.ReadCloser, error) {
	n, rc, err := d.Driver.GetFile(ctx, p, off)
	if err != nil {
		return n, rc, err
	}
	return n, &stallReader{rc: rc, left: d.after, onStall: d.onStall, release: d.release}, nil
}

type stallReader struct {
	rc      io.ReadCloser
	left    int64
	onStall func()
	release <-chan struct{}
}

func (r *stallReader) Read(p []byte) (int, error) {
	if r.left <= 0 {
		if r.onStall != nil {
			r.onStall()
			r.onStall = nil
		}
		<-r.release
		return 0, io.ErrClosedPipe
	}
	if int64(len(p)) > r.left {
		p = p[:r.left]
	}
	n, err := r.rc.Read(p)
	r.left -= int64(n)
	return n, err
}

func (r *stallReader) Close() error { return r.rc.Close() }

// StartWith is Start with options.
func StartWith(t testing.TB, dir string, opts Options) *Server {
	t.Helper()
	drv, err := file.NewDriver(dir)
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	if opts.StallAfter > 0 {
		drv = stallDriver{Driver: drv, after: opts.StallAfter, onStall: opts.OnStall, release: release}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	srv, err := ftpserver.NewServer(&ftpserver.Options{
		Driver:   drv,
		Auth:     &ftpserver.SimpleAuth{Name: User, Password: Password},
		Perm:     ftpserver.NewSimplePerm("tbfs", "tbfs"),
		Hostname: "127.0.0.1",
		Port:     port,
		Logger:   discard{},
	})
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	tl := &trackingListener{Listener: ln}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(tl)
	}()
	// The server's own Shutdown races with Serve on its fields, so the
	// test closes the listener and every connection itself.
	t.Cleanup(func() {
		close(release)
		_ = ln.Close()
		<-done
		tl.closeAll()
	})
	return &Server{Addr: ln.Addr().String(), tl: tl}
}

// URL returns the ftp:// URL, with the test login, for dir served at addr.
func URL(addr string) string {
	return fmt.Sprintf("ftp://%s:%s@%s/", User, Password, addr)
}

// trackingListener remembers accepted connections so they can be closed
// when the test ends.
type trackingListener struct {
	net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func (l *trackingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.mu.Lock()
		l.conns = append(l.conns, c)
		l.mu.Unlock()
	}
	return c, err
}

func (l *trackingListener) closeAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.conns {
		_ = c.Close()
	}
}

type discard struct{}

func (discard) Print(string, any)                   {}
func (discard) Printf(string, string, ...any)       {}
func (discard) PrintCommand(string, string, string) {}
func (discard) PrintResponse(string, int, string)   {}
