package testproc

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/madmin-go/v3"
)

// The user guides that give the exporters' IAM policy, relative to the repository root: each holds exactly one
// fenced `json` block with a "Statement", the policy of the exporter's S3 user on the guide's bucket.
const (
	// ColdStorageGuide gives the cold-storage exporter's policy (bucket kof-cold).
	ColdStorageGuide = "docs/cold-storage.md"
	// AuditLogsGuide gives the audit-logs exporter's policy (bucket kof-audit).
	AuditLogsGuide = "docs/audit-logs.md"
)

// S3User is a MinIO user that holds exactly one policy, and nothing else.
type S3User struct {
	// AccessKey and SecretKey are the user's credentials (S3_ACCESS_KEY, S3_SECRET_KEY).
	AccessKey, SecretKey string
	// Bucket is the bucket the policy names; Policy the policy document applied.
	Bucket string
	Policy []byte
}

// GuidePolicy returns the IAM policy that the user guide guide (ColdStorageGuide, AuditLogsGuide) tells users to
// give the exporter, with the guide's bucket name replaced by bucket in every Resource. It reads the guide's one
// fenced `json` block that has a "Statement"; errors name the guide and what is wrong (no such block, two of them,
// invalid JSON, a Resource that is not `arn:aws:s3:::<bucket>` or `arn:aws:s3:::<bucket>/*`, two bucket names).
func GuidePolicy(guide, bucket string) ([]byte, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	doc, err := os.ReadFile(filepath.Join(root, guide))
	if err != nil {
		return nil, fmt.Errorf("user guide: %w", err)
	}
	return policyOf(guide, doc, bucket)
}

// policyOf is GuidePolicy of the text doc of guide.
func policyOf(guide string, doc []byte, bucket string) ([]byte, error) {
	var found [][]byte
	for _, block := range FencedBlocks(doc, "json") {
		if bytes.Contains(block, []byte(`"Statement"`)) {
			found = append(found, block)
		}
	}
	if len(found) != 1 {
		return nil, fmt.Errorf("%s: %d fenced json blocks with a \"Statement\"; want exactly one, the exporter's IAM policy", guide, len(found))
	}
	var policy struct {
		Version   string
		Statement []map[string]any
	}
	if err := json.Unmarshal(found[0], &policy); err != nil {
		return nil, fmt.Errorf("%s: the IAM policy is not valid JSON: %w", guide, err)
	}
	guideBucket := ""
	for i, st := range policy.Statement {
		res, err := stringList(st["Resource"])
		if err != nil {
			return nil, fmt.Errorf("%s: Statement %d Resource: %w", guide, i, err)
		}
		for j, r := range res {
			name, ok := strings.CutPrefix(r, "arn:aws:s3:::")
			name, obj := strings.CutSuffix(name, "/*")
			if !ok || name == "" || strings.ContainsAny(name, "/*") {
				return nil, fmt.Errorf("%s: Statement %d Resource %q: want arn:aws:s3:::<bucket> or arn:aws:s3:::<bucket>/*", guide, i, r)
			}
			if guideBucket != "" && name != guideBucket {
				return nil, fmt.Errorf("%s: the IAM policy names buckets %s and %s; want one", guide, guideBucket, name)
			}
			guideBucket = name
			res[j] = "arn:aws:s3:::" + bucket
			if obj {
				res[j] += "/*"
			}
		}
		st["Resource"] = res
	}
	out, err := json.Marshal(policy)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// GuideActions returns the sorted actions of a policy document (for assertions on what a guide grants).
func GuideActions(policy []byte) ([]string, error) {
	var p struct{ Statement []map[string]any }
	if err := json.Unmarshal(policy, &p); err != nil {
		return nil, err
	}
	var out []string
	for i, st := range p.Statement {
		a, err := stringList(st["Action"])
		if err != nil {
			return nil, fmt.Errorf("Statement %d Action: %w", i, err)
		}
		out = append(out, a...)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// stringList reads a policy field that is a string or a list of strings.
func stringList(v any) ([]string, error) {
	switch v := v.(type) {
	case string:
		return []string{v}, nil
	case []any:
		out := make([]string, len(v))
		for i, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("element %d is %T, want a string", i, e)
			}
			out[i] = s
		}
		return out, nil
	}
	return nil, fmt.Errorf("%T, want a string or a list of strings", v)
}

// FencedBlocks returns the bodies of the Markdown code blocks fenced with ```lang (indented fences too).
func FencedBlocks(doc []byte, lang string) [][]byte {
	var out [][]byte
	var cur *bytes.Buffer
	indent := ""
	for _, line := range strings.Split(string(doc), "\n") {
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case cur == nil && trimmed == "```"+lang:
			cur, indent = &bytes.Buffer{}, line[:len(line)-len(trimmed)]
		case cur != nil && trimmed == "```":
			out = append(out, cur.Bytes())
			cur = nil
		case cur != nil:
			cur.WriteString(strings.TrimPrefix(line, indent) + "\n")
		}
	}
	return out
}

