// Package s3 serves the objects of an S3 bucket (AWS or any S3-compatible
// server) as a source. It registers itself for the "s3" scheme:
//
//	s3://bucket/prefix?endpoint=http://127.0.0.1:7070&region=us-east-1&path_style=true&anonymous=true
//
// Object names are keys below prefix (treated as a folder: "prefix/name").
// The query is optional; without it the standard AWS configuration applies:
// AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL, AWS_REGION, AWS_PROFILE, the
// shared config and credentials files and the rest of the credential chain.
// Query parameters:
//
//	endpoint    base URL of an S3-compatible server
//	region      signing region (default: the AWS configuration, else us-east-1)
//	path_style  true addresses buckets as a path, as most non-AWS servers need
//	anonymous   true sends unsigned requests, for public buckets
//	profile     the shared-config profile to use
//	timeout     bound on each request, as a Go duration (default 30s)
//
// Unknown parameters are an error, so a misspelt one is not silently
// ignored. Credentials are never put in URLs, errors or logs.
//
// Each read is one ranged GetObject; Open is one ranged GetObject of the
// object's first Config.OpenRead bytes, whose Content-Range gives the size
// and whose ETag the version, and whose body answers the first read (so
// opening a table and reading its header is one round trip, not a HeadObject
// and then a GetObject); HeadObject is asked only for an empty object or an
// answer without a size. List pages through ListObjectsV2. The SDK's own retries are switched off: the retry
// wrapper (source/retry) is the one place that retries, and it sees
// NoSuchKey/404 as source.ErrNotFound, NoSuchBucket and denied access as
// source.ErrPermanent, and 5xx, throttling and connection failures as
// source.ErrTransient.
//
// An object is pinned to the ETag its opening answer gave: every GetObject
// carries it as If-Match and the ETag of every answer is compared with it, so
// reading an object replaced after Open fails with source.ErrChanged instead
// of mixing bytes of two versions of a table.
package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/internal/httprange"
	"github.com/tbfs/tbfs/source/internal/prefix"
)

func init() {
	source.Register("s3", func(ctx context.Context, u *url.URL) (source.Source, error) {
		cfg, err := ParseURL(u)
		if err != nil {
			return nil, err
		}
		return New(ctx, cfg)
	})
}

// Config says which bucket to serve and how to reach it. Empty fields fall
// back to the standard AWS configuration.
type Config struct {
	Bucket    string
	Prefix    string // key prefix, without leading or trailing slash
	Endpoint  string
	Region    string
	PathStyle bool
	Anonymous bool
	Profile   string
	Timeout   time.Duration // per request; zero means 30s

	// Credentials, when non-nil, replaces the credential chain; tests and
	// programs that hold keys themselves use credentials.NewStaticCredentialsProvider.
	Credentials aws.CredentialsProvider

	// HTTPClient, when non-nil, sends the requests (tests count them
	// with it).
	HTTPClient aws.HTTPClient

	// OpenRead is how many bytes from the start of an object Open asks
	// for with the GetObject that tells it the size and version. Zero
	// means DefaultOpenRead; a negative value makes Open send HeadObject
	// and keep no bytes.
	OpenRead int
}

// DefaultOpenRead is the part of an object Open fetches: one block of the
// source cache, which holds the header and block index of most tables.
const DefaultOpenRead = 64 << 10

