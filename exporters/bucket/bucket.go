// Package bucket is the S3 sink of the KOF exporters (minio-go): streaming multipart uploads of unknown size,
// conditional writes (If-None-Match / If-Match) for commit markers and leases, custom endpoints (path-style
// addressing unless the endpoint is AWS S3, Google Cloud Storage or Alibaba OSS), TLS verified unless told otherwise, static keys or the default AWS credential chain (environment,
// shared file, IRSA web identity, instance metadata), and the bucket's object lock configuration.
//
// Sources: https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes.html,
// https://docs.aws.amazon.com/AmazonS3/latest/userguide/object-lock.html, https://github.com/minio/minio-go.
package bucket

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// PartSize is the multipart part size of streamed uploads: the most one upload holds in memory (or in its scratch
// file, SpillTo). It is S3's smallest
// part size (5 MiB, https://docs.aws.amazon.com/AmazonS3/latest/userguide/qfacts.html), which bounds an object at
// 10,000 parts = 50 GiB and keeps the buffer that the upload fills, and so the exporters' resident memory, small
// and the same for a small hour and a large one.
const PartSize = 5 << 20

// ErrPrecondition is returned by a conditional write whose condition failed (the object exists for IfAbsent, or
// has another ETag for IfMatch).
var ErrPrecondition = errors.New("precondition failed")

// Config says how to reach one bucket.
type Config struct {
	// Endpoint is the S3 URL (`https://s3.eu-west-1.amazonaws.com`, `http://minio.kof:9000`); "" = AWS S3 of
	// Region.
	Endpoint string
	// Region of the bucket; "" = us-east-1.
	Region string
	// Bucket name.
	Bucket string
	// UsePathStyle addresses `<endpoint>/<bucket>/<key>` instead of `<bucket>.<endpoint>/<key>` for every
	// endpoint. When false the style is inferred from the endpoint (minio-go's BucketLookupAuto): virtual-hosted for
	// AWS S3, Google Cloud Storage and Alibaba OSS endpoints, path-style for any other (MinIO, Ceph), which resolves
	// no `<bucket>.<host>` name.
	UsePathStyle bool
	// InsecureSkipVerify skips TLS verification of the endpoint (test setups only).
	InsecureSkipVerify bool
	// AccessKey and SecretKey are static credentials; when AccessKey is "" the default AWS credential chain is
	// used.
	AccessKey, SecretKey string
}

// Bucket is one S3 bucket.
type Bucket struct {
	name   string
	url    string
	client *minio.Client
	live   uploads   // multipart uploads of NewUpload not yet completed or aborted
	chunks chunkPool // the buffers of uploads' parts, recycled
	// spillDir is the scratch folder holding uploads' parts (SpillTo), "" = in memory.
	spillDir string
}

// Object describes a stored object.
type Object struct {
	// Key of the object.
	Key string
	// ETag without quotes.
	ETag string
	// Size in bytes.
	Size int64
	// LastModified as the server reports it.
	LastModified time.Time
}

// Validate returns every problem of c, each naming the setting and the fix.
func (c Config) Validate() error {
	var errs []error
	if c.Bucket == "" {
		errs = append(errs, errors.New("s3.bucket: required; set the bucket name"))
	}
	if c.Endpoint != "" {
		u, err := url.Parse(c.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("s3.endpoint %q: want an http:// or https:// URL such as https://s3.eu-west-1.amazonaws.com", c.Endpoint))
		}
	}
	if (c.AccessKey == "") != (c.SecretKey == "") {
		errs = append(errs, errors.New("S3_ACCESS_KEY and S3_SECRET_KEY: set both or neither (neither = the default AWS credential chain)"))
	}
	return errors.Join(errs...)
}

// Open returns the bucket of c. It does not contact the server; errors are configuration errors.
func Open(c Config) (*Bucket, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	region := c.Region
	if region == "" {
		region = "us-east-1"
	}
	endpoint := c.Endpoint
	if endpoint == "" {
		endpoint = "https://s3." + region + ".amazonaws.com"
	}
	u, _ := url.Parse(endpoint)
	var creds *credentials.Credentials
	if c.AccessKey != "" {
		creds = credentials.NewStaticV4(c.AccessKey, c.SecretKey, "")
	} else {
		creds = credentials.NewChainCredentials([]credentials.Provider{
			&credentials.EnvAWS{}, &credentials.FileAWSCredentials{}, &credentials.IAM{},
		})
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: c.InsecureSkipVerify} //nolint:gosec // opt-in for test setups
	lookup := minio.BucketLookupAuto
	if c.UsePathStyle {
		lookup = minio.BucketLookupPath
	}
	cl, err := minio.New(u.Host, &minio.Options{
		Creds: creds, Secure: u.Scheme == "https", Region: region, BucketLookup: lookup, Transport: tr,
		MaxRetries: 3,
	})
	if err != nil {
		return nil, fmt.Errorf("s3 client for %s: %w", endpoint, err)
	}
	return &Bucket{name: c.Bucket, url: strings.TrimSuffix(endpoint, "/") + "/" + c.Bucket, client: cl}, nil
}