// CreateS3User creates, through MinIO's admin API (as the root user), a user of MinIO s holding exactly policy
// and nothing else, under a policy named for the user. It returns the user's credentials; errors name the admin
// call that failed.
func CreateS3User(ctx context.Context, s *Server, bucket string, policy []byte) (S3User, error) {
	u, err := url.Parse(s.URL)
	if err != nil {
		return S3User{}, err
	}
	adm, err := madmin.New(u.Host, MinIOAccessKey, MinIOSecretKey, u.Scheme == "https")
	if err != nil {
		return S3User{}, fmt.Errorf("MinIO admin client for %s: %w", s.URL, err)
	}
	var rnd [12]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return S3User{}, err
	}
	user := S3User{AccessKey: "exporter-" + hex.EncodeToString(rnd[:4]), SecretKey: hex.EncodeToString(rnd[4:]) + "-secret", Bucket: bucket, Policy: policy}
	name := "policy-" + user.AccessKey
	if err := adm.AddCannedPolicy(ctx, name, policy); err != nil {
		return S3User{}, fmt.Errorf("MinIO admin: add policy %s: %w", name, err)
	}
	if err := adm.AddUser(ctx, user.AccessKey, user.SecretKey); err != nil {
		return S3User{}, fmt.Errorf("MinIO admin: add user %s: %w", user.AccessKey, err)
	}
	if err := attachPolicy(ctx, adm, name, user.AccessKey, 30*time.Second); err != nil {
		return S3User{}, fmt.Errorf("MinIO admin: attach policy %s to %s: %w", name, user.AccessKey, err)
	}
	return user, nil
}

// attachPolicy attaches the canned policy name to user, retrying for up to wait while MinIO answers
// XMinioAdminNoSuchPolicy: on a busy machine MinIO has answered a policy it had just accepted that way (the policy
// is then attachable moments later), so that answer is pending, not final. Any other error is returned at once; the
// last XMinioAdminNoSuchPolicy after wait is returned as is.
func attachPolicy(ctx context.Context, adm *madmin.AdminClient, name, user string, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		_, err := adm.AttachPolicy(ctx, madmin.PolicyAssociationReq{Policies: []string{name}, User: user})
		if err == nil || madmin.ToErrorResponse(err).Code != "XMinioAdminNoSuchPolicy" || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// exporterUsers keeps the users ExporterUser made, by server data folder, guide and bucket: MinIO's admin API
// encrypts each request with an Argon2 key (madmin.EncryptData), so a user costs about a second on a busy machine.
var exporterUsers = struct {
	sync.Mutex
	m map[[3]string]S3User
}{m: map[[3]string]S3User{}}

// ExporterUser returns a user of MinIO s that holds exactly the IAM policy the user guide guide gives the exporter
// (GuidePolicy), for bucket, creating it on the first call for s, guide and bucket (later calls return the same
// user: it lives as long as the server's data folder). The bucket itself is not created (the root user does that,
// as an administrator would). A failure fails t.
func ExporterUser(t testing.TB, s *Server, guide, bucket string) S3User {
	t.Helper()
	key := [3]string{s.Dir, guide, bucket}
	exporterUsers.Lock()
	defer exporterUsers.Unlock()
	if u, ok := exporterUsers.m[key]; ok {
		return u
	}
	policy, err := GuidePolicy(guide, bucket)
	if err != nil {
		t.Fatal(err)
	}
	user, err := CreateS3User(context.Background(), s, bucket, policy)
	if err != nil {
		t.Fatal(err)
	}
	exporterUsers.m[key] = user
	return user
}

// GrantAlso returns policy with one more statement allowing actions on resource (an ARN such as
// `arn:aws:s3:::<bucket>`): a user who also holds an optional action the user guide names.
func GrantAlso(policy []byte, resource string, actions ...string) ([]byte, error) {
	var p struct {
		Version   string
		Statement []map[string]any
	}
	if err := json.Unmarshal(policy, &p); err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	p.Statement = append(p.Statement, map[string]any{"Effect": "Allow", "Action": actions, "Resource": []string{resource}})
	return json.Marshal(p)
}
