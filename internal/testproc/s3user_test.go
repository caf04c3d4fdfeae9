package testproc

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/madmin-go/v3"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// guideActions are the actions the user guides promise the exporters need (issue: "the guide's four actions").
var guideActions = []string{"s3:AbortMultipartUpload", "s3:GetObject", "s3:ListBucket", "s3:PutObject"}

// TestGuidePolicies checks that both user guides give the same policy, of exactly the four actions, and that a
// policy block the helper cannot apply is an error naming the guide.
func TestGuidePolicies(t *testing.T) {
	cold, err := GuidePolicy(ColdStorageGuide, "b")
	if err != nil {
		t.Fatal(err)
	}
	audit, err := GuidePolicy(AuditLogsGuide, "b")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(cold, audit) {
		t.Errorf("the guides' policies differ beyond the bucket name:\n%s\n%s", cold, audit)
	}
	actions, err := GuideActions(cold)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(actions, guideActions) {
		t.Errorf("%s grants %v; want exactly %v", ColdStorageGuide, actions, guideActions)
	}
	if !strings.Contains(string(cold), `"arn:aws:s3:::b/*"`) || !strings.Contains(string(cold), `"arn:aws:s3:::b"`) || strings.Contains(string(cold), "kof-cold") {
		t.Errorf("bucket not replaced: %s", cold)
	}
	block := func(resource string) string {
		return "```json\n{\"Version\":\"2012-10-17\",\"Statement\":[{\"Effect\":\"Allow\",\"Action\":\"s3:GetObject\",\"Resource\":" + resource + "}]}\n```\n"
	}
	for name, tc := range map[string]struct{ doc, want string }{
		"none":          {"text\n```sh\necho\n```\n", "0 fenced json blocks"},
		"two":           {block(`"arn:aws:s3:::x/*"`) + block(`"arn:aws:s3:::x"`), "2 fenced json blocks"},
		"two buckets":   {block(`["arn:aws:s3:::x/*","arn:aws:s3:::y"]`), "names buckets x and y"},
		"not a bucket":  {block(`"*"`), `Resource "*"`},
		"invalid JSON":  {"```json\n{\"Statement\": [\n```\n", "not valid JSON"},
		"indented fine": {"1. step\n\n   " + strings.ReplaceAll(block(`"arn:aws:s3:::x"`), "\n", "\n   "), ""},
	} {
		_, err := policyOf("test-guide.md", []byte(tc.doc), "b")
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "test-guide.md") {
			t.Errorf("%s: error %v; want one naming test-guide.md and %q", name, err, tc.want)
		}
	}
}

