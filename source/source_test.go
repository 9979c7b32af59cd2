package source_test

import (
	"context"
	"errors"
	"io"
	"net/url"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tbfs/tbfs/source"
)

// TestCheckName: rows follow the rules in CheckName's documentation.
func TestCheckName(t *testing.T) {
	cases := []struct {
		name string
		ok   bool
	}{
		{"a", true},
		{"a/b/c.rtbw", true},
		{"with space", true},
		{"é/ü", true},
		{"...", true}, // three dots is an ordinary name
		{"a..b", true},
		{"", false},
		{".", false},
		{"..", false},
		{"a/..", false},
		{"../a", false},
		{"a/./b", false},
		{"/a", false},
		{"a/", false},
		{"a//b", false},
		{"a\x00b", false},
		{"a\nb", false},
		{"a\x7fb", false},
		{"a\\b", false},
		{"\xff", false},
	}
	for _, c := range cases {
		err := source.CheckName(c.name)
		if c.ok != (err == nil) {
			t.Errorf("CheckName(%q) = %v, want ok=%v", c.name, err, c.ok)
		}
		if err != nil && !errors.Is(err, source.ErrInvalid) {
			t.Errorf("CheckName(%q) = %v, want ErrInvalid", c.name, err)
		}
	}
}

func TestCheckPrefix(t *testing.T) {
	for _, c := range []struct {
		prefix string
		ok     bool
	}{
		{"", true}, {"a", true}, {"a/", true}, {"a/b", true}, {"a/b/", true},
		{"/", false}, {"/a", false}, {"a//", false}, {"../", false}, {"a/../", false}, {"a\x00", false},
	} {
		if err := source.CheckPrefix(c.prefix); c.ok != (err == nil) {
			t.Errorf("CheckPrefix(%q) = %v, want ok=%v", c.prefix, err, c.ok)
		}
	}
}

func TestCheckRange(t *testing.T) {
	for _, c := range []struct {
		off  int64
		n    int
		size int64
		ok   bool
	}{
		{0, 0, 0, true}, {0, 10, 0, true}, {5, 10, 10, true}, {10, 1, 10, true},
		{11, 0, 10, false}, {-1, 1, 10, false},
	} {
		if err := source.CheckRange(c.off, c.n, c.size); c.ok != (err == nil) {
			t.Errorf("CheckRange(%d, %d, %d) = %v, want ok=%v", c.off, c.n, c.size, err, c.ok)
		}
	}
}

func TestParseURL(t *testing.T) {
	for _, c := range []struct {
		in, scheme, host, path string
		bad                    bool
	}{
		{in: "tables", scheme: "file", path: "tables"},
		{in: "/srv/tables", scheme: "file", path: "/srv/tables"},
		{in: "./a:b", scheme: "file", path: "./a:b"},
		{in: "file:///srv/t", scheme: "file", path: "/srv/t"},
		{in: "S3://Bucket/p", scheme: "s3", host: "Bucket", path: "/p"},
		{in: "https://h:8080/x", scheme: "https", host: "h:8080", path: "/x"},
		{in: "", bad: true},
		{in: "a\x00b", bad: true},
		{in: "://x", bad: true},
		{in: "http://h/%zz", bad: true},
	} {
		u, err := source.ParseURL(c.in)
		if c.bad {
			if !errors.Is(err, source.ErrInvalid) {
				t.Errorf("ParseURL(%q): err = %v, want ErrInvalid", c.in, err)
			}
			continue
		}
		if err != nil || u.Scheme != c.scheme || u.Host != c.host || u.Path != c.path {
			t.Errorf("ParseURL(%q) = %v, %v; want %s %s %s", c.in, u, err, c.scheme, c.host, c.path)
		}
	}
}

func TestOpenUnknownScheme(t *testing.T) {
	source.Register("tbfs-test", func(ctx context.Context, u *url.URL) (source.Source, error) {
		return nil, errors.New("not used")
	})
	_, err := source.Open(context.Background(), "gopher://x/y")
	if !errors.Is(err, source.ErrInvalid) || !strings.Contains(err.Error(), "tbfs-test") ||
		!strings.Contains(err.Error(), `"gopher"`) {
		t.Errorf("err = %v, want ErrInvalid naming the scheme and listing the known ones", err)
	}
}