// Name returns the bucket name.
func (b *Bucket) Name() string { return b.name }

// URL returns `<endpoint>/<bucket>`, the form errors and logs name the bucket by.
func (b *Bucket) URL() string { return b.url }

// fail wraps an S3 error as `<op> <endpoint>/<bucket>/<key>: HTTP <status> <code>: <message>`, or names the URL
// and the network error when the server was not reached.
func (b *Bucket) fail(op, key string, err error) error {
	target := b.url + "/" + key
	var er minio.ErrorResponse
	if errors.As(err, &er) && er.StatusCode != 0 {
		if er.StatusCode == http.StatusPreconditionFailed || er.Code == "PreconditionFailed" {
			return fmt.Errorf("%s %s: %w", op, target, ErrPrecondition)
		}
		return fmt.Errorf("%s %s: HTTP %d %s: %s", op, target, er.StatusCode, er.Code, er.Message)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s %s: %w", op, target, ue.Err)
	}
	return fmt.Errorf("%s %s: %w", op, target, err)
}

// Stat returns the object at key and true, or false when there is none. Other errors name the URL and status.
func (b *Bucket) Stat(ctx context.Context, key string) (Object, bool, error) {
	info, err := b.client.StatObject(ctx, b.name, key, minio.StatObjectOptions{})
	if err != nil {
		if minio.ToErrorResponse(err).StatusCode == http.StatusNotFound {
			return Object{}, false, nil
		}
		return Object{}, false, b.fail("HEAD", key, err)
	}
	return Object{Key: key, ETag: strings.Trim(info.ETag, `"`), Size: info.Size, LastModified: info.LastModified}, true, nil
}

// Get returns the whole object at key (small objects: markers, manifests) and its description; a missing object
// is an error wrapping ErrNotFound.
func (b *Bucket) Get(ctx context.Context, key string) ([]byte, Object, error) {
	rc, obj, err := b.Open(ctx, key)
	if err != nil {
		return nil, Object{}, err
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		return nil, Object{}, b.fail("GET", key, err)
	}
	return data, obj, nil
}

// ErrNotFound is wrapped by Get and Open for a missing object.
var ErrNotFound = errors.New("no such object")

// Open returns a reader of the object at key (close it) and its description; a missing object is an error
// wrapping ErrNotFound.
func (b *Bucket) Open(ctx context.Context, key string) (io.ReadCloser, Object, error) {
	o, err := b.client.GetObject(ctx, b.name, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, Object{}, b.fail("GET", key, err)
	}
	info, err := o.Stat()
	if err != nil {
		_ = o.Close()
		if minio.ToErrorResponse(err).StatusCode == http.StatusNotFound {
			return nil, Object{}, fmt.Errorf("GET %s/%s: %w", b.url, key, ErrNotFound)
		}
		return nil, Object{}, b.fail("GET", key, err)
	}
	return o, Object{Key: key, ETag: strings.Trim(info.ETag, `"`), Size: info.Size, LastModified: info.LastModified}, nil
}

// Condition makes a write conditional.
type Condition struct {
	// IfAbsent writes only when no object exists at the key (If-None-Match: *).
	IfAbsent bool
	// IfMatch, when set, writes only when the object's ETag equals it (If-Match).
	IfMatch string
}

// Put uploads r to key as one object of contentType and returns it. r is streamed in parts of PartSize (size
// unknown); the object appears only when the upload completes, so a failed upload leaves nothing at key. A failed
// condition is an error wrapping ErrPrecondition.
func (b *Bucket) Put(ctx context.Context, key string, r io.Reader, contentType string, cond Condition) (Object, error) {
	opts := minio.PutObjectOptions{ContentType: contentType, PartSize: PartSize}
	if cond.IfAbsent {
		opts.SetMatchETagExcept("*")
	}
	if cond.IfMatch != "" {
		opts.SetMatchETag(cond.IfMatch)
	}
	info, err := b.client.PutObject(ctx, b.name, key, r, -1, opts)
	if err != nil {
		return Object{}, b.fail("PUT", key, err)
	}
	return Object{Key: key, ETag: strings.Trim(info.ETag, `"`), Size: info.Size, LastModified: info.LastModified}, nil
}

// PutBytes uploads data to key in one request (small objects); see Put for conditions and errors.
func (b *Bucket) PutBytes(ctx context.Context, key string, data []byte, contentType string, cond Condition) (Object, error) {
	opts := minio.PutObjectOptions{ContentType: contentType, DisableMultipart: true}
	if cond.IfAbsent {
		opts.SetMatchETagExcept("*")
	}
	if cond.IfMatch != "" {
		opts.SetMatchETag(cond.IfMatch)
	}
	info, err := b.client.PutObject(ctx, b.name, key, bytes.NewReader(data), int64(len(data)), opts)
	if err != nil {
		return Object{}, b.fail("PUT", key, err)
	}
	return Object{Key: key, ETag: strings.Trim(info.ETag, `"`), Size: info.Size, LastModified: info.LastModified}, nil
}