// ParseURL reads an s3:// URL into a Config.
func ParseURL(u *url.URL) (Config, error) {
	fail := func(err error) (Config, error) {
		return Config{}, &source.Error{Op: "open source", URL: source.Redact(u), Err: err}
	}
	if u.Scheme != "s3" {
		return fail(source.Invalid("scheme %q is not s3", u.Scheme))
	}
	if u.User != nil {
		return fail(source.Invalid("credentials do not belong in the URL; use the AWS configuration"))
	}
	if u.Host == "" {
		return fail(source.Invalid("no bucket: want s3://bucket/prefix"))
	}
	cfg := Config{Bucket: u.Host, Prefix: strings.Trim(u.Path, "/")}
	if cfg.Prefix != "" {
		if err := source.CheckName(cfg.Prefix); err != nil {
			return fail(source.Invalid("bad key prefix: %v", err))
		}
	}
	for k, vs := range u.Query() {
		v := vs[len(vs)-1]
		var err error
		switch k {
		case "endpoint":
			var eu *url.URL
			eu, err = url.Parse(v)
			if err == nil && (eu.Scheme != "http" && eu.Scheme != "https" || eu.Host == "") {
				err = errors.New("want http(s)://host[:port]")
			}
			cfg.Endpoint = v
		case "region":
			cfg.Region = v
		case "path_style":
			cfg.PathStyle, err = strconv.ParseBool(v)
		case "anonymous":
			cfg.Anonymous, err = strconv.ParseBool(v)
		case "profile":
			cfg.Profile = v
		case "timeout":
			cfg.Timeout, err = time.ParseDuration(v)
			if err == nil && cfg.Timeout <= 0 {
				err = errors.New("must be positive")
			}
		default:
			return fail(source.Invalid("unknown parameter %q (known: endpoint, region, path_style, anonymous, profile, timeout)", k))
		}
		if err != nil {
			return fail(source.Invalid("parameter %s=%q: %v", k, v, err))
		}
	}
	return cfg, nil
}

// Source is an S3 bucket, or the part of one below a prefix.
type Source struct {
	client   *s3.Client
	bucket   string
	prefix   string // "" or ending in "/"
	where    string // s3://bucket/prefix, for errors
	timeout  time.Duration
	openRead int
	closed   atomic.Bool
	bucketOK atomic.Bool // the bucket is known to exist (or cannot be checked)

	mu sync.Mutex // serialises the bucket check

	// listing is closed when the List in flight ends; nil when none is.
	// A 404 waits for it rather than asking HeadBucket: a listing that
	// succeeds proves the bucket, in the same round trip.
	listMu  sync.Mutex
	listing chan struct{}
}

var (
	_ source.Source   = (*Source)(nil)
	_ source.Lister   = (*Source)(nil)
	_ source.Prefixed = (*object)(nil)
)

// New makes a client for cfg. It sends no request; the first Open or List
// does.
func New(ctx context.Context, cfg Config) (*Source, error) {
	where := "s3://" + cfg.Bucket + "/" + cfg.Prefix
	fail := func(err error) (*Source, error) {
		return nil, &source.Error{Op: "open source", URL: where, Err: err}
	}
	if cfg.Bucket == "" {
		return fail(source.Invalid("no bucket"))
	}
	opts := []func(*config.LoadOptions) error{
		config.WithRetryer(func() aws.Retryer { return aws.NopRetryer{} }),
	}
	if cfg.Region != "" {
		opts = append(opts, config.WithRegion(cfg.Region))
	}
	if cfg.Profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(cfg.Profile))
	}
	switch {
	case cfg.Anonymous:
		opts = append(opts, config.WithCredentialsProvider(aws.AnonymousCredentials{}))
	case cfg.Credentials != nil:
		opts = append(opts, config.WithCredentialsProvider(cfg.Credentials))
	}
	awscfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		if ctx.Err() != nil {
			return fail(ctx.Err())
		}
		return fail(source.Permanent(fmt.Errorf("AWS configuration: %w", err)))
	}
	if awscfg.Region == "" {
		awscfg.Region = "us-east-1"
	}
	client := s3.NewFromConfig(awscfg, func(o *s3.Options) {
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
		}
		o.UsePathStyle = cfg.PathStyle
		if cfg.HTTPClient != nil {
			o.HTTPClient = cfg.HTTPClient
		}
		o.Retryer = aws.NopRetryer{}
		o.DisableLogOutputChecksumValidationSkipped = true
	})
	s := &Source{client: client, bucket: cfg.Bucket, where: where, timeout: cfg.Timeout, openRead: cfg.OpenRead}
	if s.openRead == 0 {
		s.openRead = DefaultOpenRead
	}
	if cfg.Prefix != "" {
		s.prefix = cfg.Prefix + "/"
	}
	if s.timeout <= 0 {
		s.timeout = 30 * time.Second
	}
	return s, nil
}

// NewWithClient serves bucket/prefix through a client the caller built.
func NewWithClient(client *s3.Client, bucket, prefix string) *Source {
	prefix = strings.Trim(prefix, "/")
	s := &Source{client: client, bucket: bucket, where: "s3://" + bucket + "/" + prefix, timeout: 30 * time.Second, openRead: DefaultOpenRead}
	if prefix != "" {
		s.prefix = prefix + "/"
	}
	return s
}

