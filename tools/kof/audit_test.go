package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"kof.dev/kof/exporters/auditlog"
	"kof.dev/kof/exporters/bucket"
	"kof.dev/kof/exporters/evidence"
	"kof.dev/kof/exporters/window"
	"kof.dev/kof/internal/testproc"
)

// auditTrail is a bucket of a real MinIO holding windows exported by the audit-logs exporter from a real
// VictoriaLogs, as a user holding exactly the user guide's policy.
type auditTrail struct {
	minio  *testproc.Server
	user   testproc.S3User
	bucket *bucket.Bucket // opened as the root user (tampering)
	pub    string         // the signing key's public key file
}

// exportTrail writes n audit records per tenant spread over hours into VictoriaLogs, creates bucketName (as the
// root user) and exports hours into it as the guide's user with path-style addressing inferred.
func exportTrail(t *testing.T, bucketName string, hours []window.Hour, tenants []string, n int) auditTrail {
	t.Helper()
	vl, minio := testproc.VictoriaLogs(t), testproc.MinIO(t)
	var body strings.Builder
	for _, tenant := range tenants {
		for i := 0; i < n; i++ {
			ts := hours[i%len(hours)].Start.Add(time.Duration(i) * time.Second)
			fmt.Fprintf(&body, `{"_time":%q,"_msg":"{\"auditID\":\"%s-%d\",\"verb\":\"get\"}","k8s.cluster.name":"child","tenant":%q}`+"\n", ts.Format(time.RFC3339Nano), tenant, i, tenant)
		}
	}
	resp, err := http.Post(vl.URL+"/insert/jsonline?_stream_fields=k8s.cluster.name", "application/stream+json", strings.NewReader(body.String())) //nolint:noctx // loopback
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if r, err := http.Get(vl.URL + "/internal/force_flush"); err == nil { //nolint:noctx // loopback
		_ = r.Body.Close()
	}
	keyFile, _ := testproc.SigningKey(t, t.TempDir(), "signing.key")
	root, err := bucket.Open(bucket.Config{Endpoint: minio.URL, Bucket: bucketName, AccessKey: testproc.MinIOAccessKey, SecretKey: testproc.MinIOSecretKey})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := root.Create(ctx, false); err != nil {
		t.Fatal(err)
	}
	user := testproc.ExporterUser(t, minio, testproc.AuditLogsGuide, bucketName)
	env := map[string]string{
		auditlog.EnvLogsURL: vl.URL, auditlog.EnvS3Bucket: bucketName, auditlog.EnvS3Endpoint: minio.URL,
		auditlog.EnvS3AccessKey: user.AccessKey, auditlog.EnvS3SecretKey: user.SecretKey, auditlog.EnvSigningKeyFile: keyFile,
	}
	cfg, err := auditlog.FromEnv(func(k string) string { return env[k] }, os.ReadFile)
	if err != nil {
		t.Fatal(err)
	}
	e, err := auditlog.New(cfg, auditlog.Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if res := e.RunWindows(ctx, hours); res.Exported != len(hours)*len(tenants) || len(res.Failed) > 0 {
		t.Fatalf("export: %+v", res)
	}
	t.Setenv("S3_ACCESS_KEY", user.AccessKey)
	t.Setenv("S3_SECRET_KEY", user.SecretKey)
	return auditTrail{minio: minio, user: user, bucket: root, pub: keyFile + ".pub"}
}

// TestAuditVerify exports three windows of two tenants from a real VictoriaLogs into a real MinIO, then runs
// `kof audit verify` as the guide's user without --path-style: every window OK (exit 0); with a data byte changed,
// the window fails naming the problem (exit 1); with a pinned key that did not sign, every window is an unknown
// key; with the newest window deleted, or a whole tenant's newest hours, verify exits 1 naming each missing window.
func TestAuditVerify(t *testing.T) {
	hours := []window.Hour{window.Of(time.Date(2026, 6, 29, 15, 0, 0, 0, time.UTC)), window.Of(time.Date(2026, 6, 29, 16, 0, 0, 0, time.UTC)),
		window.Of(time.Date(2026, 6, 29, 17, 0, 0, 0, time.UTC))}
	tr := exportTrail(t, "audit", hours, []string{"acme", "globex"}, 30)
	ctx := context.Background()
	dir := t.TempDir()
	_, otherPub := testproc.SigningKey(t, dir, "other.key")
	if err := os.WriteFile(filepath.Join(dir, "other.pub"), otherPub, 0o600); err != nil {
		t.Fatal(err)
	}
	// The trail ends at 17:00; --to bounds the windows checked (the trail would otherwise miss every hour up to now).
	args := []string{"audit", "verify", "--s3-endpoint", tr.minio.URL, "--bucket", "audit", "--to", "2026-06-29T18"}
	code, out, errOut := kof(t, args...)
	if code != exitClean || strings.Count(out, " OK\n") != 6 || !strings.Contains(out, "tenant-audit-log  acme    2026-06-29T16Z  10") {
		t.Fatalf("verify: exit %d\n%s%s", code, out, errOut)
	}
	key := evidence.Folder(evidence.StreamTenant, "acme", hours[1]) + evidence.DataName
	data, _, err := tr.bucket.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	orig := append([]byte(nil), data...)
	data[len(data)-5] ^= 0x40
	if _, err := tr.bucket.PutBytes(ctx, key, data, "application/x-ndjson", bucket.Condition{}); err != nil {
		t.Fatal(err)
	}
	code, out, _ = kof(t, append(args, "--stream", evidence.StreamTenant, "--tenant", "acme", "--from", "2026-06-29T16", "--to", "2026-06-29T17")...)
	if code != exitFindings || !strings.Contains(out, "2026-06-29T16Z  10      FAIL: tampered data: sha256") || strings.Contains(out, "T15Z") || strings.Contains(out, "T17Z") {
		t.Errorf("tampered: exit %d\n%s", code, out)
	}
	if _, err := tr.bucket.PutBytes(ctx, key, orig, "application/x-ndjson", bucket.Condition{}); err != nil {
		t.Fatal(err)
	}
	code, out, _ = kof(t, append(args, "--public-key", filepath.Join(dir, "other.pub"))...)
	if code != exitFindings || strings.Count(out, "FAIL: unknown key") != 6 {
		t.Errorf("other key pinned: exit %d\n%s", code, out)
	}

	// Truncation: acme's newest window, and globex's two newest hours.
	for _, w := range []struct {
		tenant string
		h      window.Hour
	}{{"acme", hours[2]}, {"globex", hours[1]}, {"globex", hours[2]}} {
		for _, n := range []string{evidence.DataName, evidence.SignatureName, evidence.ManifestName} {
			if err := tr.bucket.Delete(ctx, evidence.Folder(evidence.StreamTenant, w.tenant, w.h)+n); err != nil {
				t.Fatal(err)
			}
		}
	}
	code, out, _ = kof(t, args...)
	missing := regexp.MustCompile(`(?m)^tenant-audit-log\s+(\S+)\s+(\S+)\s+0\s+FAIL: ` + regexp.QuoteMeta(evidence.ProblemMissing) + `$`)
	var got []string
	for _, m := range missing.FindAllStringSubmatch(out, -1) {
		got = append(got, m[1]+" "+m[2])
	}
	if code != exitFindings || strings.Join(got, ",") != "acme 2026-06-29T17Z,globex 2026-06-29T16Z,globex 2026-06-29T17Z" ||
		!strings.Contains(out, "6 windows, 3 failed") {
		t.Errorf("truncated trail: exit %d, missing %v; want acme 17Z and globex 16Z, 17Z\n%s", code, got, out)
	}
	if code, _, _ := kof(t, "audit", "verify", "--bucket", "audit", "--from", "yesterday"); code != exitUsage {
		t.Errorf("bad --from: exit %d, want %d", code, exitUsage)
	}
	if code, _, errOut := kof(t, "audit", "verify", "--bucket", "audit", "--delay", "-1h"); code != exitUsage || !strings.Contains(errOut, "--delay") {
		t.Errorf("negative --delay: exit %d, %s", code, errOut)
	}
}

// TestAuditVerifyGuideExample runs the user guide's `kof audit verify` command exactly as docs/audit-logs.md
// writes it, against a real MinIO (only its endpoint and the credentials' "..." replaced), over a trail exported
// up to the last closed hour: exit 0 with every window OK. Then it deletes the newest window and the same command
// exits 1 naming it.
func TestAuditVerifyGuideExample(t *testing.T) {
	line := guideVerifyCommand(t)
	plan := window.Plan{Delay: 0, CatchUp: 3}
	// The exporter's default delay (10 min) and the chart's schedule (minute 20) leave the last closed hour to be
	// exported by then; with delay 0 the newest hour is exported at once, so verify's --delay default is met.
	hours, err := plan.Windows(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	tr := exportTrail(t, "kof-audit", hours, []string{"acme"}, 12)
	dir := t.TempDir()
	pub, err := os.ReadFile(tr.pub)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "signing.pub"), pub, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir) // the guide's --public-key signing.pub is a relative path
	var args []string
	for i, f := range strings.Fields(line) {
		switch {
		case f == "S3_ACCESS_KEY=...":
			t.Setenv("S3_ACCESS_KEY", tr.user.AccessKey)
		case f == "S3_SECRET_KEY=...":
			t.Setenv("S3_SECRET_KEY", tr.user.SecretKey)
		case strings.Contains(f, "="):
			t.Fatalf("the guide's command sets %s; this test knows only S3_ACCESS_KEY and S3_SECRET_KEY", f)
		case f == "kof" && args == nil:
			args = []string{}
		case args == nil:
			t.Fatalf("word %d of the guide's command %q comes before kof", i, f)
		case len(args) > 0 && args[len(args)-1] == "--s3-endpoint":
			args = append(args, tr.minio.URL)
		default:
			args = append(args, f)
		}
	}
	code, out, errOut := kof(t, args...)
	if code != exitClean || strings.Count(out, " OK\n") != len(hours) {
		t.Fatalf("kof %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	newest := hours[len(hours)-1]
	for _, n := range []string{evidence.DataName, evidence.SignatureName, evidence.ManifestName} {
		if err := tr.bucket.Delete(context.Background(), evidence.Folder(evidence.StreamTenant, "acme", newest)+n); err != nil {
			t.Fatal(err)
		}
	}
	// The newest hour is missing once verify's delay has passed since it closed: with --delay 0 at once.
	code, out, _ = kof(t, append(args, "--delay", "0s")...)
	if code != exitFindings || !strings.Contains(out, newest.String()+"  0       FAIL: "+evidence.ProblemMissing) {
		t.Errorf("newest window deleted: exit %d\n%s", code, out)
	}
}

// guideVerifyCommand returns the `kof audit verify` command line of the user guide's fenced sh block (one line, or
// lines joined at a trailing backslash).
func guideVerifyCommand(t *testing.T) string {
	t.Helper()
	root, err := testproc.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, testproc.AuditLogsGuide))
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	in, cur := false, ""
	for _, l := range strings.Split(string(doc), "\n") {
		l = strings.TrimSpace(l)
		switch {
		case l == "```sh":
			in = true
		case l == "```":
			in = false
		case in && (cur != "" || strings.Contains(l, "kof audit verify")):
			cur += " " + strings.TrimSuffix(l, "\\")
			if !strings.HasSuffix(l, "\\") {
				found, cur = append(found, strings.TrimSpace(cur)), ""
			}
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s: %d `kof audit verify` commands in sh blocks, want 1: %q", testproc.AuditLogsGuide, len(found), found)
	}
	return found[0]
}
