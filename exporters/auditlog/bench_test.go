package auditlog_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"kof.dev/kof/exporters/auditlog"
	"kof.dev/kof/exporters/evidence"
	"kof.dev/kof/exporters/victoria"
	"kof.dev/kof/exporters/window"
	"kof.dev/kof/internal/testproc"
)

// benchEvents returns the number of audit events of the benchmark window: 200,000, or 2,000 with -short (make test
// runs every benchmark once, small, to prove it works).
func benchEvents() int {
	if testing.Short() {
		return 2_000
	}
	return 200_000
}

// BenchmarkExportAudit exports one hour of 200,000 audit events (PLATFORM) from a real VictoriaLogs into a real
// MinIO with the exporter binary, and reads the same LogsQL query into io.Discard in the same run. It reports the
// exporter's events/s next to the raw read's, their ratio, and the exporter's peak RSS (best of b.N runs).
func BenchmarkExportAudit(b *testing.B) {
	vl, minio := testproc.VictoriaLogs(b), testproc.MinIO(b)
	ctx := context.Background()
	h := window.Of(time.Now()).Prev().Prev()
	ingestAudit(b, vl, h)
	dir := b.TempDir()
	keyFile, _ := testproc.SigningKey(b, dir, "bench.key")
	bin := testproc.ShippedProgram(b, "audit-logs-exporter", dir) // as its image holds it
	query := auditlog.Query(auditlog.DefaultTenantField, []string{"", evidence.TenantPlatform}, h)
	logs := victoria.Logs{Endpoint: victoria.Endpoint{Base: vl.URL, HTTP: victoria.NewHTTPClient()}}
	var rawTime, expTime time.Duration
	var rawBytes, peak int64
	for i := 0; i < b.N; i++ {
		bucketName := fmt.Sprintf("bench-%d", i)
		newBucket(b, minio, bucketName, false)
		start := time.Now()
		n, err := logs.Raw(ctx, query, io.Discard)
		if err != nil {
			b.Fatal(err)
		}
		rawBytes, rawTime = n, shorter(rawTime, time.Since(start))
		cmd := exec.Command(bin)
		cmd.Env = []string{
			"AUDIT_LOGS_URL=" + vl.URL, "S3_BUCKET=" + bucketName, "S3_ENDPOINT=" + minio.URL, "S3_USE_PATH_STYLE=true",
			"S3_ACCESS_KEY=" + testproc.MinIOAccessKey, "S3_SECRET_KEY=" + testproc.MinIOSecretKey,
			"SIGNING_KEY_FILE=" + keyFile, "CATCH_UP_HOURS=1", "WINDOW_DELAY=" + window.DelayFor(h, time.Now()).String(),
		}
		var out strings.Builder
		cmd.Stderr = &out
		start = time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("exporter: %v\n%s", err, out.String())
		}
		expTime = shorter(expTime, time.Since(start))
		if !strings.Contains(out.String(), fmt.Sprintf(`"events":%d`, benchEvents())) {
			b.Fatalf("exporter did not export %d events of %s:\n%s", benchEvents(), h, out.String())
		}
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru.Maxrss<<10 > peak {
			peak = ru.Maxrss << 10
		}
	}
	exp, raw := float64(benchEvents())/expTime.Seconds(), float64(benchEvents())/rawTime.Seconds()
	b.ReportMetric(exp, "events/s")
	b.ReportMetric(raw, "raw-events/s")
	b.ReportMetric(float64(rawBytes)/rawTime.Seconds()/1e6, "raw-MB/s")
	b.ReportMetric(exp/raw, "ratio-to-raw")
	b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MiB")
}

func shorter(cur, d time.Duration) time.Duration {
	if cur == 0 || d < cur {
		return d
	}
	return cur
}

// ingestAudit writes benchEvents audit-shaped records (an audit event as _msg plus its flattened fields) through
// hour h into VictoriaLogs.
func ingestAudit(b *testing.B, vl *testproc.Server, h window.Hour) {
	b.Helper()
	pr, pw := io.Pipe()
	go func() {
		w := bufio.NewWriterSize(pw, 1<<20)
		n := benchEvents()
		step := time.Hour / time.Duration(n)
		for i := 0; i < n; i++ {
			ts := h.Start.Add(time.Duration(i) * step).Format(time.RFC3339Nano)
			msg := fmt.Sprintf(`{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"%08d-5c1e-4b8e-9f0a-2d6c8e1b7a90","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/ns-%d/configmaps/cm-%d","verb":"get","user":{"username":"system:serviceaccount:kof:kof-operator","groups":["system:serviceaccounts"]},"sourceIPs":["10.0.0.%d"],"objectRef":{"resource":"configmaps","namespace":"ns-%d","name":"cm-%d","apiVersion":"v1"},"responseStatus":{"code":200},"requestReceivedTimestamp":%q}`, i, i%50, i, i%250, i%50, i, ts)
			fmt.Fprintf(w, `{"_time":%q,"_msg":%q,"k8s.cluster.name":"mothership","log.file.name":"audit.log","verb":"get","objectRef.resource":"configmaps","objectRef.namespace":"ns-%d","user.username":"system:serviceaccount:kof:kof-operator","responseStatus.code":"200"}`+"\n", ts, msg, i%50)
		}
		pw.CloseWithError(w.Flush())
	}()
	resp, err := http.Post(vl.URL+"/insert/jsonline?_stream_fields=k8s.cluster.name", "application/stream+json", pr) //nolint:noctx // loopback
	if err != nil {
		b.Fatal(err)
	}
	_ = resp.Body.Close()
	if r, err := http.Get(vl.URL + "/internal/force_flush"); err == nil { //nolint:noctx // loopback
		_ = r.Body.Close()
	}
}
