package ftp_test

import (
	"bytes"
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tbfs/tbfs/plugins/ftp"
	"github.com/tbfs/tbfs/plugins/internal/ftptest"
	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/sourcetest"
)

func openURL(t *testing.T, raw string) (source.Source, error) {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return ftp.Open(context.Background(), u)
}

func openURLB(u *url.URL) (source.Source, error) { return ftp.Open(context.Background(), u) }

// TestConformance runs the transport suite against the FTP source in this
// process, talking to a real FTP server on loopback; the arbiter is the
// suite's fixtures.
func TestConformance(t *testing.T) {
	sourcetest.Run(t, func(t *testing.T, dir string) source.Source {
		src, err := openURL(t, ftptest.URL(ftptest.Serve(t, dir)))
		if err != nil {
			t.Fatal(err)
		}
		return src
	})
}

// TestOpenErrors checks that bad URLs and refused logins are reported with
// the right kind, and that the password never appears in the message.
func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	addr := ftptest.Serve(t, dir)
	cases := []struct {
		what string
		url  string
		kind error
	}{
		{"wrong password", "ftp://" + ftptest.User + ":wrong-pw-123@" + addr + "/", source.ErrPermanent},
		{"unknown user", "ftp://nobody:wrong-pw-123@" + addr + "/", source.ErrPermanent},
		{"no host", "ftp:///dir", source.ErrInvalid},
		{"query", "ftp://" + addr + "/?x=1", source.ErrInvalid},
		{"other scheme", "http://" + addr + "/", source.ErrInvalid},
	}
	for _, c := range cases {
		t.Run(c.what, func(t *testing.T) {
			src, err := openURL(t, c.url)
			if err == nil {
				src.Close()
				t.Fatalf("Open(%s) succeeded", c.what)
			}
			if !errors.Is(err, c.kind) {
				t.Errorf("Open: err = %v, want %v", err, c.kind)
			}
			if msg := err.Error(); strings.Contains(msg, "wrong-pw-123") {
				t.Errorf("error message leaks the password: %s", msg)
			}
		})
	}
}

// TestConnectionRefused: nothing listens on the port, which is a transient
// failure (a mirror that is down may come back).
func TestConnectionRefused(t *testing.T) {
	// Port 1 (tcpmux) is never served on the test machine.
	src, err := openURL(t, "ftp://127.0.0.1:1/")
	if err == nil {
		src.Close()
		t.Fatal("Open of a closed port succeeded")
	}
	if !errors.Is(err, source.ErrTransient) {
		t.Errorf("Open of a closed port: err = %v, want ErrTransient", err)
	}
}

// TestConnectionReuse: operations, sequential or concurrent, share at most
// DefaultMaxConns control connections, and a connection the server
// dropped while idle is replaced without the caller seeing an error. The
// arbiter is the server's own count of accepted control connections.
func TestConnectionReuse(t *testing.T) {
	dir := t.TempDir()
	data := []byte(strings.Repeat("0123456789", 5000))
	if err := os.WriteFile(filepath.Join(dir, "f"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	srv := ftptest.Start(t, dir)
	src, err := openURL(t, ftptest.URL(srv.Addr))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	ctx := context.Background()
	read := func(obj source.Object, off int64) error {
		buf := make([]byte, 100)
		n, err := obj.ReadAt(ctx, buf, off, source.HintData)
		if err != nil {
			return err
		}
		if !bytes.Equal(buf[:n], data[off:off+100]) {
			return errors.New("wrong bytes")
		}
		return nil
	}
	for i := range 20 {
		obj, err := src.Open(ctx, "f")
		if err != nil {
			t.Fatal(err)
		}
		if err := read(obj, int64(i*1000)); err != nil {
			t.Fatal(err)
		}
		obj.Close()
	}
	// A read returns before the server has answered the transfer it cut
	// short, so the next may find that connection still busy: reuse shows
	// as a count bounded by the pool, not by the number of operations.
	if n := srv.Conns(); n > ftp.DefaultMaxConns {
		t.Errorf("20 sequential open+read used %d control connections, want at most %d", n, ftp.DefaultMaxConns)
	}

	obj, err := src.Open(ctx, "f")
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for i := range 32 {
		wg.Go(func() { errs <- read(obj, int64(i*500)) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := srv.Conns(); n > ftp.DefaultMaxConns {
		t.Errorf("32 concurrent reads opened %d control connections in all, want at most %d", n, ftp.DefaultMaxConns)
	}

	before := srv.Conns()
	srv.DropConns()
	if err := read(obj, 0); err != nil {
		t.Errorf("read after the server dropped idle connections: %v", err)
	}
	if n := srv.Conns(); n <= before {
		t.Errorf("no new connection after the drop (%d before, %d after)", before, n)
	}
}

// TestFileShrankAfterOpen: the file is cut short on the server after its
// size was read; a read of bytes that no longer exist fails with
// ErrTransient and returns nothing, rather than a short read passed off
// as the end of the object.
func TestFileShrankAfterOpen(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, bytes.Repeat([]byte("x"), 10000), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := openURL(t, ftptest.URL(ftptest.Serve(t, dir)))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	obj, err := src.Open(context.Background(), "f")
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	if err := os.Truncate(p, 5000); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1000)
	n, err := obj.ReadAt(context.Background(), buf, 4500, source.HintData)
	if !errors.Is(err, source.ErrTransient) || n != 0 {
		t.Errorf("read across the new end: n=%d err=%v, want 0, ErrTransient", n, err)
	}
	n, err = obj.ReadAt(context.Background(), buf, 1000, source.HintData)
	if err != nil || n != len(buf) {
		t.Errorf("read inside the remaining part: n=%d err=%v", n, err)
	}
}

// TestCancelDuringTransfer cancels the caller's context once the server
// has sent part of a file and then stopped sending: the read must end with
// context.Canceled instead of waiting on the stalled transfer, and the
// source must serve the next read on another connection.
func TestCancelDuringTransfer(t *testing.T) {
	dir := t.TempDir()
	data := bytes.Repeat([]byte("abcdefgh"), 1<<15)
	if err := os.WriteFile(filepath.Join(dir, "slow"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := ftptest.StartWith(t, dir, ftptest.Options{StallAfter: 1000, OnStall: cancel})
	src, err := openURL(t, ftptest.URL(srv.Addr))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	obj, err := src.Open(context.Background(), "slow")
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	n, err := obj.ReadAt(ctx, make([]byte, len(data)), 0, source.HintData)
	if !errors.Is(err, context.Canceled) || n != 0 {
		t.Fatalf("read cancelled during the transfer: n=%d err=%v, want 0, context.Canceled", n, err)
	}
	buf := make([]byte, 8)
	if n, err := obj.ReadAt(context.Background(), buf, 8, source.HintData); err != nil || !bytes.Equal(buf[:n], data[8:16]) {
		t.Errorf("read after the cancelled one: %q, %v", buf[:n], err)
	}
}