// String is the s3:// location, without endpoint or credentials.
func (s *Source) String() string { return s.where }

// classify maps an SDK error to the source error kinds. The caller's own
// cancellation is passed through unclassified.
func classify(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	status := 0
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		status = re.HTTPStatusCode()
	}
	code := ""
	var ae smithy.APIError
	if errors.As(err, &ae) {
		code = ae.ErrorCode()
	}
	switch code {
	case "NoSuchKey", "NotFound":
		return fmt.Errorf("%w: %w", source.ErrNotFound, err)
	case "NoSuchBucket", "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "AllAccessDisabled":
		return source.Permanent(err)
	case "SlowDown", "Throttling", "ThrottlingException", "RequestTimeout", "InternalError",
		"ServiceUnavailable", "RequestLimitExceeded", "TooManyRequestsException":
		return source.Transient(err)
	}
	switch {
	case status == 404:
		return fmt.Errorf("%w: %w", source.ErrNotFound, err)
	case status == 408 || status == 429 || status >= 500:
		return source.Transient(err)
	case status != 0 || code != "":
		return source.Permanent(err)
	}
	// No answer from the server at all: a refused or reset connection, or
	// our per-request timeout.
	return source.Transient(err)
}

// isPreconditionFailed reports a 412 answer to a conditional request.
func isPreconditionFailed(err error) bool {
	var re *awshttp.ResponseError
	if errors.As(err, &re) && re.HTTPStatusCode() == 412 {
		return true
	}
	var ae smithy.APIError
	return errors.As(err, &ae) && ae.ErrorCode() == "PreconditionFailed"
}

func (s *Source) key(name string) string { return s.prefix + name }

// Open learns the object's size and ETag from a ranged GetObject of its
// first bytes (HeadObject when Config.OpenRead is negative) and keeps the
// bytes for the first read. A 404 is checked once against the bucket, so a
// missing bucket is reported as the permanent failure it is rather than as a
// missing object.
func (s *Source) Open(ctx context.Context, name string) (source.Object, error) {
	fail := func(err error) error { return &source.Error{Op: "open", Name: name, URL: s.where, Err: err} }
	if err := source.CheckName(name); err != nil {
		return nil, fail(err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fail(err)
	}
	if s.closed.Load() {
		return nil, fail(source.ErrClosed)
	}
	var size int64
	var etag string
	var first []byte
	err := errNoLength
	if s.openRead > 0 {
		size, etag, first, err = s.openGet(ctx, name)
	}
	if errors.Is(err, errNoLength) {
		first = nil
		size, etag, err = s.head(ctx, name)
	}
	if err != nil {
		if errors.Is(err, source.ErrNotFound) {
			if berr := s.checkBucket(ctx); berr != nil {
				return nil, fail(berr)
			}
		}
		return nil, fail(err)
	}
	s.bucketOK.Store(true)
	return &object{src: s, name: name, key: s.key(name), size: size, etag: etag, first: prefix.New(first)}, nil
}

// errNoLength means the opening GetObject did not tell the size (an empty
// object has no byte 0 to range over), so HeadObject must.
var errNoLength = errors.New("no length from GetObject")

// openGet fetches the first s.openRead bytes of name and returns the size,
// the ETag and the bytes, the object's from offset 0.
func (s *Source) openGet(ctx context.Context, name string) (int64, string, []byte, error) {
	rctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	out, err := s.client.GetObject(rctx, &s3.GetObjectInput{
		Bucket: &s.bucket, Key: aws.String(s.key(name)),
		Range: aws.String(fmt.Sprintf("bytes=0-%d", s.openRead-1)),
	})
	if err != nil {
		var re *awshttp.ResponseError
		if errors.As(err, &re) && re.HTTPStatusCode() == 416 {
			return 0, "", nil, errNoLength
		}
		return 0, "", nil, classify(ctx, err)
	}
	defer out.Body.Close()
	var size, want int64
	if out.ContentRange != nil {
		first, last, total, err := httprange.Parse(*out.ContentRange)
		if err != nil {
			return 0, "", nil, source.Permanent(err)
		}
		if total < 0 {
			return 0, "", nil, errNoLength
		}
		if first != 0 || last != min(int64(s.openRead), total)-1 {
			return 0, "", nil, source.Permanent(fmt.Errorf("asked for bytes 0-%d, server sent %d-%d", s.openRead-1, first, last))
		}
		size, want = total, last+1
	} else {
		// No Content-Range: the body is the whole object.
		if out.ContentLength == nil || *out.ContentLength < 0 {
			return 0, "", nil, errNoLength
		}
		size = *out.ContentLength
		want = min(size, int64(s.openRead))
	}
	buf := make([]byte, want)
	if _, err := io.ReadFull(out.Body, buf); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return 0, "", nil, source.Transient(fmt.Errorf("body ended early: %w", io.ErrUnexpectedEOF))
		}
		return 0, "", nil, classify(ctx, err)
	}
	return size, aws.ToString(out.ETag), buf, nil
}

