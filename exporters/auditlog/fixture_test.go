package auditlog_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"kof.dev/kof/exporters/auditlog"
	"kof.dev/kof/exporters/bucket"
	"kof.dev/kof/exporters/evidence"
	"kof.dev/kof/exporters/window"
	"kof.dev/kof/internal/testproc"
)

// hours are the past windows the shipped audit lines are placed in (the node collector stamps a record with the
// time it read the line; the test reads them in three past hours so that the windows are closed).
var hours = []window.Hour{
	window.Of(time.Date(2026, 6, 29, 15, 0, 0, 0, time.UTC)),
	window.Of(time.Date(2026, 6, 29, 16, 0, 0, 0, time.UTC)),
	window.Of(time.Date(2026, 6, 29, 17, 0, 0, 0, time.UTC)),
}

// tenantOf maps an audit event to the tenant whose cluster's collector ships it: events about namespace acme or
// globex come from those tenants' child clusters, everything else from the management cluster (PLATFORM: its
// collectors write with the admin VMUser, which adds no tenant field).
var tenantOf = map[string]string{"acme": "acme", "globex": "globex"}

// clusterOf is the cluster name each tenant's collector adds as k8s.cluster.name.
var clusterOf = map[string]string{"acme": "child-acme", "globex": "child-globex", "": "mothership"}

// seriesKey names one stream, tenant and window.
type seriesKey struct{ stream, tenant, hour string }

// auditLines starts a kube-apiserver (envtest, bin/) with an audit policy and --audit-log-path, makes API calls
// in three namespaces, stops it and returns the audit log lines.
func auditLines(t *testing.T) [][]byte {
	t.Helper()
	bins, err := testproc.BinDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	policy := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(policy, []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n  - level: Metadata\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "audit.log")
	env := &envtest.Environment{}
	testproc.Envtest(t, env, bins)
	args := env.ControlPlane.GetAPIServer().Configure()
	args.Set("audit-policy-file", policy)
	args.Set("audit-log-path", logPath)
	args.Set("audit-log-mode", "blocking")
	cfg, err := env.Start()
	if err != nil {
		_ = env.Stop()
		t.Fatalf("start kube-apiserver with auditing: %v", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, ns := range []string{"acme", "globex", "kof"} {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 5; i++ {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}, Data: map[string]string{"k": "v"}}
			if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, cm.Name, metav1.GetOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, "cm-0", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := env.Stop(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		lines = append(lines, append([]byte(nil), sc.Bytes()...))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(lines) < 50 {
		t.Fatalf("audit log has %d lines; want the calls made", len(lines))
	}
	return lines
}

// ship sends the audit lines to VictoriaLogs as KOF's node collector does (charts/kof-collectors, pipeline
// logs/audit): filelog/audit with a json_parser keeps the raw line as the body and the parsed event as attributes
// (plus log.file.name), resource/k8sclustername adds k8s.cluster.name, otlphttp posts OTLP protobuf to
// /insert/opentelemetry/v1/logs, and the cluster's VMUser route adds `extra_fields=tenant=<id>` for a child
// (docs/contract.md "VMUser routes"). It places the lines in three past hours, which the real collector (it stamps a
// record with the time it reads the line) cannot do; tests/exporters runs the real collector on the current hour. It
// returns the expected event count per stream, tenant and window.
func ship(t *testing.T, vl *testproc.Server, lines [][]byte) map[seriesKey]int {
	t.Helper()
	want := map[seriesKey]int{}
	byTenant := map[string]plog.Logs{}
	for i, line := range lines {
		var ev map[string]any
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Fatalf("audit line %d: %v", i, err)
		}
		ref, _ := ev["objectRef"].(map[string]any)
		ns, _ := ref["namespace"].(string)
		tenant := tenantOf[ns]
		h := hours[i%len(hours)]
		read := h.Start.Add(time.Duration(i/len(hours)) * 7 * time.Second) // the first line of each hour lies exactly on its boundary
		ld, ok := byTenant[tenant]
		if !ok {
			ld = plog.NewLogs()
			rl := ld.ResourceLogs().AppendEmpty()
			rl.Resource().Attributes().PutStr("k8s.cluster.name", clusterOf[tenant])
			rl.ScopeLogs().AppendEmpty()
			byTenant[tenant] = ld
		}
		rec := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().AppendEmpty()
		rec.Body().SetStr(string(line))
		rec.SetObservedTimestamp(pcommon.NewTimestampFromTime(read))
		if err := rec.Attributes().FromRaw(ev); err != nil {
			t.Fatal(err)
		}
		rec.Attributes().PutStr("log.file.name", "audit.log")
		stream, st := evidence.StreamTenant, tenant
		if tenant == "" {
			stream, st = evidence.StreamPlatform, evidence.TenantPlatform
		}
		want[seriesKey{stream, st, h.String()}]++
	}
	for tenant, ld := range byTenant {
		body, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
		if err != nil {
			t.Fatal(err)
		}
		u := vl.URL + "/insert/opentelemetry/v1/logs"
		if tenant != "" {
			u += "?" + url.Values{"extra_fields": {"tenant=" + tenant}}.Encode()
		}
		resp, err := http.Post(u, "application/x-protobuf", bytes.NewReader(body)) //nolint:noctx // loopback
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			t.Fatalf("POST %s: HTTP %d", u, resp.StatusCode)
		}
	}
	if r, err := http.Get(vl.URL + "/internal/force_flush"); err == nil { //nolint:noctx // loopback
		_ = r.Body.Close()
	}
	return want
}

// signingKey writes a new Ed25519 private key (PKCS #8 PEM) into dir and returns its path and public key PEM.
func signingKey(t testing.TB, dir, name string) (string, []byte) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	pubDER, _ := x509.MarshalPKIXPublicKey(pub)
	return path, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
}

// config returns an exporter configuration for the servers, bucket and key file.
func config(t testing.TB, vlURL string, minio *testproc.Server, bucketName, keyFile string, extra map[string]string) auditlog.Config {
	t.Helper()
	env := map[string]string{
		auditlog.EnvLogsURL: vlURL, auditlog.EnvS3Bucket: bucketName, auditlog.EnvS3Endpoint: minio.URL,
		auditlog.EnvS3UsePathStyle: "true", auditlog.EnvS3AccessKey: testproc.MinIOAccessKey,
		auditlog.EnvS3SecretKey: testproc.MinIOSecretKey, auditlog.EnvSigningKeyFile: keyFile,
	}
	for k, v := range extra {
		env[k] = v
	}
	cfg, err := auditlog.FromEnv(func(k string) string { return env[k] }, os.ReadFile)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// newBucket creates a bucket (with object lock when lock is set).
func newBucket(t testing.TB, minio *testproc.Server, name string, lock bool) *bucket.Bucket {
	t.Helper()
	b, err := bucket.Open(bucket.Config{Endpoint: minio.URL, Bucket: name, UsePathStyle: true,
		AccessKey: testproc.MinIOAccessKey, SecretKey: testproc.MinIOSecretKey})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Create(context.Background(), lock); err != nil {
		t.Fatal(err)
	}
	return b
}
