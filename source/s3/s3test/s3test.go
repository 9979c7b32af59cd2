// Package s3test runs a real S3 server (versitygw with its posix backend) on
// 127.0.0.1 for tests, so any layer can read tables through the S3
// transport:
//
//	srv := s3test.Start(t, root)               // each subfolder of root is a bucket
//	src, err := s3.New(ctx, srv.Config("tables", ""))
//
//	srv, url := s3test.ServeDir(t, dir)        // dir itself as bucket "tbfs"
//	srv.Setenv(t)                              // keys for source.Open(ctx, url)
//
// A URL alone does not carry credentials, so code that opens by URL
// (source.Open, a tbprobe subprocess) needs the server's keys in the
// environment: call srv.Setenv(t) in the test (not in parallel tests), or
// append srv.Env() to a subprocess's environment.
//
// The server is found with testenv.Tool (installed by .ci/run); the test is
// skipped on a machine without it and fails under CI. Each server listens on
// a free loopback port and is killed when the test ends.
package s3test

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/source/s3"
)

// Keys and region every test server uses. They protect nothing: the server
// listens on loopback only and lives as long as one test.
const (
	AccessKey = "tbfs-test-access"
	SecretKey = "tbfs-test-secret-key"
	Region    = "us-east-1"
)

// Server is a running S3 server.
type Server struct {
	// Endpoint is the server's base URL, http://127.0.0.1:PORT.
	Endpoint string
	// Root is the directory whose subfolders are the buckets.
	Root string
}

// Start serves root (each subfolder a bucket, files below it objects) and
// returns once the server accepts connections. Files may be added to root
// before or after Start; the server reads the file system directly.
func Start(t testing.TB, root string) *Server {
	t.Helper()
	return start(t, root, false)
}

// ServeDir serves dir as the bucket "tbfs" (through a symbolic link, so dir
// is not copied) and returns the s3:// URL of that bucket with the endpoint,
// region and path style in its query. Pair it with Setenv or Env for the
// keys.
func ServeDir(t testing.TB, dir string) (*Server, string) {
	t.Helper()
	root := t.TempDir()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(abs, filepath.Join(root, "tbfs")); err != nil {
		t.Fatalf("s3test: %v", err)
	}
	srv := start(t, root, true)
	return srv, srv.URL("tbfs", "")
}

// URL is the s3:// URL of bucket/prefix on this server.
func (s *Server) URL(bucket, prefix string) string {
	q := url.Values{"endpoint": {s.Endpoint}, "region": {Region}, "path_style": {"true"}}
	return "s3://" + bucket + "/" + prefix + "?" + q.Encode()
}

// Config is the s3.Config for bucket/prefix on this server, keys included.
func (s *Server) Config(bucket, prefix string) s3.Config {
	return s3.Config{
		Bucket: bucket, Prefix: prefix, Endpoint: s.Endpoint, Region: Region, PathStyle: true,
		Credentials: s3.StaticCredentials(AccessKey, SecretKey),
	}
}

// Env is the environment a process needs to reach this server through the
// standard AWS configuration: keys, region and endpoint. Shared config files
// are pointed at /dev/null so a developer's own profile cannot interfere.
func (s *Server) Env() []string {
	return []string{
		"AWS_ACCESS_KEY_ID=" + AccessKey,
		"AWS_SECRET_ACCESS_KEY=" + SecretKey,
		"AWS_SESSION_TOKEN=",
		"AWS_REGION=" + Region,
		"AWS_ENDPOINT_URL_S3=" + s.Endpoint,
		"AWS_PROFILE=",
		"AWS_CONFIG_FILE=" + os.DevNull,
		"AWS_SHARED_CREDENTIALS_FILE=" + os.DevNull,
		"AWS_EC2_METADATA_DISABLED=true",
	}
}

// Setenv sets Env in the test's environment (restored when it ends).
func (s *Server) Setenv(t testing.TB) {
	t.Helper()
	for _, kv := range s.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
}

// lockedBuffer collects the server's output for failure messages.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() > 64<<10 {
		return len(p), nil
	}
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func start(t testing.TB, root string, bucketLinks bool) *Server {
	t.Helper()
	bin := testenv.Tool(t, "versitygw")
	var lastErr error
	// A free port found by listening can be taken by someone else before
	// the server binds it; then versitygw exits and the next try picks
	// another port.
	for range 3 {
		addr, err := freeAddr()
		if err != nil {
			t.Fatalf("s3test: %v", err)
		}
		srv, err := try(t, bin, root, bucketLinks, addr)
		if err == nil {
			return srv
		}
		lastErr = err
	}
	t.Fatalf("s3test: %v", lastErr)
	return nil
}

// freeAddr is a loopback address whose port was free a moment ago.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// try starts versitygw on addr and returns once it answers there.
func try(t testing.TB, bin, root string, bucketLinks bool, addr string) (*Server, error) {
	// Until versitygw binds the port, another process can, and would answer
	// a plain dial. A health path that only this server was told marks it.
	health := "/s3test-" + rand.Text()
	args := []string{"--port", addr, "--region", Region, "--quiet", "--keep-alive", "--health", health, "posix"}
	if bucketLinks {
		args = append(args, "--bucketlinks")
	}
	args = append(args, root)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY="+AccessKey, "ROOT_SECRET_KEY="+SecretKey)
	out := new(lockedBuffer)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		cmd.Process.Kill()
		<-exited
	}
	endpoint := "http://" + addr
	// Poll until our server answers, it exits, or 20s pass.
	deadline := time.Now().Add(20 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !ours(endpoint, health) {
		select {
		case werr := <-exited:
			return nil, fmt.Errorf("versitygw exited before serving (%v):\n%s", werr, out)
		case <-tick.C:
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("versitygw did not answer on %s within 20s:\n%s", addr, out)
		}
	}
	t.Cleanup(stop)
	return &Server{Endpoint: endpoint, Root: root}, nil
}

// ours reports whether the server at endpoint is the one started with the
// health path: it answers that path with 200 and a path no server was told
// without. A server that answers every path alike (a test's catch-all
// handler, another versitygw) fails one of the two.
func ours(endpoint, health string) bool {
	return status(endpoint+health) == http.StatusOK &&
		status(endpoint+"/s3test-"+rand.Text()) != http.StatusOK
}

// status is the HTTP status of a GET of u, or 0 when there is no answer.
func status(u string) int {
	client := http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get(u)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// Put stores data as bucket/key through the server's S3 API, the way an
// upload replaces an object: the server gives it a new ETag.
func (s *Server) Put(ctx context.Context, bucket, key string, data []byte) error {
	client := awss3.New(awss3.Options{
		BaseEndpoint: aws.String(s.Endpoint),
		Region:       Region,
		UsePathStyle: true,
		Credentials:  s3.StaticCredentials(AccessKey, SecretKey),
	})
	_, err := client.PutObject(ctx, &awss3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(data)})
	if err != nil {
		return fmt.Errorf("s3test: put %s/%s: %w", bucket, key, err)
	}
	return nil
}
