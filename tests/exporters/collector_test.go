package exporters

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"kof.dev/kof/chartlib/collector"
	"kof.dev/kof/chartlib/render"
	"kof.dev/kof/exporters/auditlog"
	"kof.dev/kof/exporters/bucket"
	"kof.dev/kof/exporters/evidence"
	"kof.dev/kof/exporters/victoria"
	"kof.dev/kof/exporters/window"
	"kof.dev/kof/internal/proc"
	"kof.dev/kof/internal/testproc"
)

// auditPipeline is the node collector's audit log pipeline (charts/kof-collectors, templates/_collectors.tpl).
const auditPipeline = "logs/audit"

// auditCluster is one cluster of the trail: its name (k8s.cluster.name) and the tenant its VMUser route adds (""
// for the management cluster, whose collectors write with the admin VMUser: the PLATFORM stream).
type auditCluster struct{ name, tenant string }

// TestAuditTrailThroughTheCollector runs the audit path as a cluster runs it: for the management cluster and two
// tenants' child clusters, a kube-apiserver (envtest, bin/) with an audit policy writes its audit log into the file
// that the node collector of kof-collectors (rendered with chartlib, run with the real bin/otelcol, its audit
// filelog pipeline only) tails and sends to a real VictoriaLogs; then the audit-logs exporter exports the hour into a
// real MinIO as a user holding exactly the user guide's policy and `kof audit verify` (the built CLI, as that user,
// path-style addressing inferred) passes on every window, whose event counts equal the audit lines
// each apiserver wrote. The VMUser route that adds `extra_fields=tenant=<id>` in front of VictoriaLogs
// (docs/contract.md "VMUser routes") is the query of the rendered endpoint here.
func TestAuditTrailThroughTheCollector(t *testing.T) {
	otelcol := filepath.Join(root, "bin", "otelcol")
	if _, err := os.Stat(otelcol); err != nil {
		t.Fatalf("bin/otelcol: %v (run make tools)", err)
	}
	vl, minio := testproc.VictoriaLogs(t), testproc.MinIO(t)
	ctx := context.Background()
	awayFromHourEnd(t, 4*time.Minute)
	h := window.Of(time.Now())
	clusters := []auditCluster{{"mothership", ""}, {"child-acme", "acme"}, {"child-globex", "globex"}}
	want := map[string][]string{}
	for _, c := range clusters {
		col := startAuditCollector(t, otelcol, vl.URL, c)
		lines := testproc.AuditLog(t, col.file, "ns-"+c.name)
		waitForRecords(t, vl.URL, h, c, len(lines))
		col.stop()
		want[streamKey(c)] = lines
	}
	if window.Of(time.Now()) != h {
		t.Fatalf("the shipping crossed the end of hour %s", h)
	}

	b, err := bucket.Open(bucket.Config{Endpoint: minio.URL, Bucket: "kof-audit-trail",
		AccessKey: testproc.MinIOAccessKey, SecretKey: testproc.MinIOSecretKey})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Create(ctx, false); err != nil {
		t.Fatal(err)
	}
	keyFile, _ := testproc.SigningKey(t, t.TempDir(), "signing.key")
	user := testproc.ExporterUser(t, minio, testproc.AuditLogsGuide, "kof-audit-trail")
	env := map[string]string{
		auditlog.EnvLogsURL: vl.URL, auditlog.EnvS3Bucket: "kof-audit-trail", auditlog.EnvS3Endpoint: minio.URL,
		auditlog.EnvS3AccessKey: user.AccessKey, auditlog.EnvS3SecretKey: user.SecretKey, auditlog.EnvSigningKeyFile: keyFile,
	}
	cfg, err := auditlog.FromEnv(func(k string) string { return env[k] }, os.ReadFile)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	e, err := auditlog.New(cfg, auditlog.Options{Log: slog.New(slog.NewJSONHandler(&logs, nil)), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if res := e.RunWindows(ctx, []window.Hour{h}); len(res.Failed) > 0 || res.Exported != len(clusters) {
		t.Fatalf("export of %s: exported %d, failed %v; want %d windows\n%s", h, res.Exported, res.Failed, len(clusters), logs.String())
	}

	kof := testproc.Program(t, "./tools/kof", bins)
	verify := exec.Command(kof, "audit", "verify", "--s3-endpoint", minio.URL, "--bucket", "kof-audit-trail")
	verify.Env = append(os.Environ(), "S3_ACCESS_KEY="+user.AccessKey, "S3_SECRET_KEY="+user.SecretKey)
	out, err := verify.CombinedOutput()
	if err != nil {
		t.Fatalf("kof audit verify: %v\n%s", err, out)
	}
	rows := verifiedWindows(t, string(out))
	for key, lines := range want {
		if got, ok := rows[key+" "+h.String()]; !ok || got != strconv.Itoa(len(lines))+" OK" {
			t.Errorf("kof audit verify, %s %s: %q; want %d events OK\n%s", key, h, got, len(lines), out)
		}
		stream, tenant, _ := strings.Cut(key, " ")
		if d := cmp.Diff(sorted(lines), exportedMessages(t, b, evidence.Folder(stream, tenant, h)+evidence.DataName)); d != "" {
			t.Errorf("%s %s: the exported events' _msg differ from the apiserver's audit lines (-want +got):\n%s", key, h, d)
		}
	}
	if len(rows) != len(want) {
		t.Errorf("kof audit verify lists %d windows, want %d:\n%s", len(rows), len(want), out)
	}
}

// exportedMessages returns the sorted `_msg` fields (the audit lines as the collector read them) of the events in the
// gzip NDJSON object key.
func exportedMessages(t *testing.T, b *bucket.Bucket, key string) []string {
	t.Helper()
	data, _, err := b.Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	var out []string
	dec := json.NewDecoder(zr)
	for dec.More() {
		var ev map[string]string
		if err := dec.Decode(&ev); err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		out = append(out, ev["_msg"])
	}
	return sorted(out)
}

// sorted returns a sorted copy of list.
func sorted(list []string) []string {
	out := slices.Clone(list)
	slices.Sort(out)
	return out
}

// streamKey returns `<stream> <tenant>` of cluster c's audit events.
func streamKey(c auditCluster) string {
	if c.tenant == "" {
		return evidence.StreamPlatform + " " + evidence.TenantPlatform
	}
	return evidence.StreamTenant + " " + c.tenant
}

// verifiedWindows reads the table of `kof audit verify` into `<stream> <tenant> <window>` → `<events> <result>`.
func verifiedWindows(t *testing.T, out string) map[string]string {
	t.Helper()
	rows := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 5 || f[0] == "STREAM" {
			continue
		}
		rows[strings.Join(f[:3], " ")] = strings.Join(f[3:], " ")
	}
	return rows
}

// awayFromHourEnd waits for the next hour when less than margin is left of this one, so that the whole shipping
// falls in one window.
func awayFromHourEnd(t *testing.T, margin time.Duration) {
	t.Helper()
	now := time.Now()
	if left := window.Of(now).End.Sub(now); left < margin {
		t.Logf("waiting %s for the next hour", left)
		time.Sleep(left + time.Second)
	}
}

// auditCollector is a running node collector.
type auditCollector struct {
	cmd  *exec.Cmd
	log  *syncBuffer
	file string        // the audit log file its filelog/audit receiver tails
	done chan struct{} // closed when the process has ended
}

// syncBuffer is a bytes.Buffer that the process's output and the test may use at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startAuditCollector renders kof-collectors for cluster c with the audit endpoint of VictoriaLogs at vlURL, keeps
// the node collector's audit pipeline, lays its mounts out under a scratch node folder (collector.OnNode), starts
// bin/otelcol with it and returns once the receiver watches the audit log file.
func startAuditCollector(t *testing.T, otelcol, vlURL string, c auditCluster) *auditCollector {
	t.Helper()
	endpoint := vlURL + "/insert/opentelemetry/v1/logs"
	if c.tenant != "" {
		endpoint += "?" + url.Values{"extra_fields": {"tenant=" + c.tenant}}.Encode()
	}
	chrt, err := render.Load(filepath.Join(root, "charts", collector.CollectorsChart))
	if err != nil {
		t.Fatal(err)
	}
	set, err := render.Chart(context.Background(), render.Options{Chart: chrt, ReleaseName: collector.CollectorsChart, Namespace: namespace,
		Values: map[string]any{
			"kof":                      map[string]any{"basicAuth": false, "auditLogs": map[string]any{"endpoint": endpoint}},
			"opentelemetry-kube-stack": map[string]any{"clusterName": c.name},
		}})
	if err != nil {
		t.Fatalf("render kof-collectors: %v", err)
	}
	var node *unstructured.Unstructured
	for _, o := range set.Objects() {
		if mode, _, _ := unstructured.NestedString(o.Object, "spec", "mode"); o.GetKind() == collector.CollectorKind && mode == "daemonset" {
			node = o
		}
	}
	if node == nil {
		t.Fatal("kof-collectors renders no node collector")
	}
	cfgs, err := collector.FromObjects(c.name, []*unstructured.Unstructured{node})
	if err != nil {
		t.Fatal(err)
	}
	nodeRoot := filepath.Join(t.TempDir(), "node")
	body, err := collector.OnNode(cfgs[0].Body, cfgs[0].Mounts, cfgs[0].Env, nodeRoot)
	if err != nil {
		t.Fatal(err)
	}
	file := auditOnly(t, body)
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	// A first event, there before the collector starts: the receiver watches only files with content, from their
	// end (start_at: end, as rendered), so this one is not shipped.
	seed := `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"seed","stage":"ResponseComplete"}`
	if err := os.WriteFile(file, []byte(seed+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	data, err := yaml.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	cfgFile := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfgFile, data, 0o600); err != nil {
		t.Fatal(err)
	}
	col := &auditCollector{log: &syncBuffer{}, file: file, done: make(chan struct{})}
	col.cmd = exec.Command(otelcol, "--config=file:"+cfgFile)
	for k, v := range cfgs[0].Env {
		col.cmd.Env = append(col.cmd.Env, k+"="+v)
	}
	col.cmd.Stdout, col.cmd.Stderr = col.log, col.log
	proc.DieWithParent(col.cmd)
	if err := col.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = col.cmd.Wait(); close(col.done) }()
	t.Cleanup(func() { col.stop() })
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(col.log.String(), "Started watching file") {
		select {
		case <-col.done:
			t.Fatalf("the collector of %s ended before it watched %s:\n%s", c.name, file, col.log.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the collector of %s does not watch %s:\n%s", c.name, file, col.log.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	return col
}

// stop ends the collector (once).
func (c *auditCollector) stop() {
	select {
	case <-c.done:
		return
	default:
	}
	_ = c.cmd.Process.Signal(os.Interrupt)
	select {
	case <-c.done:
	case <-time.After(20 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
}

// auditOnly reduces the node collector config body to its audit pipeline: the other pipelines, and the receivers,
// processors and exporters only they use, are removed; the health check and the collector's own metrics listen on
// loopback ports the kernel picks (port 0). It returns the first file the filelog/audit receiver includes.
func auditOnly(t *testing.T, body map[string]any) string {
	t.Helper()
	service := body["service"].(map[string]any)
	pipelines := service["pipelines"].(map[string]any)
	audit, ok := pipelines[auditPipeline].(map[string]any)
	if !ok {
		t.Fatalf("the node collector has no %s pipeline", auditPipeline)
	}
	service["pipelines"] = map[string]any{auditPipeline: audit}
	for _, kind := range []string{"receivers", "processors", "exporters"} {
		used := map[string]bool{}
		for _, id := range audit[kind].([]any) {
			used[id.(string)] = true
		}
		m, _ := body[kind].(map[string]any)
		for id := range m {
			if !used[id] {
				delete(m, id)
			}
		}
	}
	// Port 0: the kernel picks a free port when the collector binds it. A port picked free beforehand can be taken
	// by another test package before the collector starts (a CI run failed with "address already in use").
	if ext, ok := body["extensions"].(map[string]any); ok {
		if hc, ok := ext["health_check"].(map[string]any); ok {
			hc["endpoint"] = "127.0.0.1:0"
		}
	}
	service["telemetry"] = map[string]any{"metrics": map[string]any{"level": "basic", "readers": []any{
		map[string]any{"pull": map[string]any{"exporter": map[string]any{"prometheus": map[string]any{"host": "127.0.0.1", "port": 0}}}}}}}
	recv := body["receivers"].(map[string]any)["filelog/audit"].(map[string]any)
	include, _ := recv["include"].([]any)
	if len(include) == 0 {
		t.Fatal("filelog/audit includes no file")
	}
	return include[0].(string)
}

// waitForRecords waits until VictoriaLogs holds n records of cluster c (its k8s.cluster.name and tenant) in h, and
// fails when it holds more.
func waitForRecords(t *testing.T, vlURL string, h window.Hour, c auditCluster, n int) {
	t.Helper()
	logs := victoria.Logs{Endpoint: victoria.Endpoint{Base: vlURL, HTTP: victoria.NewHTTPClient()}}
	query := victoria.TimeFilter(h) + " " + victoria.Exact("k8s.cluster.name", c.name) + " " + victoria.Exact("tenant", c.tenant)
	got := 0
	var lastErr error // a failed query may succeed on the next try (a busy server)
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		if r, err := http.Get(vlURL + "/internal/force_flush"); err == nil { //nolint:noctx // loopback
			_ = r.Body.Close()
		}
		got = 0
		if lastErr = logs.Query(context.Background(), query, func(*victoria.Record) error { got++; return nil }); lastErr != nil {
			continue
		}
		if got >= n {
			break
		}
	}
	if got != n || lastErr != nil {
		t.Fatalf("VictoriaLogs holds %d audit records of %s in %s, want the %d lines the apiserver wrote (last query "+
			"error: %v)", got, c.name, h, n, lastErr)
	}
}
