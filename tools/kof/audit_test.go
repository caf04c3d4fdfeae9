package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kof.dev/kof/exporters/auditlog"
	"kof.dev/kof/exporters/bucket"
	"kof.dev/kof/exporters/evidence"
	"kof.dev/kof/exporters/window"
	"kof.dev/kof/internal/testproc"
)

// TestAuditVerify exports two windows of audit records from a real VictoriaLogs into a real MinIO, then runs
// `kof audit verify`: every window OK (exit 0); with a data byte changed, the window fails naming the problem
// (exit 1); with a pinned key that did not sign, every window is an unknown key.
func TestAuditVerify(t *testing.T) {
	vl, minio := testproc.VictoriaLogs(t), testproc.MinIO(t)
	hours := []window.Hour{window.Of(time.Date(2026, 6, 29, 16, 0, 0, 0, time.UTC)), window.Of(time.Date(2026, 6, 29, 17, 0, 0, 0, time.UTC))}
	var body strings.Builder
	for i := 0; i < 20; i++ {
		ts := hours[i%2].Start.Add(time.Duration(i) * time.Minute)
		fmt.Fprintf(&body, `{"_time":%q,"_msg":"{\"auditID\":\"%d\",\"verb\":\"get\"}","k8s.cluster.name":"child","tenant":"acme"}`+"\n", ts.Format(time.RFC3339Nano), i)
	}
	resp, err := http.Post(vl.URL+"/insert/jsonline?_stream_fields=k8s.cluster.name", "application/stream+json", strings.NewReader(body.String())) //nolint:noctx // loopback
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if r, err := http.Get(vl.URL + "/internal/force_flush"); err == nil { //nolint:noctx // loopback
		_ = r.Body.Close()
	}
	dir := t.TempDir()
	keyFile, otherPub := writeKey(t, dir, "signing.key"), filepath.Join(dir, "other.pub")
	_ = writeKey(t, dir, "other.key")
	other, _ := os.ReadFile(filepath.Join(dir, "other.key.pub"))
	if err := os.WriteFile(otherPub, other, 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		auditlog.EnvLogsURL: vl.URL, auditlog.EnvS3Bucket: "audit", auditlog.EnvS3Endpoint: minio.URL, auditlog.EnvS3UsePathStyle: "true",
		auditlog.EnvS3AccessKey: testproc.MinIOAccessKey, auditlog.EnvS3SecretKey: testproc.MinIOSecretKey, auditlog.EnvSigningKeyFile: keyFile,
	}
	cfg, err := auditlog.FromEnv(func(k string) string { return env[k] }, os.ReadFile)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bucket.Open(cfg.S3)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := b.Create(ctx, false); err != nil {
		t.Fatal(err)
	}
	e, err := auditlog.New(cfg, auditlog.Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if res := e.RunWindows(ctx, hours); res.Exported != 2 || len(res.Failed) > 0 {
		t.Fatalf("export: %+v", res)
	}
	t.Setenv("S3_ACCESS_KEY", testproc.MinIOAccessKey)
	t.Setenv("S3_SECRET_KEY", testproc.MinIOSecretKey)
	args := []string{"audit", "verify", "--s3-endpoint", minio.URL, "--bucket", "audit", "--path-style"}
	code, out, errOut := kof(t, args...)
	if code != exitClean || strings.Count(out, " OK\n") != 2 || !strings.Contains(out, "tenant-audit-log  acme    2026-06-29T16Z  10") {
		t.Fatalf("verify: exit %d\n%s%s", code, out, errOut)
	}
	key := evidence.Folder(evidence.StreamTenant, "acme", hours[1]) + evidence.DataName
	data, _, err := b.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-5] ^= 0x40
	if _, err := b.PutBytes(ctx, key, data, "application/x-ndjson", bucket.Condition{}); err != nil {
		t.Fatal(err)
	}
	code, out, _ = kof(t, append(args, "--stream", evidence.StreamTenant, "--tenant", "acme", "--from", "2026-06-29T17")...)
	if code != exitFindings || !strings.Contains(out, "2026-06-29T17Z  10      FAIL: tampered data: sha256") || strings.Contains(out, "T16Z") {
		t.Errorf("tampered: exit %d\n%s", code, out)
	}
	code, out, _ = kof(t, append(args, "--public-key", otherPub, "--to", "2026-06-29T17")...)
	if code != exitFindings || !strings.Contains(out, "FAIL: unknown key") {
		t.Errorf("other key pinned: exit %d\n%s", code, out)
	}
	if code, _, _ := kof(t, "audit", "verify", "--bucket", "audit", "--from", "yesterday"); code != exitUsage {
		t.Errorf("bad --from: exit %d, want %d", code, exitUsage)
	}
}

// writeKey writes an Ed25519 private key (PKCS #8 PEM) as dir/name and its public key as dir/name.pub.
func writeKey(t *testing.T, dir, name string) string {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(priv)
	pubDER, _ := x509.MarshalPKIXPublicKey(pub)
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".pub", pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