// Delete removes the object at key (no error when it is missing).
func (b *Bucket) Delete(ctx context.Context, key string) error {
	if err := b.client.RemoveObject(ctx, b.name, key, minio.RemoveObjectOptions{}); err != nil {
		return b.fail("DELETE", key, err)
	}
	return nil
}

// List returns every object under prefix, sorted by key.
func (b *Bucket) List(ctx context.Context, prefix string) ([]Object, error) {
	var out []Object
	for o := range b.client.ListObjects(ctx, b.name, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if o.Err != nil {
			return nil, b.fail("LIST", prefix, o.Err)
		}
		out = append(out, Object{Key: o.Key, ETag: strings.Trim(o.ETag, `"`), Size: o.Size, LastModified: o.LastModified})
	}
	return out, nil
}

// Folders returns the names of the folders directly below prefix (a key prefix ending in "/"), sorted: the first
// key segment after prefix of every key under it, listed with the delimiter "/" (s3:ListBucket).
func (b *Bucket) Folders(ctx context.Context, prefix string) ([]string, error) {
	var out []string
	for o := range b.client.ListObjects(ctx, b.name, minio.ListObjectsOptions{Prefix: prefix}) {
		if o.Err != nil {
			return nil, b.fail("LIST", prefix, o.Err)
		}
		if name, ok := strings.CutSuffix(strings.TrimPrefix(o.Key, prefix), "/"); ok && name != "" {
			out = append(out, name)
		}
	}
	return out, nil
}

// Lock is a bucket's S3 Object Lock configuration.
type Lock struct {
	// Enabled is true when the bucket has object lock.
	Enabled bool
	// Mode is the default retention mode (GOVERNANCE or COMPLIANCE), "" when none.
	Mode string
	// Retention is the default retention period, 0 when none.
	Retention time.Duration
}

// ActionGetObjectLock is the IAM action ObjectLock needs. The user guides' exporter policy does not grant it: it
// serves an optional check only (docs/audit-logs.md, "S3 permissions").
const ActionGetObjectLock = "s3:GetBucketObjectLockConfiguration"

// DeniedError is a request the server refused with HTTP 403: the credentials lack Action.
type DeniedError struct {
	// Action is the IAM action the request needs.
	Action string
	// Err is the request's error (URL and status).
	Err error
}

// Error names the request, the status and the action missing.
func (e *DeniedError) Error() string { return e.Err.Error() + " (the S3 user lacks " + e.Action + ")" }

// Unwrap returns the request's error.
func (e *DeniedError) Unwrap() error { return e.Err }

// ObjectLock reads the bucket's object lock configuration; a bucket without one gives Lock{Enabled: false}.
// Credentials without ActionGetObjectLock give a *DeniedError naming it; other errors name the bucket URL and
// status.
func (b *Bucket) ObjectLock(ctx context.Context) (Lock, error) {
	enabled, mode, validity, unit, err := b.client.GetObjectLockConfig(ctx, b.name)
	if err != nil {
		er := minio.ToErrorResponse(err)
		if er.Code == "ObjectLockConfigurationNotFoundError" || er.StatusCode == http.StatusNotFound {
			return Lock{}, nil
		}
		if er.StatusCode == http.StatusForbidden || er.Code == "AccessDenied" {
			return Lock{}, &DeniedError{Action: ActionGetObjectLock, Err: b.fail("GET ?object-lock", "", err)}
		}
		return Lock{}, b.fail("GET ?object-lock", "", err)
	}
	l := Lock{Enabled: enabled == "Enabled"}
	if mode != nil {
		l.Mode = mode.String()
	}
	if validity != nil && unit != nil {
		day := 24 * time.Hour
		if *unit == minio.Years {
			day *= 365
		}
		l.Retention = time.Duration(*validity) * day
	}
	return l, nil
}

// Ping checks that the bucket exists and the credentials may read it. Errors name the URL and status.
func (b *Bucket) Ping(ctx context.Context) error {
	ok, err := b.client.BucketExists(ctx, b.name)
	if err != nil {
		return b.fail("HEAD", "", err)
	}
	if !ok {
		return fmt.Errorf("HEAD %s: HTTP 404 NoSuchBucket: the bucket does not exist; create it or fix s3.bucket", b.url)
	}
	return nil
}

// SetDefaultRetention sets the bucket's default object lock retention (mode GOVERNANCE or COMPLIANCE, days); the
// bucket must have been created with object lock.
func (b *Bucket) SetDefaultRetention(ctx context.Context, mode string, days uint) error {
	m := minio.RetentionMode(mode)
	unit := minio.Days
	if err := b.client.SetObjectLockConfig(ctx, b.name, &m, &days, &unit); err != nil {
		return b.fail("PUT ?object-lock", "", err)
	}
	return nil
}

// Create makes the bucket, with object lock when objectLock is set (tests and first setup).
func (b *Bucket) Create(ctx context.Context, objectLock bool) error {
	if err := b.client.MakeBucket(ctx, b.name, minio.MakeBucketOptions{ObjectLocking: objectLock}); err != nil {
		return b.fail("PUT", "", err)
	}
	return nil
}
