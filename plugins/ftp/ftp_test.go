package ftp_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
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