// TestExporterUser creates the guide's user on a real MinIO and checks, as that user, that the four actions are
// allowed on its bucket and that nothing else is: no delete, no object lock configuration read, no other bucket.
func TestExporterUser(t *testing.T) {
	s := MinIO(t)
	ctx := context.Background()
	u, _ := url.Parse(s.URL)
	client := func(access, secret string) *minio.Client {
		c, err := minio.New(u.Host, &minio.Options{Creds: credentials.NewStaticV4(access, secret, ""), Region: "us-east-1", BucketLookup: minio.BucketLookupPath})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	root := client(MinIOAccessKey, MinIOSecretKey)
	for _, b := range []string{"kof-audit", "other"} {
		if err := root.MakeBucket(ctx, b, minio.MakeBucketOptions{ObjectLocking: true}); err != nil {
			t.Fatal(err)
		}
	}
	user := ExporterUser(t, s, AuditLogsGuide, "kof-audit")
	if user.AccessKey == "" || user.SecretKey == "" || user.AccessKey == MinIOAccessKey {
		t.Fatalf("credentials %q: want a new user", user.AccessKey)
	}
	c := client(user.AccessKey, user.SecretKey)
	put := func(bucket, key string) error {
		_, err := c.PutObject(ctx, bucket, key, strings.NewReader("x"), 1, minio.PutObjectOptions{})
		return err
	}
	if err := put("kof-audit", "a/b"); err != nil {
		t.Fatalf("PutObject as the guide's user: %v", err)
	}
	if _, err := c.StatObject(ctx, "kof-audit", "a/b", minio.StatObjectOptions{}); err != nil {
		t.Errorf("HeadObject (s3:GetObject): %v", err)
	}
	n := 0
	for o := range c.ListObjects(ctx, "kof-audit", minio.ListObjectsOptions{Recursive: true}) {
		if o.Err != nil {
			t.Fatalf("ListObjects (s3:ListBucket): %v", o.Err)
		}
		n++
	}
	if n != 1 {
		t.Errorf("ListObjects: %d objects, want 1", n)
	}
	core := minio.Core{Client: c}
	id, err := core.NewMultipartUpload(ctx, "kof-audit", "a/multi", minio.PutObjectOptions{})
	if err != nil {
		t.Fatalf("CreateMultipartUpload (s3:PutObject): %v", err)
	}
	if err := core.AbortMultipartUpload(ctx, "kof-audit", "a/multi", id); err != nil {
		t.Errorf("AbortMultipartUpload: %v", err)
	}
	denied := func(what string, err error) {
		t.Helper()
		if minio.ToErrorResponse(err).StatusCode != http.StatusForbidden {
			t.Errorf("%s as the guide's user: %v; want HTTP 403 (the policy does not grant it)", what, err)
		}
	}
	denied("DeleteObject", c.RemoveObject(ctx, "kof-audit", "a/b", minio.RemoveObjectOptions{}))
	_, _, _, _, err = c.GetObjectLockConfig(ctx, "kof-audit")
	denied("GetObjectLockConfiguration", err)
	denied("PutObject into another bucket", put("other", "a/b"))
}

// TestAttachPolicyWaitsForANewPolicy is the regression test of CreateS3User failing when MinIO, on a busy machine,
// answered XMinioAdminNoSuchPolicy for a policy it had just accepted: that answer is retried until the deadline,
// and any other answer ends the wait at once.
func TestAttachPolicyWaitsForANewPolicy(t *testing.T) {
	var calls atomic.Int32
	answers := func(codes ...string) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n := int(calls.Add(1))
			code := codes[min(n, len(codes))-1]
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"Code":%q,"Message":"answer %d"}`, code, n)
		}))
	}
	admin := func(t *testing.T, s *httptest.Server) *madmin.AdminClient {
		u, err := url.Parse(s.URL)
		if err != nil {
			t.Fatal(err)
		}
		adm, err := madmin.New(u.Host, MinIOAccessKey, MinIOSecretKey, false)
		if err != nil {
			t.Fatal(err)
		}
		return adm
	}

	s := answers("XMinioAdminNoSuchPolicy", "XMinioAdminNoSuchPolicy", "XMinioAdminNoSuchUser")
	defer s.Close()
	err := attachPolicy(context.Background(), admin(t, s), "p", "u", 10*time.Second)
	if got := madmin.ToErrorResponse(err).Code; got != "XMinioAdminNoSuchUser" || calls.Load() != 3 {
		t.Errorf("attachPolicy = %q after %d calls; want XMinioAdminNoSuchUser after 3 (two pending answers retried, the third final)", got, calls.Load())
	}

	calls.Store(0)
	s2 := answers("XMinioAdminNoSuchPolicy")
	defer s2.Close()
	start := time.Now()
	err = attachPolicy(context.Background(), admin(t, s2), "p", "u", time.Second)
	if got := madmin.ToErrorResponse(err).Code; got != "XMinioAdminNoSuchPolicy" || time.Since(start) < time.Second || calls.Load() < 2 {
		t.Errorf("attachPolicy = %q after %v and %d calls; want XMinioAdminNoSuchPolicy after the 1 s deadline, retried", got, time.Since(start), calls.Load())
	}
}

// TestMinIOReadyServesBucketsAndIAM is the regression test of a MinIO that the harness called ready while it still
// answered a bucket PUT with 503 XMinioServerNotInitialized and lost a policy it had just added (its liveness check
// answers before its object layer and IAM are initialized): at once after the start and after a restart on the same
// data folder, MinIO's cluster check answers 200 and the root user creates a bucket and adds, creates and attaches a
// policy to a user with one request each, no retry.
func TestMinIOReadyServesBucketsAndIAM(t *testing.T) {
	s := MinIO(t)
	ctx := context.Background()
	for round := range 3 {
		if round > 0 {
			if err := s.Stop(); err != nil {
				t.Fatal(err)
			}
			if err := s.Restart(); err != nil {
				t.Fatalf("Restart: %v", err)
			}
		}
		// MinIO's own check of its object layer, bucket metadata and IAM.
		resp, err := http.Get(s.URL + "/minio/health/cluster")
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("round %d: /minio/health/cluster at once after the start: HTTP %d (%s), want 200", round,
				resp.StatusCode, resp.Header.Get("X-Minio-Server-Status"))
		}
		u, _ := url.Parse(s.URL)
		root, err := minio.New(u.Host, &minio.Options{Creds: credentials.NewStaticV4(MinIOAccessKey, MinIOSecretKey, ""),
			Region: "us-east-1", BucketLookup: minio.BucketLookupPath})
		if err != nil {
			t.Fatal(err)
		}
		bucket := fmt.Sprintf("ready-%d", round)
		if err := root.MakeBucket(ctx, bucket, minio.MakeBucketOptions{}); err != nil {
			t.Fatalf("round %d: CreateBucket at once after the start: %v", round, err)
		}
		adm, err := madmin.New(u.Host, MinIOAccessKey, MinIOSecretKey, false)
		if err != nil {
			t.Fatal(err)
		}
		policy, err := GuidePolicy(ColdStorageGuide, bucket)
		if err != nil {
			t.Fatal(err)
		}
		name, user := fmt.Sprintf("policy-ready-%d", round), fmt.Sprintf("ready-%d", round)
		if err := adm.AddCannedPolicy(ctx, name, policy); err != nil {
			t.Fatalf("round %d: add policy: %v", round, err)
		}
		if err := adm.AddUser(ctx, user, "ready-user-secret"); err != nil {
			t.Fatalf("round %d: add user: %v", round, err)
		}
		if _, err := adm.AttachPolicy(ctx, madmin.PolicyAssociationReq{Policies: []string{name}, User: user}); err != nil {
			t.Fatalf("round %d: attach policy at once after adding it: %v", round, err)
		}
	}
}
