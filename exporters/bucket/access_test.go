package bucket_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"kof.dev/kof/exporters/bucket"
	"kof.dev/kof/internal/testproc"
)

// TestMinIOWithoutPathStyle opens a real MinIO without UsePathStyle (the endpoint is not AWS S3: path-style is
// inferred; regression: `<bucket>.127.0.0.1` was looked up), lists folders, and reads the object lock configuration
// as a user holding exactly the user guide's policy: a *DeniedError naming the action.
func TestMinIOWithoutPathStyle(t *testing.T) {
	minio := testproc.MinIO(t)
	ctx := context.Background()
	root, err := bucket.Open(bucket.Config{Endpoint: minio.URL, Bucket: "kof-audit", AccessKey: testproc.MinIOAccessKey, SecretKey: testproc.MinIOSecretKey})
	if err != nil {
		t.Fatal(err)
	}
	if err := root.Create(ctx, true); err != nil {
		t.Fatalf("create the bucket without path-style: %v", err)
	}
	if err := root.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	lock, err := root.ObjectLock(ctx)
	if err != nil || !lock.Enabled {
		t.Fatalf("object lock as root: %+v, %v", lock, err)
	}
	user := testproc.ExporterUser(t, minio, testproc.AuditLogsGuide, "kof-audit")
	b, err := bucket.Open(bucket.Config{Endpoint: minio.URL, Bucket: "kof-audit", AccessKey: user.AccessKey, SecretKey: user.SecretKey})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a/x/1", "a/x/2", "a/y%2Fz/1", "a/top", "b/w/1"} {
		if _, err := b.PutBytes(ctx, k, []byte("1"), "text/plain", bucket.Condition{IfAbsent: true}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := b.Folders(ctx, "a/")
	if err != nil || !slices.Equal(got, []string{"x", "y%2Fz"}) {
		t.Errorf("Folders(a/) = %q, %v; want [x y%%2Fz]", got, err)
	}
	_, err = b.ObjectLock(ctx)
	var denied *bucket.DeniedError
	if !errors.As(err, &denied) || denied.Action != bucket.ActionGetObjectLock || !strings.Contains(err.Error(), "lacks s3:GetBucketObjectLockConfiguration") ||
		!strings.Contains(err.Error(), "HTTP 403") {
		t.Errorf("object lock as the guide's user: %v; want a DeniedError naming %s", err, bucket.ActionGetObjectLock)
	}
}
