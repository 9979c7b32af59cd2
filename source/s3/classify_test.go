package s3_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	nethttptest "net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/s3"
)

// fakeS3 answers HEAD for any key as a 100-byte object and every GET with
// the given handler, so the tests can play the failures S3 documents
// (https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html).
func fakeS3(t *testing.T, get http.HandlerFunc) *s3.Source {
	t.Helper()
	srv := nethttptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			w.Header().Set("Content-Length", "100")
			return
		}
		get(w, r)
	}))
	t.Cleanup(srv.Close)
	src, err := s3.New(context.Background(), s3.Config{
		Bucket: "b", Endpoint: srv.URL, Region: "us-east-1", PathStyle: true,
		Credentials: s3.StaticCredentials("k", "s"), OpenRead: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func s3Error(status int, code string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(status)
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>m</Message><RequestId>r</RequestId></Error>`, code)
	}
}

// TestErrorMapping: S3 error codes and statuses map to the kinds the
// package documentation promises.
func TestErrorMapping(t *testing.T) {
	cases := []struct {
		get  http.HandlerFunc
		what string
		want error
	}{
		{s3Error(404, "NoSuchKey"), "NoSuchKey", source.ErrNotFound},
		{s3Error(404, "NoSuchBucket"), "NoSuchBucket", source.ErrPermanent},
		{s3Error(403, "AccessDenied"), "AccessDenied", source.ErrPermanent},
		{s3Error(403, "SignatureDoesNotMatch"), "SignatureDoesNotMatch", source.ErrPermanent},
		{s3Error(503, "SlowDown"), "SlowDown", source.ErrTransient},
		{s3Error(500, "InternalError"), "InternalError", source.ErrTransient},
		{s3Error(503, "ServiceUnavailable"), "ServiceUnavailable", source.ErrTransient},
		{s3Error(400, "RequestTimeout"), "RequestTimeout", source.ErrTransient},
		{s3Error(400, "InvalidArgument"), "InvalidArgument", source.ErrPermanent},
		{func(w http.ResponseWriter, r *http.Request) {
			w.Write(make([]byte, 100)) // 200 with the whole object: Range ignored
		}, "Range ignored", source.ErrPermanent},
		{func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Range", "bytes 0-9/100")
			w.WriteHeader(http.StatusPartialContent)
			w.Write(make([]byte, 10))
		}, "another range", source.ErrPermanent},
		{func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Range", "bytes 10-29/100")
			w.Header().Set("Content-Length", "20")
			w.WriteHeader(http.StatusPartialContent)
			w.Write(make([]byte, 5)) // then the connection closes
		}, "truncated body", source.ErrTransient},
	}
	for _, c := range cases {
		t.Run(c.what, func(t *testing.T) {
			src := fakeS3(t, c.get)
			obj, err := src.Open(context.Background(), "k")
			if err != nil {
				t.Fatal(err)
			}
			n, err := obj.ReadAt(context.Background(), make([]byte, 20), 10, source.HintData)
			if !errors.Is(err, c.want) || n != 0 {
				t.Errorf("n=%d err=%v, want 0 and %v", n, err, c.want)
			}
			if c.what == "truncated body" && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("err = %v, want io.ErrUnexpectedEOF inside", err)
			}
		})
	}
}

// TestNoSDKRetries: a 503 reaches the caller after exactly one request, so
// the retry wrapper is the only place that retries.
func TestNoSDKRetries(t *testing.T) {
	var gets atomic.Int64
	src := fakeS3(t, func(w http.ResponseWriter, r *http.Request) {
		gets.Add(1)
		s3Error(503, "SlowDown")(w, r)
	})
	obj, err := src.Open(context.Background(), "k")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := obj.ReadAt(context.Background(), make([]byte, 4), 0, source.HintData); !errors.Is(err, source.ErrTransient) {
		t.Fatalf("err = %v", err)
	}
	if n := gets.Load(); n != 1 {
		t.Errorf("the SDK sent %d GETs for one read, want 1", n)
	}
}

// TestOpenErrorMapping: Open's own GetObject maps S3's errors as a read
// does, checks the range it was sent, and needs no HeadObject.
func TestOpenErrorMapping(t *testing.T) {
	cases := []struct {
		get  http.HandlerFunc
		what string
		want error
	}{
		{s3Error(404, "NoSuchKey"), "NoSuchKey", source.ErrNotFound},
		{s3Error(403, "AccessDenied"), "AccessDenied", source.ErrPermanent},
		{s3Error(503, "SlowDown"), "SlowDown", source.ErrTransient},
		{func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Range", "bytes 5-9/100")
			w.WriteHeader(http.StatusPartialContent)
			w.Write(make([]byte, 5))
		}, "another range", source.ErrPermanent},
		{func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Range", "bytes 0-99/100")
			w.Header().Set("Content-Length", "100")
			w.WriteHeader(http.StatusPartialContent)
			w.Write(make([]byte, 5))
		}, "truncated body", source.ErrTransient},
		{func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Range", "bytes 0-99/100")
			w.Header().Set("ETag", `"v1"`)
			w.WriteHeader(http.StatusPartialContent)
			w.Write([]byte(strings.Repeat("x", 100)))
		}, "whole object", nil},
	}
	for _, c := range cases {
		t.Run(c.what, func(t *testing.T) {
			var heads atomic.Int64
			srv := nethttptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodHead {
					heads.Add(1) // HeadBucket after a 404 is allowed
					return
				}
				c.get(w, r)
			}))
			t.Cleanup(srv.Close)
			src, err := s3.New(context.Background(), s3.Config{
				Bucket: "b", Endpoint: srv.URL, Region: "us-east-1", PathStyle: true,
				Credentials: s3.StaticCredentials("k", "s"),
			})
			if err != nil {
				t.Fatal(err)
			}
			obj, err := src.Open(context.Background(), "k")
			if c.want != nil {
				if !errors.Is(err, c.want) {
					t.Errorf("err = %v, want %v", err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 10)
			if n, err := obj.ReadAt(context.Background(), buf, 90, source.HintData); err != nil || n != 10 || string(buf) != strings.Repeat("x", 10) {
				t.Errorf("ReadAt: %q, %v", buf[:n], err)
			}
			if obj.Size() != 100 || source.VersionOf(obj) != `"v1"` || heads.Load() != 0 {
				t.Errorf("size %d, version %q, %d HEADs; want 100, \"v1\", 0", obj.Size(), source.VersionOf(obj), heads.Load())
			}
		})
	}
}
