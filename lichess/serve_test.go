package lichess_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/tbfs/tbfs/lichess"
)

// TestServeShutdownWithIdleConnections stops a server while one client
// holds a keep-alive connection after a request and another has connected
// without sending anything: Serve must return nil (a clean stop), not an
// error after the grace. net/http's Shutdown alone waits five seconds for
// the second kind, longer than this grace, which is what made tbprobe
// serve exit 1 on SIGTERM.
func TestServeShutdownWithIdleConnections(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	done := make(chan error, 1)
	go func() { done <- lichess.Serve(ctx, ln, h, time.Second) }()

	client := &http.Client{Transport: &http.Transport{}}
	resp, err := client.Get("http://" + ln.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(resp.Body)
	resp.Body.Close() // the connection stays open, idle, in the pool
	silent, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	// The server has accepted the silent connection once a request on a
	// third connection is answered (one accept loop, in order).
	probe, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Get("http://" + ln.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	probe.Body.Close()

	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve after a stop with idle connections: %v", err)
	}
	// Both connections were closed by the server.
	silent.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := silent.Read(make([]byte, 1)); err == nil {
		t.Error("the silent connection is still open")
	}
}
