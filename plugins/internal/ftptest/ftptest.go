// Package ftptest runs a real FTP server (goftp.io/server) on loopback for
// tests, serving a local directory read-only.
package ftptest

import (
	"fmt"
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

// Start is Serve returning the Server.
func Start(t testing.TB, dir string) *Server {
	t.Helper()
	drv, err := file.NewDriver(dir)
	if err != nil {
		t.Fatal(err)
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