// TestRedact: no credential of a source URL survives redaction, in any of the
// forms a URL can carry one (FTP userinfo, presigned S3 query, tokens, an s3
// endpoint with userinfo, a URL that does not parse), while what locates the
// source (scheme, host, path, harmless parameters) is kept. The arbiter is
// the property itself: the secret's text is absent, the kept parts present.
func TestRedact(t *testing.T) {
	const secret = "PASSWORD"
	for _, c := range []struct {
		in   string
		keep []string
	}{
		{"ftp://tbfs:PASSWORD@127.0.0.1:1/", []string{"ftp://", "127.0.0.1:1/"}},
		{"https://PASSWORD@h/x", []string{"https://", "h/x"}},
		{"s3://b/p?region=x&secret_key=PASSWORD", []string{"s3://b/p", "region=x"}},
		{"http://h/x?X-Amz-Signature=PASSWORD&X-Amz-Credential=PASSWORD&X-Amz-Security-Token=PASSWORD&X-Amz-Date=1", []string{"http://h/x", "X-Amz-Date=1"}},
		{"https://h/t?sig=PASSWORD&sv=2020&access_key=PASSWORD&token=PASSWORD&password=PASSWORD&apiKey=PASSWORD", []string{"https://h/t", "sv=2020"}},
		{"s3://b/p?endpoint=http://k:PASSWORD@127.0.0.1:9&path_style=true", []string{"s3://b/p", "127.0.0.1", "path_style=true"}},
		{"s3://b/p?endpoint=http%3A%2F%2Fk%3APASSWORD%40127.0.0.1%3A9", []string{"s3://b/p", "127.0.0.1"}},
		{"http://u:PASSWORD@[::1/x?token=PASSWORD", []string{"http://"}},
		{"http://h/x#token=PASSWORD", []string{"http://h/x"}},
	} {
		got := source.RedactURL(c.in)
		if strings.Contains(got, secret) {
			t.Errorf("RedactURL(%q) = %q still holds the secret", c.in, got)
		}
		if again := source.RedactURL(got); again != got {
			t.Errorf("RedactURL(%q) = %q, but redacting that again gives %q", c.in, got, again)
		}
		for _, k := range c.keep {
			if !strings.Contains(got, k) {
				t.Errorf("RedactURL(%q) = %q lost %q", c.in, got, k)
			}
		}
		if u, err := url.Parse(c.in); err == nil {
			if got := source.Redact(u); strings.Contains(got, secret) {
				t.Errorf("Redact(%q) = %q still holds the secret", c.in, got)
			}
		}
		text := "Get \"" + c.in + "\": dial tcp: refused"
		if got := source.RedactText(text); strings.Contains(got, secret) {
			t.Errorf("RedactText(%q) = %q still holds the secret", text, got)
		}
		// Error values redact their cause's text too.
		e := &source.Error{Op: "open", Name: "x", URL: source.RedactURL(c.in), Err: source.Transient(errors.New(text))}
		if strings.Contains(e.Error(), secret) {
			t.Errorf("Error() = %q still holds the secret", e.Error())
		}
		if _, err := source.Open(context.Background(), c.in); err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("Open(%q) error %q holds the secret", c.in, err)
		}
	}
	for _, plain := range []string{"/tables/chesstb", "tables", "file:///x/y"} {
		if got := source.RedactURL(plain); got != plain {
			t.Errorf("RedactURL(%q) = %q, want a path without credentials unchanged", plain, got)
		}
	}
}

func TestErrorKinds(t *testing.T) {
	cause := io.ErrUnexpectedEOF
	tr := source.Transient(cause)
	if !errors.Is(tr, source.ErrTransient) || !errors.Is(tr, cause) || !source.IsRetryable(tr) || errors.Is(tr, source.ErrPermanent) {
		t.Errorf("Transient(%v) = %v does not match exactly its kind and cause", cause, tr)
	}
	pe := &source.Error{Op: "read", Name: "x", URL: "s3://b", Err: source.Permanent(cause)}
	if !errors.Is(pe, source.ErrPermanent) || source.IsRetryable(pe) || pe.Error() != "read x (s3://b): permanent transport failure: unexpected EOF" {
		t.Errorf("Permanent error %q misbehaves", pe)
	}
}

// FuzzCheckName: CheckName never panics, and every name it accepts is local
// (filepath.IsLocal), already clean, relative and free of NUL, backslash and
// ".." elements — the properties that keep reads inside a root.
func FuzzCheckName(f *testing.F) {
	for _, s := range []string{"a", "a/b", "..", "../x", "/abs", "a//b", "a\x00", "a\\b", "...", "é", "a/./b", ".a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if source.CheckName(name) != nil {
			return
		}
		if !utf8.ValidString(name) || strings.ContainsAny(name, "\x00\\") || strings.HasPrefix(name, "/") {
			t.Fatalf("accepted %q", name)
		}
		if path.Clean(name) != name || !filepath.IsLocal(name) {
			t.Fatalf("accepted %q, which is not clean and local", name)
		}
		for _, e := range strings.Split(name, "/") {
			if e == ".." || e == "." || e == "" {
				t.Fatalf("accepted %q with element %q", name, e)
			}
		}
		if source.CheckPrefix(name) != nil || source.CheckPrefix(name+"/") != nil {
			t.Fatalf("CheckName accepts %q but CheckPrefix does not", name)
		}
	})
}

// FuzzParseURL: ParseURL never panics; what it accepts has a lower-case
// scheme, and text without "://" is a file path kept verbatim.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{"tables", "/abs", "file:///x", "s3://b/p?region=x", "http://h:1/x", "://", "a\x00", "HTTP://X", "s3://"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := source.ParseURL(raw)
		if err != nil {
			if !errors.Is(err, source.ErrInvalid) {
				t.Fatalf("ParseURL(%q) error %v is not ErrInvalid", raw, err)
			}
			return
		}
		if u.Scheme == "" || u.Scheme != strings.ToLower(u.Scheme) {
			t.Fatalf("ParseURL(%q) scheme %q", raw, u.Scheme)
		}
		if !strings.Contains(raw, "://") && (u.Scheme != "file" || u.Path != raw) {
			t.Fatalf("ParseURL(%q) = %v, want the file path itself", raw, u)
		}
		_ = source.Redact(u)
	})
}
