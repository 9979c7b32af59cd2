package s3_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/s3"
	"github.com/tbfs/tbfs/source/s3/s3test"
	"github.com/tbfs/tbfs/source/sourcetest"
)

// TestConformance runs the suite against versitygw serving the fixtures as
// a bucket, opened by URL with the keys in the environment, the way a front
// end opens it.
func TestConformance(t *testing.T) {
	sourcetest.Run(t, func(t *testing.T, dir string) source.Source {
		srv, u := s3test.ServeDir(t, dir)
		srv.Setenv(t)
		src, err := source.Open(context.Background(), u)
		if err != nil {
			t.Fatal(err)
		}
		return src
	})
}

// TestConformancePrefix serves the fixtures below a key prefix.
func TestConformancePrefix(t *testing.T) {
	sourcetest.Run(t, func(t *testing.T, dir string) source.Source {
		root := t.TempDir()
		if err := os.MkdirAll(filepath.Join(root, "bkt", "tables"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(dir, filepath.Join(root, "bkt", "tables", "v1")); err != nil {
			t.Fatal(err)
		}
		// A neighbour whose key shares the prefix's first letters must not
		// show up in the prefix's listing.
		if err := os.WriteFile(filepath.Join(root, "bkt", "tables", "v1x"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		srv := s3test.Start(t, root)
		src, err := s3.New(context.Background(), srv.Config("bkt", "tables/v1"))
		if err != nil {
			t.Fatal(err)
		}
		return src
	})
}

// TestPagination: more than 1000 objects need several ListObjectsV2 pages;
// the arbiter is the set of files the test wrote.
func TestPagination(t *testing.T) {
	root := t.TempDir()
	const n = 1234
	dir := filepath.Join(root, "many", "p")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%05d", i)), []byte(fmt.Sprint(i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := s3test.Start(t, root)
	cfg := srv.Config("many", "")
	counter := &countingClient{inner: http.DefaultClient}
	cfg.HTTPClient = counter
	src, err := s3.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	got, err := src.List(context.Background(), "p/")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("listed %d objects, want %d", len(got), n)
	}
	if pages := counter.n.Load(); pages < 2 {
		t.Errorf("listing %d objects took %d requests; S3 pages hold at most 1000 keys", n, pages)
	}
	for i, e := range got {
		if want := fmt.Sprintf("p/%05d", i); e.Name != want || e.Size != int64(len(fmt.Sprint(i))) {
			t.Fatalf("entry %d = %+v, want %s of %d bytes", i, e, want, len(fmt.Sprint(i)))
		}
	}
	// p/01230..p/01233 exist (4 names) since n = 1234.
	got, err = src.List(context.Background(), "p/0123")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Errorf("List(p/0123) gave %d entries, want 4 (p/01230..p/01233)", len(got))
	}
}

// countingClient counts the requests it sends.
type countingClient struct {
	inner *http.Client
	n     atomic.Int64
}

func (c *countingClient) Do(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.inner.Do(r)
}

// TestFailures: missing bucket, wrong keys, an empty prefix and a missing
// key, each with the error kind the S3 semantics call for.
func TestFailures(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "bkt", "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "bkt", "d", "f"), []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := s3test.Start(t, root)
	ctx := context.Background()

	t.Run("missing bucket", func(t *testing.T) {
		src, err := s3.New(ctx, srv.Config("nosuchbucket", ""))
		if err != nil {
			t.Fatal(err)
		}
		_, err = src.Open(ctx, "d/f")
		if !errors.Is(err, source.ErrPermanent) || errors.Is(err, source.ErrNotFound) {
			t.Errorf("Open in a missing bucket: err = %v, want ErrPermanent only", err)
		}
		if !strings.Contains(err.Error(), "nosuchbucket") {
			t.Errorf("error %q does not name the bucket", err)
		}
		_, err = src.List(ctx, "")
		if !errors.Is(err, source.ErrPermanent) {
			t.Errorf("List in a missing bucket: err = %v, want ErrPermanent", err)
		}
	})
	t.Run("wrong credentials", func(t *testing.T) {
		cfg := srv.Config("bkt", "")
		cfg.Credentials = s3.StaticCredentials(s3test.AccessKey, "not-the-secret")
		src, err := s3.New(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		_, err = src.Open(ctx, "d/f")
		if !errors.Is(err, source.ErrPermanent) {
			t.Errorf("Open with a wrong secret: err = %v, want ErrPermanent", err)
		}
		if strings.Contains(err.Error(), "not-the-secret") {
			t.Errorf("error %q shows the secret", err)
		}
		_, err = src.List(ctx, "")
		if !errors.Is(err, source.ErrPermanent) {
			t.Errorf("List with a wrong secret: err = %v, want ErrPermanent", err)
		}
	})
	t.Run("anonymous on a private bucket", func(t *testing.T) {
		src, err := source.Open(ctx, srv.URL("bkt", "")+"&anonymous=true")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := src.Open(ctx, "d/f"); !errors.Is(err, source.ErrPermanent) {
			t.Errorf("anonymous Open: err = %v, want ErrPermanent", err)
		}
	})
	t.Run("empty prefix", func(t *testing.T) {
		src, err := s3.New(ctx, srv.Config("bkt", "nothing/here"))
		if err != nil {
			t.Fatal(err)
		}
		got, err := src.List(ctx, "")
		if err != nil || len(got) != 0 {
			t.Errorf("List under an empty prefix = %v, %v; want no entries and no error", got, err)
		}
		if _, err := src.Open(ctx, "f"); !errors.Is(err, source.ErrNotFound) {
			t.Errorf("Open under an empty prefix: err = %v, want ErrNotFound", err)
		}
	})
	t.Run("server gone", func(t *testing.T) {
		cfg := srv.Config("bkt", "")
		cfg.Endpoint = "http://127.0.0.1:1"
		src, err := s3.New(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := src.Open(ctx, "d/f"); !errors.Is(err, source.ErrTransient) {
			t.Errorf("Open with nothing listening: err = %v, want ErrTransient", err)
		}
	})
}

// TestEnvEndpoint: with no endpoint in the URL, AWS_ENDPOINT_URL_S3 from the
// standard configuration is used.
func TestEnvEndpoint(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x"), []byte("xyz"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv, _ := s3test.ServeDir(t, dir)
	srv.Setenv(t)
	src, err := source.Open(context.Background(), "s3://tbfs?path_style=true")
	if err != nil {
		t.Fatal(err)
	}
	obj, err := src.Open(context.Background(), "x")
	if err != nil {
		t.Fatal(err)
	}
	if obj.Size() != 3 {
		t.Errorf("size %d, want 3", obj.Size())
	}
}

// TestParseURL: the URL grammar of the package documentation.
func TestParseURL(t *testing.T) {
	cases := []struct {
		in   string
		want s3.Config
		bad  bool
	}{
		{in: "s3://b", want: s3.Config{Bucket: "b"}},
		{in: "s3://b/", want: s3.Config{Bucket: "b"}},
		{in: "s3://b/p/q/", want: s3.Config{Bucket: "b", Prefix: "p/q"}},
		{in: "s3://b/p?region=eu-west-1&path_style=true&anonymous=1&endpoint=http://127.0.0.1:9000",
			want: s3.Config{Bucket: "b", Prefix: "p", Region: "eu-west-1", PathStyle: true, Anonymous: true, Endpoint: "http://127.0.0.1:9000"}},
		{in: "s3://b?profile=prod&timeout=5s", want: s3.Config{Bucket: "b", Profile: "prod", Timeout: 5e9}},
		{in: "s3:///p", bad: true},
		{in: "s3://key:secret@b/p", bad: true},
		{in: "s3://b/../x", bad: true},
		{in: "s3://b/a//b", bad: true},
		{in: "s3://b?path_style=maybe", bad: true},
		{in: "s3://b?timeout=-1s", bad: true},
		{in: "s3://b?endpoint=ftp://x", bad: true},
		{in: "s3://b?endpiont=http://x", bad: true},
		{in: "http://b", bad: true},
	}
	for _, c := range cases {
		u, err := url.Parse(c.in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s3.ParseURL(u)
		if c.bad {
			if !errors.Is(err, source.ErrInvalid) {
				t.Errorf("ParseURL(%q): err = %v, want ErrInvalid", c.in, err)
			}
			continue
		}
		if err != nil || fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("ParseURL(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
}

// FuzzParseURL: s3.ParseURL never panics, and what it accepts names a
// bucket and a prefix that is empty or a valid object name.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{"s3://b", "s3://b/p/q?region=r&path_style=true", "s3://b/../x", "s3://u:p@b", "s3://b?timeout=1s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := source.ParseURL(raw)
		if err != nil {
			return
		}
		cfg, err := s3.ParseURL(u)
		if err != nil {
			if !errors.Is(err, source.ErrInvalid) {
				t.Fatalf("ParseURL(%q) error %v is not ErrInvalid", raw, err)
			}
			return
		}
		if cfg.Bucket == "" || cfg.Prefix != "" && source.CheckName(cfg.Prefix) != nil {
			t.Fatalf("ParseURL(%q) accepted %+v", raw, cfg)
		}
	})
}

// TestProfile: keys from a named profile of the shared credentials file
// (the standard AWS configuration) reach the server; a profile with wrong
// keys is refused.
func TestProfile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x"), []byte("xyz"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv, _ := s3test.ServeDir(t, dir)
	creds := filepath.Join(t.TempDir(), "credentials")
	text := fmt.Sprintf("[good]\naws_access_key_id = %s\naws_secret_access_key = %s\n\n[bad]\naws_access_key_id = %s\naws_secret_access_key = wrong\n",
		s3test.AccessKey, s3test.SecretKey, s3test.AccessKey)
	if err := os.WriteFile(creds, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, kv := range [][2]string{
		{"AWS_ACCESS_KEY_ID", ""}, {"AWS_SECRET_ACCESS_KEY", ""}, {"AWS_SESSION_TOKEN", ""},
		{"AWS_PROFILE", ""}, {"AWS_CONFIG_FILE", os.DevNull}, {"AWS_SHARED_CREDENTIALS_FILE", creds},
		{"AWS_EC2_METADATA_DISABLED", "true"},
	} {
		t.Setenv(kv[0], kv[1])
	}
	for _, c := range []struct {
		profile string
		want    error
	}{{"good", nil}, {"bad", source.ErrPermanent}} {
		src, err := source.Open(context.Background(), srv.URL("tbfs", "")+"&profile="+c.profile)
		if err != nil {
			t.Fatal(err)
		}
		_, err = src.Open(context.Background(), "x")
		if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("profile %s: err = %v, want %v", c.profile, err, c.want)
		}
	}
}

// TestReplacedObject: an object overwritten after Open, with another of the
// same size, is not read as if it were the old one (mixing two versions of
// a table gives wrong values): the read fails with ErrChanged. The arbiter
// is S3's conditional GET (If-Match, 412) and the ETag the server reports.
func TestReplacedObject(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "bkt"), 0o755); err != nil {
		t.Fatal(err)
	}
	srv := s3test.Start(t, root)
	ctx := context.Background()
	old := []byte(strings.Repeat("a", 4096))
	if err := srv.Put(ctx, "bkt", "t.bin", old); err != nil {
		t.Fatal(err)
	}
	// Both ways of opening: HeadObject, and a GetObject of the first 64
	// bytes, which the reads below lie past.
	for _, openRead := range []int{-1, 64} {
		t.Run(fmt.Sprintf("open=%d", openRead), func(t *testing.T) {
			if err := srv.Put(ctx, "bkt", "t.bin", old); err != nil {
				t.Fatal(err)
			}
			cfg := srv.Config("bkt", "")
			cfg.OpenRead = openRead
			replacedObject(t, ctx, srv, cfg, old)
		})
	}
}

func replacedObject(t *testing.T, ctx context.Context, srv *s3test.Server, cfg s3.Config, old []byte) {
	src, err := s3.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	obj, err := src.Open(ctx, "t.bin")
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	buf := make([]byte, 16)
	if _, err := obj.ReadAt(ctx, buf, 100, source.HintData); err != nil || string(buf) != string(old[:16]) {
		t.Fatalf("read of the version opened: %q, %v", buf, err)
	}
	if err := srv.Put(ctx, "bkt", "t.bin", []byte(strings.Repeat("b", 4096))); err != nil {
		t.Fatal(err)
	}
	n, err := obj.ReadAt(ctx, buf, 200, source.HintData)
	if !errors.Is(err, source.ErrChanged) || !errors.Is(err, source.ErrPermanent) || n != 0 {
		t.Fatalf("read after the object was replaced: n=%d err=%v, want 0 bytes and ErrChanged (permanent)", n, err)
	}
	fresh, err := src.Open(ctx, "t.bin")
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if _, err := fresh.ReadAt(ctx, buf, 200, source.HintData); err != nil || string(buf) != strings.Repeat("b", 16) {
		t.Fatalf("read of the object opened again: %q, %v", buf, err)
	}
}