// head learns the size and ETag with HeadObject.
func (s *Source) head(ctx context.Context, name string) (int64, string, error) {
	rctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	out, err := s.client.HeadObject(rctx, &s3.HeadObjectInput{Bucket: &s.bucket, Key: aws.String(s.key(name))})
	if err != nil {
		return 0, "", classify(ctx, err)
	}
	if out.ContentLength == nil || *out.ContentLength < 0 {
		return 0, "", source.Permanent(errors.New("HeadObject gave no length"))
	}
	return *out.ContentLength, aws.ToString(out.ETag), nil
}

// checkBucket asks whether the bucket exists, once it has any doubt. A
// bucket the credentials may not list (403) is given the benefit of the
// doubt.
func (s *Source) checkBucket(ctx context.Context) error {
	if s.bucketOK.Load() {
		return nil
	}
	s.listMu.Lock()
	inFlight := s.listing
	s.listMu.Unlock()
	if inFlight != nil {
		select {
		case <-inFlight:
		case <-ctx.Done():
			return ctx.Err()
		}
		if s.bucketOK.Load() {
			return nil
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bucketOK.Load() {
		return nil
	}
	rctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	_, err := s.client.HeadBucket(rctx, &s3.HeadBucketInput{Bucket: &s.bucket})
	if err == nil {
		s.bucketOK.Store(true)
		return nil
	}
	kind := classify(ctx, err)
	switch {
	case errors.Is(kind, source.ErrNotFound):
		return source.Permanent(fmt.Errorf("no bucket %q: %w", s.bucket, err))
	case errors.Is(kind, source.ErrPermanent):
		// Not allowed to ask: assume the bucket exists and do not ask
		// again on every miss.
		s.bucketOK.Store(true)
		return nil
	}
	return kind
}

// List pages through ListObjectsV2 under the prefix. Keys that are not
// valid object names (folder markers ending in "/", "a//b") are left out.
func (s *Source) List(ctx context.Context, prefix string) ([]source.Entry, error) {
	fail := func(err error) error { return &source.Error{Op: "list", Name: prefix, URL: s.where, Err: err} }
	if err := source.CheckPrefix(prefix); err != nil {
		return nil, fail(err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fail(err)
	}
	if s.closed.Load() {
		return nil, fail(source.ErrClosed)
	}
	done := make(chan struct{})
	defer close(done)
	s.listMu.Lock()
	if s.listing == nil {
		s.listing = done
		defer func() {
			s.listMu.Lock()
			s.listing = nil
			s.listMu.Unlock()
		}()
	}
	s.listMu.Unlock()
	var out []source.Entry
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{
		Bucket: &s.bucket, Prefix: aws.String(s.key(prefix)),
	})
	for p.HasMorePages() {
		rctx, cancel := context.WithTimeout(ctx, s.timeout)
		page, err := p.NextPage(rctx)
		cancel()
		if err != nil {
			return nil, fail(classify(ctx, err))
		}
		for _, o := range page.Contents {
			if o.Key == nil {
				continue
			}
			name := strings.TrimPrefix(*o.Key, s.prefix)
			if source.CheckName(name) != nil || !strings.HasPrefix(name, prefix) {
				continue
			}
			size := int64(-1)
			if o.Size != nil {
				size = *o.Size
			}
			out = append(out, source.Entry{Name: name, Size: size})
		}
	}
	s.bucketOK.Store(true)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Close marks the source closed; reads in flight finish.
func (s *Source) Close() error {
	s.closed.Store(true)
	return nil
}

type object struct {
	src    *Source
	name   string
	key    string
	size   int64
	etag   string        // the version Open saw; empty when the server gave none
	first  *prefix.Bytes // the bytes Open fetched, until read
	closed atomic.Bool
}

func (o *object) Size() int64 { return o.size }

// PrefixLen is how many bytes Open fetched.
func (o *object) PrefixLen() int64 { return o.first.Len() }

// Holds reports whether a read of n bytes at off is answered by the bytes
// Open fetched.
func (o *object) Holds(off int64, n int) bool {
	return o.first.Holds(off, int(min(int64(n), o.size-off)))
}

// Version is the ETag Open saw.
func (o *object) Version() string { return o.etag }

func (o *object) Close() error {
	o.closed.Store(true)
	return nil
}

func (o *object) ReadAt(ctx context.Context, p []byte, off int64, hint source.Hint) (int, error) {
	fail := func(err error) error { return &source.Error{Op: "read", Name: o.name, URL: o.src.where, Err: err} }
	if err := source.CheckRange(off, len(p), o.size); err != nil {
		return 0, fail(err)
	}
	if err := ctx.Err(); err != nil {
		return 0, fail(err)
	}
	if o.closed.Load() || o.src.closed.Load() {
		return 0, fail(source.ErrClosed)
	}
	want := min(int64(len(p)), o.size-off)
	if want == 0 {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	if n := int64(o.first.Read(p[:want], off)); n < want {
		if err := o.fetch(ctx, p[n:want], off+n); err != nil {
			return int(n), fail(err)
		}
	}
	if int(want) < len(p) {
		return int(want), io.EOF
	}
	return len(p), nil
}

// fetch fills p with the bytes at off, all of which exist, in one ranged
// GetObject, and checks that the answer is the range asked for.
func (o *object) fetch(ctx context.Context, p []byte, off int64) error {
	last := off + int64(len(p)) - 1
	rctx, cancel := context.WithTimeout(ctx, o.src.timeout)
	defer cancel()
	in := &s3.GetObjectInput{
		Bucket: &o.src.bucket, Key: &o.key,
		Range: aws.String(fmt.Sprintf("bytes=%d-%d", off, last)),
	}
	if o.etag != "" {
		in.IfMatch = aws.String(o.etag)
	}
	out, err := o.src.client.GetObject(rctx, in)
	if err != nil {
		if o.etag != "" && isPreconditionFailed(err) {
			return source.Changed("the server refused ETag %s, the version opened", o.etag)
		}
		return classify(ctx, err)
	}
	defer out.Body.Close()
	// A server that ignores If-Match still names the version it sent.
	if got := aws.ToString(out.ETag); o.etag != "" && got != "" && got != o.etag {
		return source.Changed("ETag %s, opened as %s", got, o.etag)
	}
	switch {
	case out.ContentRange != nil:
		first, gotLast, total, err := httprange.Parse(*out.ContentRange)
		if err != nil {
			return source.Permanent(err)
		}
		if first != off || gotLast != last {
			return source.Permanent(fmt.Errorf("asked for bytes %d-%d, server sent %d-%d", off, last, first, gotLast))
		}
		if total >= 0 && total != o.size {
			return source.Changed("size %d bytes, opened as %d", total, o.size)
		}
	case off != 0 || last != o.size-1:
		// Without Content-Range the body is the whole object, which is
		// only the range asked for when that range is the whole object.
		return source.Permanent(fmt.Errorf("server ignored the range bytes %d-%d", off, last))
	}
	if _, err := io.ReadFull(out.Body, p); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return source.Transient(fmt.Errorf("body ended early: %w", io.ErrUnexpectedEOF))
		}
		return classify(ctx, err)
	}
	return nil
}

// StaticCredentials is a convenience for Config.Credentials.
func StaticCredentials(accessKey, secretKey string) aws.CredentialsProvider {
	return credentials.NewStaticCredentialsProvider(accessKey, secretKey, "")
}
