package auditlog_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"

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

// ship sends the audit lines to VictoriaLogs as KOF's node collector does (charts/kof-collectors, pipeline
// logs/audit): filelog/audit with a json_parser keeps the raw line as the body and the parsed event as attributes
// (plus log.file.name), resource/k8sclustername adds k8s.cluster.name, otlphttp posts OTLP protobuf to
// /insert/opentelemetry/v1/logs, and the cluster's VMUser route adds `extra_fields=tenant=<id>` for a child
// (docs/contract.md "VMUser routes"). It places the lines in three past hours, which the real collector (it stamps a
// record with the time it reads the line) cannot do; tests/exporters runs the real collector on the current hour. It
// returns the expected event count per stream, tenant and window.
func ship(t *testing.T, vl *testproc.Server, lines []string) map[seriesKey]int {
	t.Helper()
	want := map[seriesKey]int{}
	byTenant := map[string]plog.Logs{}
	for i, line := range lines {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
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
		rec.Body().SetStr(line)
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

// config returns an exporter configuration for the servers, bucket and key file, as a new MinIO user holding
// exactly the user guide's policy on the bucket (testproc.ExporterUser), with path-style addressing inferred from
// the endpoint (S3_USE_PATH_STYLE unset); extra is set over it.
func config(t testing.TB, vlURL string, minio *testproc.Server, bucketName, keyFile string, extra map[string]string) auditlog.Config {
	t.Helper()
	user := testproc.ExporterUser(t, minio, testproc.AuditLogsGuide, bucketName)
	env := map[string]string{
		auditlog.EnvLogsURL: vlURL, auditlog.EnvS3Bucket: bucketName, auditlog.EnvS3Endpoint: minio.URL,
		auditlog.EnvS3AccessKey: user.AccessKey, auditlog.EnvS3SecretKey: user.SecretKey, auditlog.EnvSigningKeyFile: keyFile,
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

// newBucket creates a bucket (with object lock when lock is set) and returns it opened as the root user, as an
// administrator (and a tamperer) would.
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
