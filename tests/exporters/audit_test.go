package exporters

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kof.dev/kof/exporters/bucket"
	"kof.dev/kof/exporters/evidence"
	"kof.dev/kof/exporters/window"
	"kof.dev/kof/internal/testproc"
)

// TestAuditLogsChartRunsTheExporter follows the user guide: a MinIO user holding exactly the guide's policy, the
// S3 and signing key Secrets, `helm upgrade -i` of the chart, then the CronJob's job template run for real (env and
// the Secret volume as the kubelet would mount it) against VictoriaLogs and MinIO; the window's three objects exist
// and the trail verifies.
func TestAuditLogsChartRunsTheExporter(t *testing.T) {
	vl, minio := testproc.VictoriaLogs(t), testproc.MinIO(t)
	ctx := context.Background()
	b, err := bucket.Open(bucket.Config{Endpoint: minio.URL, Bucket: "kof-audit",
		AccessKey: testproc.MinIOAccessKey, SecretKey: testproc.MinIOSecretKey})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Create(ctx, false); err != nil {
		t.Fatal(err)
	}
	h := window.Of(time.Now()).Prev()
	var body strings.Builder
	for i := 0; i < 6; i++ {
		fmt.Fprintf(&body, `{"_time":%q,"_msg":"{\"auditID\":\"a%d\"}","k8s.cluster.name":"mothership"}`+"\n", h.Start.Add(time.Duration(i)*time.Minute).Format(time.RFC3339Nano), i)
	}
	resp, err := http.Post(vl.URL+"/insert/jsonline?_stream_fields=k8s.cluster.name", "application/stream+json", strings.NewReader(body.String())) //nolint:noctx // loopback
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if r, err := http.Get(vl.URL + "/internal/force_flush"); err == nil { //nolint:noctx // loopback
		_ = r.Body.Close()
	}
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(priv)
	createSecret(t, "audit-logs-exporter-signing-key", map[string]string{"signing.key": string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))})
	user := testproc.ExporterUser(t, minio, testproc.AuditLogsGuide, "kof-audit")
	createSecret(t, "audit-logs-exporter-s3-credentials", map[string]string{"S3_ACCESS_KEY": user.AccessKey, "S3_SECRET_KEY": user.SecretKey})
	rel, err := helm().Install(ctx, installRelease("audit-logs-exporter", map[string]any{
		"endpoint": vl.URL,
		"s3":       map[string]any{"bucket": "kof-audit", "endpoint": minio.URL, "existingSecret": "audit-logs-exporter-s3-credentials"},
		"signing":  map[string]any{"existingSecret": "audit-logs-exporter-signing-key"},
		"window":   map[string]any{"delay": "0s", "catchUpHours": 2},
	}))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(rel.Manifest, "PRIVATE KEY") || strings.Contains(rel.Manifest, user.SecretKey) {
		t.Fatal("key material in the Helm release manifest")
	}
	var cj batchv1.CronJob
	if err := cp.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "audit-logs-exporter"}, &cj); err != nil {
		t.Fatal(err)
	}
	pod := cj.Spec.JobTemplate.Spec.Template.Spec
	c := pod.Containers[0]
	env := mountSecrets(t, pod, c, jobEnv(t, c))
	cmd := exec.Command(buildBinary(t, "audit-logs-exporter"), c.Args...)
	cmd.Env = env
	var logs bytes.Buffer
	cmd.Stderr = &logs
	if err := cmd.Run(); err != nil {
		t.Fatalf("exporter with the job template's env: %v\n%s", err, logs.String())
	}
	folder := evidence.Folder(evidence.StreamPlatform, evidence.TenantPlatform, h)
	for _, n := range []string{evidence.DataName, evidence.SignatureName, evidence.ManifestName} {
		if _, ok, err := b.Stat(ctx, folder+n); err != nil || !ok {
			t.Errorf("%s%s: present %v, err %v\n%s", folder, n, ok, err, logs.String())
		}
	}
	if !strings.Contains(logs.String(), `"msg":"window exported successfully","stream":"platform-audit-log","tenant":"PLATFORM","window":"`+h.String()+`","events":6`) {
		t.Errorf("logs lack the window line:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), "PRIVATE KEY") || strings.Contains(logs.String(), user.SecretKey) {
		t.Error("key material in the exporter's logs")
	}
	if n := strings.Count(logs.String(), `"action":"s3:GetBucketObjectLockConfiguration"`); n != 1 {
		t.Errorf("the exporter warned %d times that it cannot read the object lock configuration, want once:\n%s", n, logs.String())
	}
	rep, err := evidence.Verifier{Bucket: b}.Verify(ctx, evidence.Filter{})
	if err != nil || rep.Failed() != 0 || len(rep.Checks) != 1 {
		t.Errorf("verify: %+v, %v", rep, err)
	}
	if err := helm().Uninstall("audit-logs-exporter", namespace); err != nil {
		t.Error(err)
	}
}

// mountSecrets writes the Secret volumes the container mounts into temporary folders (as the kubelet does) and
// returns env with every value under a mount path pointed at its folder.
func mountSecrets(t *testing.T, pod corev1.PodSpec, c corev1.Container, env []string) []string {
	t.Helper()
	paths := map[string]string{}
	for _, m := range c.VolumeMounts {
		for _, v := range pod.Volumes {
			if v.Name != m.Name || v.Secret == nil {
				continue
			}
			var s corev1.Secret
			if err := cp.Client.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: v.Secret.SecretName}, &s); err != nil {
				t.Fatalf("volume %s: %v", v.Name, err)
			}
			dir := t.TempDir()
			for _, item := range v.Secret.Items {
				if err := os.WriteFile(filepath.Join(dir, item.Path), s.Data[item.Key], 0o400); err != nil {
					t.Fatal(err)
				}
			}
			paths[m.MountPath] = dir
		}
	}
	out := make([]string, len(env))
	for i, e := range env {
		for mount, dir := range paths {
			if k, v, _ := strings.Cut(e, "="); strings.HasPrefix(v, mount+"/") {
				e = k + "=" + dir + strings.TrimPrefix(v, mount)
			}
		}
		out[i] = e
	}
	return out
}
