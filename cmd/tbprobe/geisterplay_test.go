package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// A match through the command line: tbprobe geister serve on loopback and
// two tbprobe geister play clients with the committed id000 table, from a
// one-blue-one-red-a-side setup. The arbiter is the protocol: the game ends
// with one client told WON and the other LST, or both DRW.
func TestGeisterPlayServe(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pr, pw := io.Pipe()
	var serveErr bytes.Buffer
	served := make(chan int, 1)
	setup := "12B99b99b99b44R99r99r99r" + "31b99b99b99b23r99r99r99r"
	go func() {
		code := runGeisterServe(ctx, []string{"--listen", "127.0.0.1:0", "--listen2", "127.0.0.1:0", "--matches", "1",
			"--setup", setup, "--timeout", "20s"}, nil, pw, &serveErr)
		pw.Close()
		served <- code
	}()
	br := bufio.NewReader(pr)
	var addrs [2]string
	for i, prefix := range []string{"first player: ", "second player: "} {
		line, err := br.ReadString('\n')
		if err != nil || !strings.HasPrefix(line, prefix) {
			t.Fatalf("serve printed %q, %v (stderr %s)", line, err, serveErr.String())
		}
		addrs[i] = strings.TrimSpace(strings.TrimPrefix(line, prefix))
	}
	logc := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(br)
		logc <- string(b)
	}()
	type played struct {
		code   int
		stdout string
		stderr string
	}
	results := make(chan played, 2)
	tables := testenv.Testdata(t, "geister")
	for _, addr := range addrs {
		go func() {
			var out, errb bytes.Buffer
			code := runGeisterPlay(ctx, []string{"--server", addr, "--tables", tables, "--timeout", "30s"}, nil, &out, &errb)
			results <- played{code, out.String(), errb.String()}
		}()
	}
	var verdicts []string
	for range 2 {
		p := <-results
		if p.code != 0 {
			t.Fatalf("play exit %d, stderr %s", p.code, p.stderr)
		}
		i := strings.Index(p.stdout, "result: ")
		if i < 0 {
			t.Fatalf("play output has no result:\n%s", p.stdout)
		}
		verdicts = append(verdicts, p.stdout[i+8:i+11])
	}
	if code := <-served; code != 0 {
		t.Fatalf("serve exit %d, stderr %s", code, serveErr.String())
	}
	log := <-logc
	v := verdicts[0] + verdicts[1]
	if v != "WONLST" && v != "LSTWON" && v != "DRWDRW" {
		t.Fatalf("clients told %v\nlog:\n%s", verdicts, log)
	}
	if !strings.Contains(log, "match 1: ") || !strings.Contains(log, "final board") {
		t.Errorf("match log:\n%s", log)
	}
}

// Usage errors exit 2; a server that is not there exits 1 with a message.
func TestGeisterPlayServeErrors(t *testing.T) {
	ctx := context.Background()
	gone := refusingAddr(t)
	for _, tc := range []struct {
		name string
		run  func(context.Context, []string, io.Reader, io.Writer, io.Writer) int
		args []string
		code int
		msg  string
	}{
		{"play without server", runGeisterPlay, nil, 2, "--server"},
		{"play bad red", runGeisterPlay, []string{"--server", gone, "--red", "ABCA"}, 2, "--red"},
		{"play no server there", runGeisterPlay, []string{"--server", gone, "--tables", testenv.Testdata(t, "geister")}, 1, "refused"},
		{"serve bad setup", runGeisterServe, []string{"--listen", "127.0.0.1:0", "--setup", "xx"}, 2, "--setup"},
		{"serve bad listen", runGeisterServe, []string{"--listen", "nonsense"}, 2, "--listen"},
		{"serve stray argument", runGeisterServe, []string{"extra"}, 2, "bad arguments"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := tc.run(ctx, tc.args, nil, &out, &errb)
			if code != tc.code || !strings.Contains(errb.String(), tc.msg) {
				t.Fatalf("exit %d, stderr %q; want %d mentioning %q", code, errb.String(), tc.code, tc.msg)
			}
		})
	}
}

// An interrupted server (its context ends) stops waiting and exits 0.
func TestGeisterServeInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	var errb bytes.Buffer
	go func() {
		code := runGeisterServe(ctx, []string{"--listen", "127.0.0.1:0", "--listen2", "127.0.0.1:0"}, nil, pw, &errb)
		pw.Close()
		done <- code
	}()
	br := bufio.NewReader(pr)
	line, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "first player: ") {
		t.Fatalf("serve printed %q, %v", line, err)
	}
	go io.Copy(io.Discard, br) // the rest of the log
	// One client connects and is asked for its setup; then the server is
	// stopped.
	c, err := net.Dial("tcp", strings.TrimSpace(strings.TrimPrefix(line, "first player: ")))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if greeting, err := bufio.NewReader(c).ReadString('\n'); err != nil || greeting != "SET?\r\n" {
		t.Fatalf("client got %q, %v", greeting, err)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d, stderr %s", code, errb.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop")
	}
}

// refusingAddr is a loopback address where no server is, for the test's
// life: its port is bound but never listened on, so a connection is refused
// and no other process can bind the port (a closed listener's port could be
// taken, and then a stranger would answer).
func refusingAddr(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	// No SO_REUSEADDR: sharing the port needs it on every socket bound there.
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*syscall.SockaddrInet4).Port))
	if l, err := net.Listen("tcp", addr); err == nil {
		l.Close()
		t.Fatalf("%s could still be listened on", addr)
	}
	return addr
}
